package relay

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/rerun-build/rerun-desktop/sync/internal/sqldb"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Errors of the store, translated to HTTP statuses once, in the handlers.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Store keeps what the relay needs and nothing more: workspaces (derived
// values of their secrets), trigger token hashes, deliveries not yet
// acked, and the latest sealed change of each record of the workspaces'
// change logs. [OpenSQLite] (one relay process) and [OpenPostgres] (several
// behind a load balancer) return one.
type Store interface {
	CreateWorkspace(ctx context.Context, w Workspace) error
	// Workspace returns ErrNotFound for an unknown id.
	Workspace(ctx context.Context, id string) (Workspace, error)
	// DeleteWorkspace forgets a workspace, its tokens and deliveries.
	DeleteWorkspace(ctx context.Context, id string) error
	// SetTokens replaces a workspace's token hashes; ErrConflict when one
	// belongs to another workspace.
	SetTokens(ctx context.Context, workspaceID string, hashes []string) error
	// TokenWorkspace returns the workspace a token hash belongs to, or
	// ErrNotFound.
	TokenWorkspace(ctx context.Context, hash string) (string, error)
	// AddDeliveries commits deliveries in one transaction and returns the
	// workspace each was stored for: "" for one without a WorkspaceID
	// whose token hash is not registered (any more), which is not stored.
	AddDeliveries(ctx context.Context, ds []Record) ([]string, error)
	// Due returns up to limit of a workspace's live deliveries whose next
	// attempt is at or before now, oldest first, and when the next one
	// after now is due (zero if none).
	Due(ctx context.Context, workspaceID string, now time.Time, limit int) ([]protocol.Delivery, time.Time, error)
	// Ack deletes delivered deliveries and returns when each was received
	// (ids unknown or already deleted are skipped).
	Ack(ctx context.Context, workspaceID string, ids []string) ([]time.Time, error)
	// Retry records a nack: one more attempt, its reason, the next try.
	Retry(ctx context.Context, workspaceID, id, reason string, next time.Time) error
	// Expire turns deliveries past their expiry into dead letters and
	// deletes dead letters that died before prune.
	Expire(ctx context.Context, now, prune time.Time) (expired, pruned int, err error)
	DeadLetters(ctx context.Context, workspaceID string, limit int) ([]protocol.DeadLetter, error)
	// Replay makes a dead letter live again, due now, expiring at expires.
	Replay(ctx context.Context, workspaceID, id string, now, expires time.Time) error
	DropDeadLetter(ctx context.Context, workspaceID, id string) error
	// PushChanges stores changes (checked by protocol.CheckPush) as the
	// latest of their keys, each with the next seq of the workspace, in one
	// transaction, and returns the workspace's newest seq. ErrNotFound for
	// an unknown workspace.
	PushChanges(ctx context.Context, workspaceID string, changes []protocol.Change, now time.Time) (last int64, err error)
	// Changes returns up to limit changes with seq > after, ascending, and
	// the workspace's newest seq. ErrNotFound for an unknown workspace.
	Changes(ctx context.Context, workspaceID string, after int64, limit int) (protocol.ChangePage, error)
	// LastSeq returns the workspace's newest seq (0 before any push).
	LastSeq(ctx context.Context, workspaceID string) (int64, error)
	Stats(ctx context.Context) (Stats, error)
	// Listen calls fn for each delivery made due and each push of changes
	// by any process sharing the store, until ctx ends (nil) or its
	// connection fails (the error: notifications may have been missed). A
	// store only one process uses returns nil at once.
	Listen(ctx context.Context, fn func(Notice)) error
	// Phones (store_phones.go).
	phoneStore
	Ping(ctx context.Context) error
	Close() error
}

// Workspace is a workspace linked to the relay.
type Workspace struct {
	ID         string
	Verifier   string // protocol.Verifier(secret)
	SigningKey []byte // protocol.SigningKey(secret)
	CreatedAt  time.Time
}

// Record is a delivery as the intake stores it.
type Record struct {
	// WorkspaceID is the workspace it is for; empty (a webhook), the one
	// its TokenHash belongs to when it is committed.
	WorkspaceID string
	protocol.Delivery
	ExpiresAt time.Time
}

// Stats counts what the store holds, for /metrics.
type Stats struct {
	Pending, DeadLetters int
	Changes              int   // records of all change logs
	ChangeBytes          int64 // their sealed bytes
}

// Notice is what one relay process tells the others through the store.
type Notice struct {
	WorkspaceID string
	// Changes: devices From pushed changes, up to seq Last. Otherwise a
	// delivery of the workspace is due.
	Changes bool
	Last    int64
	From    []string
}

//go:embed sql
var migrations embed.FS

func migrationsOf(dir string) fs.FS {
	sub, _ := fs.Sub(migrations, "sql/"+dir)
	return sub
}

// OpenSQLite opens (creating if needed) a store in one SQLite file. Only one
// relay process may use it.
func OpenSQLite(ctx context.Context, path string) (Store, error) {
	db, err := sqldb.OpenSQLite(ctx, path, migrationsOf("sqlite"))
	if err != nil {
		return nil, err
	}
	return newSQLStore(db, sqldb.SQLite, "", insertOne)
}

// OpenPostgres opens a store in the PostgreSQL database at url (a
// postgres:// URL or key=value DSN, as pgx reads them), applying the
// migrations. Several relay processes may share it.
func OpenPostgres(ctx context.Context, url string) (Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	// Every query of the relay is prepared once per connection and has one
	// good plan whatever its arguments; planning each execution again (what
	// PostgreSQL keeps doing for the intake's insert of arrays, whose
	// lengths it plans for) was a third of the insert's time.
	if _, ok := cfg.RuntimeParams["plan_cache_mode"]; !ok {
		cfg.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	if err := sqldb.Migrate(ctx, db, migrationsOf("postgres"), sqldb.Postgres); err != nil {
		db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return newSQLStore(db, sqldb.Postgres, `SELECT pg_notify(?, ?)`, insertGroup)
}

// insertOne stores a delivery for its workspace or, without one, for the
// workspace its token hash belongs to, and returns that workspace; no row
// when the hash is not registered.
const insertOne = `INSERT INTO deliveries (id, workspace_id, token_hash, received_at, method, query, header, body,
	next_attempt_at, expires_at)
	SELECT ?, ws, ?, ?, ?, ?, ?, ?, ?, ? FROM (SELECT coalesce(nullif(?, ''), (SELECT workspace_id FROM tokens WHERE hash = ?)) AS ws) AS d
	WHERE ws IS NOT NULL
	RETURNING workspace_id`

// insertGroup is insertOne for a whole group of deliveries, one array of
// each column, in one statement and one round trip: the commit of the
// intake's group costs about the same whether it holds one webhook or
// hundreds. It tells the other relay processes (pg_notify) of each
// workspace it stored deliveries for; PostgreSQL sends each distinct
// notification once, at the commit. Its rows are the stored deliveries'
// ids and workspaces.
const insertGroup = `WITH ins AS (
	INSERT INTO deliveries (id, workspace_id, token_hash, received_at, method, query, header, body, next_attempt_at, expires_at)
	SELECT id, ws, token_hash, received_at, method, query, header, body, received_at, expires_at FROM (
		SELECT d.*, coalesce(nullif(d.workspace_id, ''), (SELECT workspace_id FROM tokens WHERE hash = d.token_hash)) AS ws
		FROM unnest(?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::bytea[], ?::bigint[])
			AS d (id, workspace_id, token_hash, received_at, method, query, header, body, expires_at)) AS d
	WHERE ws IS NOT NULL
	RETURNING id, workspace_id)
SELECT ins.id, ins.workspace_id FROM ins CROSS JOIN LATERAL pg_notify('` + notifyChannel + `', ins.workspace_id) AS n`

// sqlStore is the Store on database/sql; the two dialects share every
// query, with ? rebound for PostgreSQL, but the intake's insert.
type sqlStore struct {
	db      *sql.DB
	dialect sqldb.Dialect
	notify  string // pg_notify(channel, payload), run in the transaction that makes a delivery due or pushes changes; "" for SQLite
	group   bool   // insert is insertGroup (PostgreSQL), not insertOne
	// the intake's and the sender's hot statements, prepared once
	lookup, insert, due, next *sql.Stmt
}

const deliveryColumns = `id, token_hash, received_at, method, query, header, body, attempts`

func newSQLStore(db *sql.DB, d sqldb.Dialect, notify, insert string) (*sqlStore, error) {
	s := &sqlStore{db: db, dialect: d, notify: d.Rebind(notify), group: insert == insertGroup}
	for _, p := range []struct {
		into  **sql.Stmt
		query string
	}{
		{&s.lookup, `SELECT workspace_id FROM tokens WHERE hash = ?`},
		{&s.insert, insert},
		{&s.due, `SELECT ` + deliveryColumns + ` FROM deliveries
			WHERE workspace_id = ? AND dead_at IS NULL AND next_attempt_at <= ? ORDER BY id LIMIT ?`},
		{&s.next, `SELECT min(next_attempt_at) FROM deliveries WHERE workspace_id = ? AND dead_at IS NULL AND next_attempt_at > ?`},
	} {
		st, err := db.Prepare(d.Rebind(p.query))
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("prepare %q: %w", strings.Join(strings.Fields(p.query), " "), err)
		}
		*p.into = st
	}
	return s, nil
}

func ms(t time.Time) int64            { return t.UnixMilli() }
func fromMS(v int64) time.Time        { return time.UnixMilli(v).UTC() }
func (s *sqlStore) q(q string) string { return s.dialect.Rebind(q) }

// tx runs fn in one transaction (BEGIN IMMEDIATE on SQLite).
func (s *sqlStore) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func (s *sqlStore) CreateWorkspace(ctx context.Context, w Workspace) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO workspaces (id, verifier, signing_key, created_at) VALUES (?, ?, ?, ?)`),
		w.ID, w.Verifier, w.SigningKey, ms(w.CreatedAt))
	if err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	return nil
}

func (s *sqlStore) Workspace(ctx context.Context, id string) (Workspace, error) {
	w := Workspace{ID: id}
	var created int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT verifier, signing_key, created_at FROM workspaces WHERE id = ?`), id).
		Scan(&w.Verifier, &w.SigningKey, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return Workspace{}, ErrNotFound
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("read workspace: %w", err)
	}
	w.CreatedAt = fromMS(created)
	return w, nil
}

func (s *sqlStore) DeleteWorkspace(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM workspaces WHERE id = ?`), id)
	if err != nil {
		return fmt.Errorf("delete workspace: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqlStore) SetTokens(ctx context.Context, workspaceID string, hashes []string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM tokens WHERE workspace_id = ?`), workspaceID); err != nil {
			return fmt.Errorf("replace tokens: %w", err)
		}
		ins, err := tx.PrepareContext(ctx, s.q(`INSERT INTO tokens (hash, workspace_id) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`))
		if err != nil {
			return fmt.Errorf("replace tokens: %w", err)
		}
		defer ins.Close()
		for _, h := range hashes {
			res, err := ins.ExecContext(ctx, h, workspaceID)
			if err != nil {
				return fmt.Errorf("replace tokens: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("token hash %.8s… belongs to another workspace: %w", h, ErrConflict)
			}
		}
		return nil
	})
}

func (s *sqlStore) TokenWorkspace(ctx context.Context, hash string) (string, error) {
	var ws string
	err := s.lookup.QueryRowContext(ctx, hash).Scan(&ws)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("look up token: %w", err)
	}
	return ws, nil
}

func (s *sqlStore) AddDeliveries(ctx context.Context, ds []Record) ([]string, error) {
	headers := make([]string, len(ds))
	for i, d := range ds {
		h, err := json.Marshal(d.Header)
		if err != nil {
			return nil, fmt.Errorf("store delivery: %w", err)
		}
		headers[i] = string(h)
	}
	if s.group {
		return s.addGroup(ctx, ds, headers)
	}
	out := make([]string, len(ds))
	err := s.tx(ctx, func(tx *sql.Tx) error {
		ins := tx.StmtContext(ctx, s.insert)
		for i, d := range ds {
			body := d.Body
			if body == nil {
				body = []byte{} // NOT NULL
			}
			err := ins.QueryRowContext(ctx, d.ID, d.TokenHash, ms(d.ReceivedAt), d.Method, d.Query, headers[i], body,
				ms(d.ReceivedAt), ms(d.ExpiresAt), d.WorkspaceID, d.TokenHash).Scan(&out[i])
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("store delivery: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addGroup is AddDeliveries on PostgreSQL: one statement (insertGroup), its
// own transaction.
func (s *sqlStore) addGroup(ctx context.Context, ds []Record, headers []string) ([]string, error) {
	n := len(ds)
	ids, wss, hashes, methods, queries := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	received, expires := make([]int64, n), make([]int64, n)
	bodies := make([][]byte, n)
	at := make(map[string]int, n) // delivery id → index
	for i, d := range ds {
		ids[i], wss[i], hashes[i], methods[i], queries[i] = d.ID, d.WorkspaceID, d.TokenHash, d.Method, d.Query
		received[i], expires[i] = ms(d.ReceivedAt), ms(d.ExpiresAt)
		bodies[i] = d.Body
		if bodies[i] == nil {
			bodies[i] = []byte{} // NOT NULL
		}
		at[d.ID] = i
	}
	rows, err := s.insert.QueryContext(ctx, ids, wss, hashes, received, methods, queries, headers, bodies, expires)
	if err != nil {
		return nil, fmt.Errorf("store deliveries: %w", err)
	}
	defer rows.Close()
	out := make([]string, n)
	for rows.Next() {
		var id, ws string
		if err := rows.Scan(&id, &ws); err != nil {
			return nil, fmt.Errorf("store deliveries: %w", err)
		}
		out[at[id]] = ws
	}
	// The statement commits when its last row is read: an error here may
	// be the commit's.
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store deliveries: %w", err)
	}
	return out, nil
}

func (s *sqlStore) Due(ctx context.Context, workspaceID string, now time.Time, limit int) ([]protocol.Delivery, time.Time, error) {
	rows, err := s.due.QueryContext(ctx, workspaceID, ms(now), limit)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read due deliveries: %w", err)
	}
	defer rows.Close()
	var out []protocol.Delivery
	for rows.Next() {
		var d protocol.Delivery
		var received int64
		var header string
		if err := rows.Scan(&d.ID, &d.TokenHash, &received, &d.Method, &d.Query, &header, &d.Body, &d.Attempt); err != nil {
			return nil, time.Time{}, fmt.Errorf("read due deliveries: %w", err)
		}
		d.ReceivedAt = fromMS(received)
		if err := json.Unmarshal([]byte(header), &d.Header); err != nil {
			return nil, time.Time{}, fmt.Errorf("read delivery %s: header: %w", d.ID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, time.Time{}, fmt.Errorf("read due deliveries: %w", err)
	}
	var next sql.NullInt64
	if err := s.next.QueryRowContext(ctx, workspaceID, ms(now)).Scan(&next); err != nil {
		return nil, time.Time{}, fmt.Errorf("read next due delivery: %w", err)
	}
	var at time.Time
	if next.Valid {
		at = fromMS(next.Int64)
	}
	return out, at, nil
}

// placeholders returns "?, ?, …" n times.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func (s *sqlStore) Ack(ctx context.Context, workspaceID string, ids []string) ([]time.Time, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{workspaceID}
	for _, id := range ids {
		args = append(args, id)
	}
	rows, err := s.db.QueryContext(ctx, s.q(`DELETE FROM deliveries WHERE workspace_id = ? AND id IN (`+placeholders(len(ids))+`)
		RETURNING received_at`), args...)
	if err != nil {
		return nil, fmt.Errorf("ack deliveries: %w", err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("ack deliveries: %w", err)
		}
		out = append(out, fromMS(v))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ack deliveries: %w", err)
	}
	return out, nil
}

func (s *sqlStore) Retry(ctx context.Context, workspaceID, id, reason string, next time.Time) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE deliveries SET attempts = attempts + 1, last_error = ?, next_attempt_at = ?
		WHERE workspace_id = ? AND id = ? AND dead_at IS NULL`), reason, ms(next), workspaceID, id)
	if err != nil {
		return fmt.Errorf("record nack of %s: %w", id, err)
	}
	return nil
}

func (s *sqlStore) Expire(ctx context.Context, now, prune time.Time) (expired, pruned int, err error) {
	err = s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE deliveries SET dead_at = ? WHERE dead_at IS NULL AND expires_at <= ?`), ms(now), ms(now))
		if err != nil {
			return fmt.Errorf("expire deliveries: %w", err)
		}
		n, _ := res.RowsAffected()
		expired = int(n)
		res, err = tx.ExecContext(ctx, s.q(`DELETE FROM deliveries WHERE dead_at IS NOT NULL AND dead_at < ?`), ms(prune))
		if err != nil {
			return fmt.Errorf("prune dead letters: %w", err)
		}
		n, _ = res.RowsAffected()
		pruned = int(n)
		return nil
	})
	return expired, pruned, err
}

func (s *sqlStore) DeadLetters(ctx context.Context, workspaceID string, limit int) ([]protocol.DeadLetter, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id, token_hash, received_at, method, length(body), attempts, last_error, dead_at
		FROM deliveries WHERE workspace_id = ? AND dead_at IS NOT NULL ORDER BY id DESC LIMIT ?`), workspaceID, limit)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	defer rows.Close()
	out := []protocol.DeadLetter{}
	for rows.Next() {
		var d protocol.DeadLetter
		var received, dead int64
		if err := rows.Scan(&d.ID, &d.TokenHash, &received, &d.Method, &d.Size, &d.Attempts, &d.LastError, &dead); err != nil {
			return nil, fmt.Errorf("list dead letters: %w", err)
		}
		d.ReceivedAt, d.DeadAt = fromMS(received), fromMS(dead)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list dead letters: %w", err)
	}
	return out, nil
}

func (s *sqlStore) Replay(ctx context.Context, workspaceID, id string, now, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.q(`UPDATE deliveries SET dead_at = NULL, attempts = 0, last_error = '',
			next_attempt_at = ?, expires_at = ? WHERE workspace_id = ? AND id = ? AND dead_at IS NOT NULL`),
			ms(now), ms(expires), workspaceID, id)
		if err != nil {
			return fmt.Errorf("replay %s: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		if s.notify != "" {
			if _, err := tx.ExecContext(ctx, s.notify, notifyChannel, workspaceID); err != nil {
				return fmt.Errorf("replay %s: notify: %w", id, err)
			}
		}
		return nil
	})
}

func (s *sqlStore) DropDeadLetter(ctx context.Context, workspaceID, id string) error {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM deliveries WHERE workspace_id = ? AND id = ? AND dead_at IS NOT NULL`), workspaceID, id)
	if err != nil {
		return fmt.Errorf("delete dead letter %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func (s *sqlStore) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE dead_at IS NULL), count(*) FILTER (WHERE dead_at IS NOT NULL)
		FROM deliveries`).Scan(&st.Pending, &st.DeadLetters)
	if err != nil {
		return Stats{}, fmt.Errorf("count deliveries: %w", err)
	}
	// length() of a blob or bytea reads its size, not its bytes.
	err = s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(length(body)), 0) FROM changes`).Scan(&st.Changes, &st.ChangeBytes)
	if err != nil {
		return Stats{}, fmt.Errorf("count changes: %w", err)
	}
	return st, nil
}

func (s *sqlStore) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

func (s *sqlStore) Close() error { return s.db.Close() }
