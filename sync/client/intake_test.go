package client_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/internal/sqldb"
)

// intake stands in for the desktop's trigger intake, in its own SQLite
// file as the real one is in workspace.db: a call queues one "run",
// de-duplicated by webhook-id or Idempotency-Key as the real intake does;
// unknown token hashes get 404. Every Deliver that returned a run is logged
// in calls, so that a test counts both.
type intake struct {
	db    *sql.DB
	known map[string]bool // token hashes; nil takes all
	fail  atomic.Int32    // answer 503 to this many calls first
}

var intakeSchema = fstest.MapFS{"0001_runs.sql": {Data: []byte(`
	CREATE TABLE runs (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, delivery TEXT NOT NULL,
		method TEXT NOT NULL, query TEXT NOT NULL, header TEXT NOT NULL, body BLOB NOT NULL);
	CREATE TABLE calls (n INTEGER PRIMARY KEY, delivery TEXT NOT NULL, run TEXT NOT NULL);`)}}

func openIntake(t testing.TB, dir string) *intake {
	t.Helper()
	db, err := sqldb.OpenSQLite(context.Background(), filepath.Join(dir, "runs.db"), intakeSchema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &intake{db: db}
}

func (in *intake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hash := strings.TrimPrefix(r.URL.Path, "/")
	if in.known != nil && !in.known[hash] {
		http.Error(w, `{"error":"no trigger at this URL"}`, http.StatusNotFound)
		return
	}
	if in.fail.Add(-1) >= 0 {
		http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
		return
	}
	key := r.Header.Get("webhook-id")
	if key == "" {
		key = r.Header.Get("Idempotency-Key")
	}
	body, _ := io.ReadAll(r.Body)
	header, _ := json.Marshal(r.Header)
	var id int64
	err := in.db.QueryRowContext(r.Context(), `INSERT INTO runs (key, delivery, method, query, header, body) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET key = excluded.key RETURNING id`,
		key, r.Header.Get("Rerun-Relay-Delivery"), r.Method, r.URL.RawQuery, string(header), body).Scan(&id)
	if err != nil {
		http.Error(w, `{"error":"`+err.Error()+`"}`, http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	fmt.Fprintf(w, `{"run_id":"run_%d"}`, id)
}

// deliver is the Deliver function the app would wire, on this intake,
// logging each call that queued a run.
func (in *intake) deliver() func(context.Context, client.Delivery) (string, error) {
	next := client.HandlerDeliver(in, func(d client.Delivery) string { return "/" + d.TokenHash })
	return func(ctx context.Context, d client.Delivery) (string, error) {
		run, err := next(ctx, d)
		if err == nil {
			if _, err := in.db.ExecContext(ctx, `INSERT INTO calls (delivery, run) VALUES (?, ?)`, d.ID, run); err != nil {
				return "", errors.Join(errors.New("log the call"), err)
			}
		}
		return run, err
	}
}

// counts are what the intake holds.
type counts struct {
	Runs, Calls, CalledDeliveries int // runs queued; Deliver calls that queued one; distinct deliveries among them
}

func (in *intake) counts(t testing.TB) counts {
	t.Helper()
	var c counts
	err := in.db.QueryRow(`SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM calls), (SELECT count(DISTINCT delivery) FROM calls)`).
		Scan(&c.Runs, &c.Calls, &c.CalledDeliveries)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
