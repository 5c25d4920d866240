// Package store opens the workspace's SQLite databases and keeps their schema.
//
// It owns the connection settings (pragmas), the embedded numbered migrations of
// workspace.db (sql/NNNN_name.sql, never edited once released) and the
// transaction helper every writer uses.
package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/base32"
	"fmt"
	"io/fs"
	"math/bits"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open SQLite database. It is safe for concurrent use.
type DB struct {
	*sql.DB
	path string
	// writer queues this process's transactions in Go before SQLite's lock:
	// SQLite's busy handler polls and is unfair, so under heavy contention a
	// writer could wait out busy_timeout while others keep winning. Go's
	// mutex hands over in order once waiters starve.
	writer  sync.Mutex
	commits atomic.Int64
	// prepared holds the statements of Prepared by query text.
	prepared sync.Map // string → *prepared
}

//go:embed sql/*.sql
var workspaceMigrations embed.FS

// WorkspaceMigrations is the schema of workspace.db.
func WorkspaceMigrations() fs.FS {
	sub, _ := fs.Sub(workspaceMigrations, "sql")
	return sub
}

// dsn builds the connection string. modernc applies each _pragma to every new
// pooled connection; a plain db.Exec("PRAGMA …") would set only one of them.
func dsn(path string) string {
	q := url.Values{}
	// busy_timeout comes first: every later pragma may need a lock.
	q.Add("_pragma", "busy_timeout(30000)") // wait for another process's writer instead of SQLITE_BUSY
	q.Add("_pragma", "journal_mode(WAL)")   // readers never block the writer
	q.Add("_pragma", "synchronous(FULL)")   // a committed step survives power loss
	q.Add("_pragma", "foreign_keys(1)")     // enforce ON DELETE rules
	// Statement journals (and sorts) stay in memory: a statement that
	// changes more than 64 KiB of pages inside a transaction (a batch of
	// schedule fires, a bulk insert) otherwise spills its journal to a
	// temporary file, two pwrite calls per page.
	q.Add("_pragma", "temp_store(MEMORY)")
	// BEGIN IMMEDIATE takes the write lock up front: deferred transactions that
	// read then write fail with SQLITE_BUSY under concurrency whatever the timeout.
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path and applies the
// migrations found in migrations (files named NNNN_*.sql); nil means none.
func Open(ctx context.Context, path string, migrations fs.FS) (*DB, error) {
	sqldb, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// database/sql keeps 2 idle connections by default and closes the rest
	// as they are released: under concurrent reads (a burst of webhook
	// calls) every query then opened a new connection, file and pragmas
	// included, which cost more than the query.
	sqldb.SetMaxIdleConns(maxIdleConns)
	sqldb.SetConnMaxIdleTime(maxIdleTime)
	db := &DB{DB: sqldb, path: path}
	if err := db.PingContext(ctx); err != nil {
		sqldb.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := db.incrementalVacuumIfNew(ctx); err != nil {
		sqldb.Close()
		return nil, err
	}
	if migrations != nil {
		if err := db.migrate(ctx, migrations); err != nil {
			sqldb.Close()
			return nil, err
		}
	}
	return db, nil
}

// maxIdleConns is how many open connections are kept for reuse.
const maxIdleConns = 16

// maxIdleTime is how long an unused connection stays open. Each holds its
// own page cache and parsed schema (most of a megabyte here); a burst of
// concurrent reads opens many, and an idle app keeps none of them.
const maxIdleTime = 10 * time.Second

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Tx runs fn in one immediate (write-locked) transaction, committing when fn
// returns nil and rolling back otherwise.
func (db *DB) Tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	db.writer.Lock()
	defer db.writer.Unlock()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.commits.Add(1)
	return nil
}

// Statement is a query to prepare, and where its prepared statement goes.
type Statement struct {
	Into  **sql.Stmt
	Query string
}

// PrepareAll prepares the statements of a hot path (the webhook intake, a
// burst of schedule fires): an unprepared statement is parsed again on every
// call, which costs more than running a small one. database/sql prepares
// each once on every connection it runs on; use it in a transaction with
// tx.StmtContext.
func (db *DB) PrepareAll(list ...Statement) error {
	for _, s := range list {
		st, err := db.Prepare(s.Query)
		if err != nil {
			return fmt.Errorf("prepare %q: %w", strings.Join(strings.Fields(s.Query), " "), err)
		}
		*s.Into = st
	}
	return nil
}

// Prepared returns query prepared once and kept until Close, for a read on
// a hot path (an MCP tool call, an API key check): SQLite parsing and
// planning a small query costs more than running it. The query text must
// be a constant, never built from values: each text is kept for good.
func (db *DB) Prepared(query string) (*sql.Stmt, error) {
	p, err := db.prepare(query)
	if err != nil {
		return nil, err
	}
	return p.st, nil
}

type prepared struct {
	st *sql.Stmt
	// rows is how many rows the statement's last QueryPrepared read: the
	// next result starts that large instead of growing row by row.
	rows atomic.Int32
}

func (db *DB) prepare(query string) (*prepared, error) {
	if p, ok := db.prepared.Load(query); ok {
		return p.(*prepared), nil
	}
	st, err := db.Prepare(query)
	if err != nil {
		return nil, err
	}
	p := &prepared{st: st}
	if prev, loaded := db.prepared.LoadOrStore(query, p); loaded {
		st.Close() // prepared at the same time by another caller
		return prev.(*prepared), nil
	}
	return p, nil
}

// Close closes the statements of Prepared, then the database.
func (db *DB) Close() error {
	db.prepared.Range(func(q, p any) bool {
		p.(*prepared).st.Close()
		db.prepared.Delete(q)
		return true
	})
	return db.DB.Close()
}

// Rows is a multi-row INSERT (Head, e.g. "INSERT INTO t (a, b) VALUES",
// then Row, "(?, ?)", once a row, then Tail), prepared once for each number
// of rows: a burst of rows written together (the runs of webhook calls
// sharing a commit) costs one statement rather than one a row. With Tail
// it is any statement over a VALUES list, e.g. "UPDATE t SET b = n.column2
// FROM (VALUES" … ") AS n WHERE t.a = n.column1". Values are bound as
// they are, so no row is encoded and parsed again on the way (as rows
// passed as a JSON array for json_each are, once for every column read).
// Each queries a list the same way (Head "SELECT … WHERE k IN (", Row "?",
// Tail ") AND …"). The zero value with DB, Head and Row set is ready to use.
type Rows struct {
	DB   *DB
	Head string
	Row  string
	Tail string
	// Max is how many rows one statement takes at most; 0 is 64. Past 64
	// a statement takes a power of two of them, so that few sizes are
	// ever prepared. A statement on a table with a full-text index flushes
	// the index once at its end: the fewer statements the better.
	Max int

	mu sync.Mutex
	m  map[int]*sql.Stmt
}

// maxRows is Rows' default Max.
const maxRows = 64

// Insert writes rows inside tx, each as many values as Row has "?".
func (r *Rows) Insert(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	return r.Exec(ctx, tx, rows)
}

// Exec runs the statement over rows inside tx, in as few statements as
// Max allows.
func (r *Rows) Exec(ctx context.Context, tx *sql.Tx, rows [][]any) error {
	return r.each(rows, nil, func(st *sql.Stmt, args []any) error {
		_, err := tx.StmtContext(ctx, st).ExecContext(ctx, args...)
		return err
	})
}

// Each runs the query over rows inside tx, with args after each
// statement's rows (for "?" in Tail), and calls scan for each row it
// returns.
func (r *Rows) Each(ctx context.Context, tx *sql.Tx, rows [][]any, args []any, scan func(Scanner) error) error {
	return r.each(rows, args, func(st *sql.Stmt, args []any) error {
		res, err := tx.StmtContext(ctx, st).QueryContext(ctx, args...)
		if err != nil {
			return err
		}
		defer res.Close()
		for res.Next() {
			if err := scan(res); err != nil {
				return err
			}
		}
		return res.Err()
	})
}

// each runs st, the statement for as many rows as Max allows, over rows
// and then args, until every row is done.
func (r *Rows) each(rows [][]any, args []any, run func(st *sql.Stmt, args []any) error) error {
	limit := max(r.Max, maxRows)
	for len(rows) > 0 {
		n := min(len(rows), limit)
		if n > maxRows {
			n = 1 << (bits.Len(uint(n)) - 1)
		}
		st, err := r.stmt(n)
		if err != nil {
			return err
		}
		all := make([]any, 0, n*len(rows[0])+len(args))
		for _, row := range rows[:n] {
			all = append(all, row...)
		}
		if err := run(st, append(all, args...)); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func (r *Rows) stmt(n int) (*sql.Stmt, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st := r.m[n]; st != nil {
		return st, nil
	}
	q := r.Head + " " + r.Row + strings.Repeat(", "+r.Row, n-1) + " " + r.Tail
	st, err := r.DB.Prepare(q)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", strings.Join(strings.Fields(r.Head+" "+r.Row+" "+r.Tail), " "), err)
	}
	if r.m == nil {
		r.m = map[int]*sql.Stmt{}
	}
	r.m[n] = st
	return st, nil
}

// Commits is how many transactions Tx has committed (benchmarks count them).
func (db *DB) Commits() int64 { return db.commits.Load() }

type migration struct {
	version int
	name    string
	body    string
}

func readMigrations(migrations fs.FS) ([]migration, error) {
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
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
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

// migrate applies, in order, each migration not yet recorded in
// schema_migrations, each in its own transaction with its record.
func (db *DB) migrate(ctx context.Context, migrations fs.FS) error {
	list, err := readMigrations(migrations)
	if err != nil {
		return err
	}
	// An up-to-date database (every start but the first after an update)
	// is told by one read, without taking the write lock.
	if applied, err := appliedMigrations(ctx, db); err == nil && pending(list, applied) == 0 {
		return nil
	}
	// The pending migrations go in one transaction: a new database costs
	// one commit (one fsync) rather than one for each, and a migration
	// that fails leaves the database as it was before all of them.
	return db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY,
			name TEXT NOT NULL,
			applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
		)`); err != nil {
			return fmt.Errorf("create schema_migrations in %s: %w", db.path, err)
		}
		// Read again under the write lock: another process may have
		// migrated meanwhile.
		applied, err := appliedMigrations(ctx, tx)
		if err != nil {
			return fmt.Errorf("read the migrations applied to %s: %w", db.path, err)
		}
		for _, m := range list {
			if applied[m.version] {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.body); err != nil {
				return fmt.Errorf("apply migration %s to %s: %w", m.name, db.path, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES (?, ?)`, m.version, m.name); err != nil {
				return fmt.Errorf("apply migration %s to %s: %w", m.name, db.path, err)
			}
		}
		return nil
	})
}

// appliedMigrations is the set of versions schema_migrations records; an
// error when there is no such table yet.
func appliedMigrations(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		applied[v] = true
	}
	return applied, rows.Err()
}

// pending counts the migrations of list not in applied.
func pending(list []migration, applied map[int]bool) int {
	n := 0
	for _, m := range list {
		if !applied[m.version] {
			n++
		}
	}
	return n
}

// Version is the highest applied migration.
func (db *DB) Version(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v)
	return int(v.Int64), err
}

// NewID returns a random identifier with the given prefix, e.g. "ag_k3j…".
func NewID(prefix string) string {
	var b [10]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// sorted keeps NewSortedID's ids increasing within this process.
var sorted struct {
	mu   sync.Mutex
	last [10]byte
}

// NewSortedID returns an identifier like NewID's (the same length and
// letters) whose ids sort, as text, in the order they were made: 48 bits of
// milliseconds, then 32 random bits, counted up from the last id when the
// clock has not moved on. Rows written in bursts (runs, webhook
// deliveries) then go to the end of their primary key's index instead of
// each to a random page of it, which every commit would write again. Sessions
// and schedules have them too: schedules due together are claimed in the
// order they were made (their rowid), and each one's session and fires
// then sit beside the last one's in every index keyed by their ids (a
// burst of 10,000 fires: p99 1.2 s late with random ids, 0.65 s with these).
func NewSortedID(prefix string) string {
	var b [10]byte
	ms := uint64(time.Now().UnixMilli())
	for i := range 6 {
		b[i] = byte(ms >> (40 - 8*i))
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	sorted.mu.Lock()
	if bytes.Compare(b[:], sorted.last[:]) <= 0 {
		b = sorted.last
		for i := len(b) - 1; i >= 0; i-- { // add one
			if b[i]++; b[i] != 0 {
				break
			}
		}
	}
	sorted.last = b
	sorted.mu.Unlock()
	return prefix + "_" + sortedEncoding.EncodeToString(b[:])
}

// sortedEncoding is NewID's alphabet in ASCII order, so that the text of
// ids sorts as their bytes do.
var sortedEncoding = base32.NewEncoding("234567abcdefghijklmnopqrstuvwxyz").WithPadding(base32.NoPadding)

// timeLayout is how times are stored: UTC, sortable as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// FormatTime renders t for storage.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// ParseTime reads a time written by FormatTime.
func ParseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// Scanner is a *sql.Row or *sql.Rows.
type Scanner interface{ Scan(dest ...any) error }

// Query runs a query and scans every row with scan; it never returns a nil
// slice, so an empty result encodes as [] in JSON.
func Query[T any](ctx context.Context, db *DB, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, scan, 0)
}

// QueryPrepared is Query with query prepared once (Prepared): for the
// reads of a hot path, with a constant query text.
func QueryPrepared[T any](ctx context.Context, db *DB, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	p, err := db.prepare(query)
	if err != nil {
		return nil, err
	}
	rows, err := p.st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	out, err := scanAll(rows, scan, int(p.rows.Load()))
	p.rows.Store(int32(min(len(out), 1<<16)))
	return out, err
}

func scanAll[T any](rows *sql.Rows, scan func(Scanner) (T, error), size int) ([]T, error) {
	defer rows.Close()
	out := make([]T, 0, size)
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// EnableIncrementalVacuum makes the database give freed pages back to the
// file system bit by bit (IncrementalVacuum) instead of keeping them. A
// database made before this setting needs one full VACUUM to take it; it
// runs here, once, holding this process's writers back until it is done.
func (db *DB) EnableIncrementalVacuum(ctx context.Context) error {
	var mode int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return fmt.Errorf("read auto_vacuum of %s: %w", db.path, err)
	}
	if mode == 2 { // INCREMENTAL
		return nil
	}
	db.writer.Lock()
	defer db.writer.Unlock()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("vacuum %s: %w", db.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return fmt.Errorf("set auto_vacuum of %s: %w", db.path, err)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("vacuum %s: %w", db.path, err)
	}
	return nil
}

// incrementalVacuumIfNew makes a brand-new database give freed pages back
// (IncrementalVacuum). The setting takes only before the first table, and
// it is set here, once, rather than as a pragma of every pooled connection:
// on a database that has tables that pragma opens a write transaction each
// time a connection opens, and those collided with the writer.
func (db *DB) incrementalVacuumIfNew(ctx context.Context) error {
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return fmt.Errorf("open database %s: %w", db.path, err)
	}
	if tables > 0 {
		return nil
	}
	db.writer.Lock()
	defer db.writer.Unlock()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("open database %s: %w", db.path, err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
		return fmt.Errorf("set auto_vacuum of %s: %w", db.path, err)
	}
	// The mode is kept in the file once the database has content; VACUUM
	// writes it now, while that is still cheap.
	if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
		return fmt.Errorf("set auto_vacuum of %s: %w", db.path, err)
	}
	return nil
}

// IncrementalVacuum returns up to pages free pages to the file system, as
// one small write (a database without incremental vacuum ignores it).
func (db *DB) IncrementalVacuum(ctx context.Context, pages int) error {
	db.writer.Lock()
	defer db.writer.Unlock()
	if _, err := db.ExecContext(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, pages)); err != nil {
		return fmt.Errorf("incremental vacuum of %s: %w", db.path, err)
	}
	return nil
}
