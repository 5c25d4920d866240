package store_test

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func TestMigrateFromEmptyAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "workspace.db")
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	v, err := db.Version(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v < 1 {
		t.Fatalf("version after migrating = %d, want >= 1", v)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Main', 0, 'now')`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer db.Close()
	// Numbers may skip (a number is taken by work landing in another
	// order), so count the files, not the highest number.
	files, _ := fs.Glob(store.WorkspaceMigrations(), "*.sql")
	var applied int
	db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&applied)
	if applied != len(files) {
		t.Errorf("migrations recorded after reopen = %d, want %d (each applied once)", applied, len(files))
	}
	var name string
	if err := db.QueryRowContext(ctx, `SELECT name FROM boxes WHERE id = 'bx_1'`).Scan(&name); err != nil || name != "Main" {
		t.Errorf("box after reopen = %q, %v; want Main", name, err)
	}
}

func TestPragmasApplyToEveryConnection(t *testing.T) {
	db := storetest.Open(t)
	db.SetMaxOpenConns(4)
	ctx := context.Background()
	conns := make([]*sql.Conn, 4)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		var mode string
		var fk, busy, sync, temp int
		c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode)
		c.QueryRowContext(ctx, `PRAGMA temp_store`).Scan(&temp)
		c.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk)
		c.QueryRowContext(ctx, `PRAGMA busy_timeout`).Scan(&busy)
		c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync)
		if mode != "wal" || fk != 1 || busy < 5000 || sync != 2 || temp != 2 {
			t.Errorf("conn %d: journal_mode=%s foreign_keys=%d busy_timeout=%d synchronous=%d temp_store=%d; want wal 1 >=5000 2 2",
				i, mode, fk, busy, sync, temp)
		}
	}
}

func TestBadMigrationLeavesDatabaseUsable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	good := fstest.MapFS{"0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)}}
	db, err := store.Open(ctx, path, good)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`INSERT INTO a VALUES (42)`)
	db.Close()

	bad := fstest.MapFS{
		"0001_a.sql": good["0001_a.sql"],
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (y INTEGER); THIS IS NOT SQL;`)},
	}
	if _, err := store.Open(ctx, path, bad); err == nil {
		t.Fatal("opening with a broken migration succeeded, want an error")
	}
	db, err = store.Open(ctx, path, good)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var x int
	if err := db.QueryRow(`SELECT x FROM a`).Scan(&x); err != nil || x != 42 {
		t.Errorf("row after failed migration = %d, %v; want 42", x, err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'b'`).Scan(&n)
	if n != 0 {
		t.Error("table b exists: the failed migration was half applied")
	}
}

// A new database takes all its migrations in one commit (one fsync, not
// one for each), and an up-to-date one takes none at all.
func TestMigrationsCommitOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "workspace.db")
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Commits(); n != 1 {
		t.Errorf("a new database took %d commits to migrate, want 1", n)
	}
	db.Close()
	db, err = store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := db.Commits(); n != 0 {
		t.Errorf("an up-to-date database took %d commits to open, want 0", n)
	}
}

// An update whose second migration fails applies neither: the database
// stays as the last version left it, and opening it with that version's
// migrations works.
func TestFailedUpdateAppliesNoneOfItsMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	v1 := fstest.MapFS{"0001_a.sql": {Data: []byte(`CREATE TABLE a (x INTEGER);`)}}
	db, err := store.Open(ctx, path, v1)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	v2 := fstest.MapFS{
		"0001_a.sql": v1["0001_a.sql"],
		"0002_b.sql": {Data: []byte(`CREATE TABLE b (y INTEGER);`)},
		"0003_c.sql": {Data: []byte(`CREATE TABLE c (z INTEGER); ALTER TABLE nowhere ADD COLUMN w;`)},
	}
	_, err = store.Open(ctx, path, v2)
	if err == nil || !strings.Contains(err.Error(), "0003_c.sql") {
		t.Fatalf("opening with a failing migration: %v; want an error naming 0003_c.sql", err)
	}
	db, err = store.Open(ctx, path, v1)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables []string
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('b', 'c') ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	if len(tables) != 0 {
		t.Errorf("tables %v exist: the failed update was half applied", tables)
	}
	if v, err := db.Version(ctx); err != nil || v != 1 {
		t.Errorf("version after the failed update = %d, %v; want 1", v, err)
	}
}

func TestMigrationNames(t *testing.T) {
	for name, fsys := range map[string]fstest.MapFS{
		"no number":      {"init.sql": {Data: []byte(`SELECT 1;`)}},
		"duplicate":      {"0001_a.sql": {Data: []byte(`SELECT 1;`)}, "0001_b.sql": {Data: []byte(`SELECT 1;`)}},
		"zero is not ok": {"0000_a.sql": {Data: []byte(`SELECT 1;`)}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "x.db"), fsys); err == nil {
				t.Error("got no error, want one naming the bad migration file")
			}
		})
	}
}

// Writers from many goroutines must queue on the write lock, never fail with
// SQLITE_BUSY: this is what _txlock=immediate and busy_timeout buy.
func TestConcurrentWriters(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0)`); err != nil {
		t.Fatal(err)
	}
	const workers, writes = 32, 200
	var wg sync.WaitGroup
	errs := make(chan error, workers*writes)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < writes; i++ {
				// read-then-write: the pattern that fails with deferred transactions
				errs <- db.Tx(ctx, func(tx *sql.Tx) error {
					var n int
					if err := tx.QueryRowContext(ctx, `SELECT n FROM counter WHERE id = 1`).Scan(&n); err != nil {
						return err
					}
					_, err := tx.ExecContext(ctx, `UPDATE counter SET n = ? WHERE id = 1`, n+1)
					return err
				})
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			if failed == 0 {
				t.Errorf("first failure: %v", err)
			}
			failed++
		}
	}
	var n int
	db.QueryRowContext(ctx, `SELECT n FROM counter`).Scan(&n)
	if failed != 0 || n != workers*writes {
		t.Errorf("failed writes = %d, counter = %d; want 0 and %d", failed, n, workers*writes)
	}
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := store.NewID("ag")
		if seen[id] || len(id) != 3+16 || id[:3] != "ag_" {
			t.Fatalf("id %q: duplicate or malformed (want ag_ + 16 chars)", id)
		}
		seen[id] = true
	}
}

// TestQueryPrepared: a prepared query answers like Query, sees the rows
// written after it was prepared, and the database still closes cleanly.
func TestQueryPrepared(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE t (n INTEGER)`); err != nil {
		t.Fatal(err)
	}
	scan := func(row store.Scanner) (n int, err error) { return n, row.Scan(&n) }
	const q = `SELECT n FROM t WHERE n > ? ORDER BY n`
	for want := 1; want <= 3; want++ {
		if _, err := db.Exec(`INSERT INTO t VALUES (?)`, want); err != nil {
			t.Fatal(err)
		}
		got, err := store.QueryPrepared(ctx, db, scan, q, 0)
		if err != nil || len(got) != want || got[want-1] != want {
			t.Fatalf("after %d inserts: %v, %v; want 1…%d", want, got, err, want)
		}
		plain, _ := store.Query(ctx, db, scan, q, 0)
		if !slices.Equal(got, plain) {
			t.Fatalf("prepared %v, unprepared %v", got, plain)
		}
	}
	if got, _ := store.QueryPrepared(ctx, db, scan, q, 5); got == nil || len(got) != 0 {
		t.Fatalf("no rows: %#v, want an empty, non-nil slice", got)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close with prepared statements: %v", err)
	}
}

func TestNewSortedID(t *testing.T) {
	prev := ""
	for i := 0; i < 1000; i++ {
		id := store.NewSortedID("run")
		if len(id) != 4+16 || id[:4] != "run_" {
			t.Fatalf("id %q: malformed (want run_ + 16 chars)", id)
		}
		if id <= prev {
			t.Fatalf("id %q after %q: not increasing", id, prev)
		}
		prev = id
	}
}

// TestIdleConnectionsClose opens several connections at once (as a burst of
// webhook calls does), releases them, and waits for the pool to close every
// one: each holds its own page cache, which an idle app should not keep.
// The database still answers afterwards, on a new connection.
func TestIdleConnectionsClose(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t)
	ctx := context.Background()
	conns := make([]*sql.Conn, 6)
	for i := range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	for _, c := range conns {
		c.Close()
	}
	if n := db.Stats().OpenConnections; n < len(conns) {
		t.Fatalf("%d connections open after the burst, want at least %d", n, len(conns))
	}
	waittest.Until(t, "every idle connection closed", func() bool { return db.Stats().OpenConnections == 0 })
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n == 0 {
		t.Errorf("after the pool emptied: %d migrations, %v", n, err)
	}
}
