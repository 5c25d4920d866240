// Command hookbench is build/bench.sh's helper for the webhook intake row:
// the two ceilings it measures Rerun against on this computer, in the same
// run, and the check that every 2xx became a run.
//
//	hookbench bare                  a bare net/http server on 127.0.0.1 answering every request 202
//	hookbench commits [-d 3s] DIR   single-row SQLite transactions, synchronous=FULL, in a database under DIR
//	hookbench count DB              the runs and accepted deliveries of webhook triggers in workspace.db DB
//
// bare prints its URL on the first line and serves until killed, so wrk
// loads it as it loads a trigger. commits uses the workspace's driver and
// settings (modernc.org/sqlite, WAL, synchronous=FULL) and prints
// "N commits/s". count opens DB read-only (the server stopped) and prints
// "RUNS DELIVERIES".
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "bare":
		err = bare()
	case "commits":
		fs := flag.NewFlagSet("commits", flag.ExitOnError)
		d := fs.Duration("d", 3*time.Second, "how long to commit")
		fs.Parse(os.Args[2:])
		if fs.NArg() != 1 {
			usage()
		}
		err = commits(fs.Arg(0), *d)
	case "count":
		if len(os.Args) != 3 {
			usage()
		}
		err = count(os.Args[2])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hookbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: hookbench bare | hookbench commits [-d DURATION] DIR | hookbench count DB")
	os.Exit(2)
}

// bare answers every request 202 with a body the size of the intake's.
func bare() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Printf("http://%s/\n", ln.Addr())
	body := []byte(`{"run_id":"run_aaaaaaaaaaaaaaaa","delivery_id":"dlv_aaaaaaaaaaaaaaaa"}` + "\n")
	return http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusAccepted)
		w.Write(body)
	}))
}

// commits runs one-row INSERT transactions back to back for d.
func commits(dir string, d time.Duration) error {
	tmp, err := os.MkdirTemp(dir, "commits")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tmp, "commits.db")+"?"+q.Encode())
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return err
	}
	n := 0
	start := time.Now()
	for time.Since(start) < d {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO t (v) VALUES (?)`, "a delivery's worth of text"); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		n++
	}
	fmt.Printf("%.0f commits/s\n", float64(n)/time.Since(start).Seconds())
	return nil
}

// count reads how many runs webhook triggers queued and how many of their
// deliveries were accepted.
func count(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	var runs, deliveries int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE source = 'trigger'`).Scan(&runs); err != nil {
		return fmt.Errorf("count runs in %s: %w", path, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM trigger_deliveries WHERE outcome = 'accepted' AND run_id != ''`).Scan(&deliveries); err != nil {
		return fmt.Errorf("count deliveries in %s: %w", path, err)
	}
	fmt.Println(runs, deliveries)
	return nil
}
