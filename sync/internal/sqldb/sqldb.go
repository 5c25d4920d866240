// Package sqldb opens the SQL databases of sync/ (the relay's store, the
// client's seen-set) and applies their embedded, numbered migrations. It is
// sync's own so that the relay imports nothing from backend/.
package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// OpenSQLite opens (creating if needed) the SQLite database at path and
// applies migrations (files NNNN_name.sql).
func OpenSQLite(ctx context.Context, path string, migrations fs.FS) (*sql.DB, error) {
	// modernc applies each _pragma to every new pooled connection; a plain
	// db.Exec("PRAGMA …") would set only one of them.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")   // readers never block the writer
	q.Add("_pragma", "synchronous(FULL)")   // a 202 or an ack survives power loss
	q.Add("_pragma", "foreign_keys(1)")     // ON DELETE CASCADE from workspaces
	q.Add("_pragma", "busy_timeout(30000)") // wait for a writer instead of SQLITE_BUSY
	// BEGIN IMMEDIATE takes the write lock up front: deferred transactions
	// that read then write fail with SQLITE_BUSY under concurrency.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	db.SetMaxIdleConns(8) // reopening a connection (file, pragmas) costs more than a query
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := Migrate(ctx, db, migrations, SQLite); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	return db, nil
}

// Dialect is what differs between the SQL databases sync/ runs on.
type Dialect struct {
	// Lock is run first in each migration's transaction so that processes
	// starting together apply a migration once.
	Lock     string
	numbered bool // bind parameters are $1, $2… instead of ?
}

// The dialects.
var (
	SQLite = Dialect{} // BEGIN IMMEDIATE already serialises writers
	// 491327873401 is 0x72656c6179, "relay": any constant the relay
	// processes share would do.
	Postgres = Dialect{Lock: "SELECT pg_advisory_xact_lock(491327873401)", numbered: true}
)

// Rebind rewrites the ? bind parameters of query for d. Queries of sync/
// never hold a literal "?".
func (d Dialect) Rebind(query string) string {
	if !d.numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Migrate applies, in order, each migration of migrations not yet recorded
// in schema_migrations, each in its own transaction with its record.
func Migrate(ctx context.Context, db *sql.DB, migrations fs.FS, d Dialect) error {
	list, err := read(migrations)
	if err != nil {
		return err
	}
	for _, m := range list {
		if err := apply(ctx, db, m, d); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m migration, d Dialect) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if d.Lock != "" {
		if _, err := tx.ExecContext(ctx, d.Lock); err != nil {
			return err
		}
	}
	// Inside the lock: CREATE TABLE IF NOT EXISTS races with itself across
	// PostgreSQL processes.
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL
	)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	var n int
	if err := tx.QueryRowContext(ctx, d.Rebind(`SELECT count(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.body); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, d.Rebind(`INSERT INTO schema_migrations (version, name) VALUES (?, ?)`), m.version, m.name); err != nil {
		return err
	}
	return tx.Commit()
}

type migration struct {
	version    int
	name, body string
}

func read(migrations fs.FS) ([]migration, error) {
	entries, err := fs.ReadDir(migrations, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %q: name must be NNNN_description.sql", name)
		}
		body, err := fs.ReadFile(migrations, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		out = append(out, migration{v, name, string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %q and %q share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}
