package tool

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Limits of the database family.
const (
	MaxQueryRows  = 500       // rows db_query returns
	MaxQueryBytes = 256 << 10 // bytes of db_query result
	maxCellBytes  = 8 << 10   // a longer text or blob value is cut
	maxTables     = 500       // tables list_tables reports
	maxTableSQL   = 4 << 10   // bytes of one table's CREATE statement
	busyTimeoutMS = 5000      // wait this long for another writer's lock
	sqlTimeout    = 60 * time.Second
)

// Table is one table or view of a database.
type Table struct {
	Name string `json:"name"`
	Type string `json:"type"` // "table" or "view"
	SQL  string `json:"sql"`  // its CREATE statement
}

// QueryResult is what a read-only query returns.
type QueryResult struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	RowCount  int      `json:"row_count"`
	Truncated bool     `json:"truncated"` // more rows, or bytes, than the caps
}

// ExecResult is what a write returns.
type ExecResult struct {
	RowsAffected int64 `json:"rows_affected"`
	LastInsertID int64 `json:"last_insert_id"`
}

func databaseTools() []Tool {
	own := func(env *Env) string { return env.AgentDB }
	shared := func(env *Env) string { return env.SharedDB }
	return []Tool{
		listTablesTool("list_tables", "your own database", own),
		queryTool("db_query", "your own database", "db_execute", own),
		execTool("db_execute", "your own database", "db_query", "its own database", own),
		listTablesTool("list_space_tables", "the workspace's shared database (every coworker reads and writes it)", shared),
		queryTool("space_db_query", "the workspace's shared database", "space_db_execute", shared),
		execTool("space_db_execute", "the workspace's shared database (every coworker reads and writes it)", "space_db_query", "the shared database", shared),
	}
}

const sqlArgsSchema = `"args":{"type":"array","items":{"type":["string","number","boolean","null"]},"description":"Values for the ? placeholders, in order."}`

// sqlSchema is the input schema of a tool taking sql (described by what) and args.
func sqlSchema(what string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"sql":{"type":"string","description":"` + what + `"},` +
		sqlArgsSchema + `},"required":["sql"],"additionalProperties":false}`)
}

func listTablesTool(name, which string, path func(*Env) string) Tool {
	return Tool{
		Name:        name,
		Family:      "database",
		Description: "List the tables and views of " + which + " (SQLite) with their CREATE statements.",
		Schema:      json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			var in struct{}
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", err
			}
			tables, err := listTables(ctx, path(env), env.redactor())
			if err != nil {
				return "", err
			}
			return marshal(map[string]any{"tables": tables}), nil
		},
	}
}

func queryTool(name, which, writer string, path func(*Env) string) Tool {
	return Tool{
		Name:   name,
		Family: "database",
		Description: "Run one read-only SQL statement (SELECT, WITH, PRAGMA table_info(…), EXPLAIN) on " + which + " (SQLite). " +
			"Returns JSON {columns, rows, row_count, truncated}, at most 500 rows / 256 KiB. To change data use " + writer + ".",
		Schema: sqlSchema("One SQLite statement; use ? placeholders for values."),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			in, args, err := readSQLInput(input)
			if err != nil {
				return "", err
			}
			if err := CheckSQL(in.SQL); err == nil && statementCount(in.SQL) > 1 {
				return "", fault.Invalid("%s runs one statement at a time; send the statements in separate calls", name)
			}
			res, err := queryDB(ctx, path(env), in.SQL, args, env.redactor())
			if err != nil {
				return "", readOnlyHint(err, writer)
			}
			return marshal(res), nil
		},
	}
}

// execTool changes a database; where names it on an approval card.
func execTool(name, which, reader, where string, path func(*Env) string) Tool {
	return Tool{
		Name:   name,
		Family: "database",
		Description: "Change " + which + " (SQLite): CREATE, INSERT, UPDATE, DELETE, ALTER, DROP. Several statements separated by ; " +
			"may be sent at once when no args are given. Returns JSON {rows_affected, last_insert_id}. To read use " + reader + ".",
		Schema: sqlSchema("SQLite statement(s); use ? placeholders for values."),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			in, args, err := readSQLInput(input)
			if err != nil {
				return "", err
			}
			if err := CheckSQL(in.SQL); err == nil && len(args) > 0 && statementCount(in.SQL) > 1 {
				return "", fault.Invalid("args go with a single statement; send each statement with its own args in separate calls")
			}
			res, err := ExecDB(ctx, path(env), in.SQL, args)
			if err != nil {
				return "", err
			}
			return marshal(res), nil
		},
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			in := argsOf(input)
			detail := in.str("sql")
			if args, ok := in["args"]; ok {
				b, _ := json.Marshal(args)
				detail += "\n-- args: " + string(b)
			}
			return "Change " + where, "command", detail
		},
	}
}

// readSQLInput decodes a query or execute tool's input and its args.
func readSQLInput(input json.RawMessage) (sqlInput, []any, error) {
	var in sqlInput
	if err := jsonarg.Decode(input, &in); err != nil {
		return in, nil, err
	}
	args, err := in.values()
	return in, args, err
}

// sqlInput is the input of the query and execute tools.
type sqlInput struct {
	SQL  string            `json:"sql"`
	Args []json.RawMessage `json:"args"`
}

// values turns the JSON args into SQLite values: whole numbers become
// integers (so 3 is stored as 3, not 3.0), booleans 1 or 0.
func (in sqlInput) values() ([]any, error) {
	out := make([]any, len(in.Args))
	for i, raw := range in.Args {
		var v any
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fault.Invalid("args[%d] is not valid JSON: %v", i, err)
		}
		switch x := v.(type) {
		case nil, string:
			out[i] = x
		case bool:
			out[i] = int64(0)
			if x {
				out[i] = int64(1)
			}
		case json.Number:
			if n, err := x.Int64(); err == nil {
				out[i] = n
			} else if f, err := x.Float64(); err == nil {
				out[i] = f
			} else {
				return nil, fault.Invalid("args[%d] = %s is not a number SQLite can store; pass it as a string", i, x)
			}
		default:
			return nil, fault.Invalid("args[%d] is an object or array; args must be strings, numbers, booleans or null (encode structured values as JSON text)", i)
		}
	}
	return out, nil
}

// ListTables lists the tables and views of the SQLite database at path
// (created empty if missing), internal sqlite_* tables left out, each
// statement masked with r (nil: nothing to mask).
func ListTables(ctx context.Context, path string, r *secret.Redactor) ([]Table, error) {
	return listTables(ctx, path, r)
}

// listTables is ListTables with each statement masked with r before it is
// cut (nil: nothing to mask).
func listTables(ctx context.Context, path string, r *secret.Redactor) ([]Table, error) {
	conn, done, err := openDB(ctx, path, true)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := conn.QueryContext(ctx, `SELECT name, type, coalesce(sql, '') FROM sqlite_schema
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	tables := []Table{}
	for rows.Next() {
		var t Table
		if err := rows.Scan(&t.Name, &t.Type, &t.SQL); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if len(tables) == maxTables {
			tables = append(tables, Table{Name: "…", Type: "note", SQL: fmt.Sprintf("[stopped at %d tables]", maxTables)})
			break
		}
		t.SQL = clipMasked(r, t.SQL, maxTableSQL)
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return tables, nil
}

// QueryDB runs one read-only statement on the SQLite database at path
// (created empty if missing) and returns at most MaxQueryRows rows and about
// MaxQueryBytes of values. The connection is opened read-only and
// query_only, behind CheckSQL and an authorizer. Each cell is masked with
// r (nil: nothing to mask) before it is cut.
func QueryDB(ctx context.Context, path, query string, args []any, r *secret.Redactor) (QueryResult, error) {
	return queryDB(ctx, path, query, args, r)
}

// queryDB is QueryDB with each cell masked with r before it is cut (nil:
// nothing to mask): a value a cut would halve is masked whole.
func queryDB(ctx context.Context, path, query string, args []any, r *secret.Redactor) (QueryResult, error) {
	var res QueryResult
	err := withConn(ctx, path, true, query, func(ctx context.Context, conn *sql.Conn) error {
		rows, err := conn.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return err
		}
		res = QueryResult{Columns: cols, Rows: [][]any{}}
		size := len(marshal(cols))
		for rows.Next() {
			if len(res.Rows) == MaxQueryRows {
				res.Truncated = true
				break
			}
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return err
			}
			for i, v := range vals {
				vals[i] = jsonValue(v, r)
			}
			size += len(marshal(vals)) + 1
			if size > MaxQueryBytes && len(res.Rows) > 0 {
				res.Truncated = true
				break
			}
			res.Rows = append(res.Rows, vals)
		}
		res.RowCount = len(res.Rows)
		return rows.Err()
	})
	return res, err
}

// ExecDB runs statements that change the SQLite database at path (created if
// missing), behind CheckSQL and an authorizer.
func ExecDB(ctx context.Context, path, stmt string, args []any) (ExecResult, error) {
	var res ExecResult
	err := withConn(ctx, path, false, stmt, func(ctx context.Context, conn *sql.Conn) error {
		r, err := conn.ExecContext(ctx, stmt, args...)
		if err != nil {
			return err
		}
		res.RowsAffected, _ = r.RowsAffected()
		res.LastInsertID, _ = r.LastInsertId()
		return nil
	})
	return res, err
}

// withConn checks stmt with CheckSQL, opens the database for one call and
// runs fn under the SQL time limit, turning SQLite errors into ones that say
// what to fix.
func withConn(ctx context.Context, path string, readOnly bool, stmt string, fn func(context.Context, *sql.Conn) error) error {
	if err := CheckSQL(stmt); err != nil {
		return err
	}
	conn, done, err := openDB(ctx, path, readOnly)
	if err != nil {
		return err
	}
	defer done()
	limited, cancel := context.WithTimeout(ctx, sqlTimeout)
	defer cancel()
	if err := fn(limited, conn); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("run SQL: %w", ctx.Err())
		}
		if limited.Err() != nil {
			return fault.Invalid("the SQL ran longer than %s and was stopped; add a LIMIT or a narrower WHERE", sqlTimeout)
		}
		return sqlError(err)
	}
	return nil
}

// jsonValue makes a scanned SQLite value encodable and bounded: long text is
// cut, blobs become text when they are UTF-8 and x'hex' otherwise, infinities
// become strings (JSON has none).
func jsonValue(v any, r *secret.Redactor) any {
	switch x := v.(type) {
	case string:
		return clipMasked(r, x, maxCellBytes)
	case []byte:
		if utf8.Valid(x) {
			return clipMasked(r, string(x), maxCellBytes)
		}
		if len(x) > maxCellBytes/2 {
			// The hex of the kept bytes and what a value reaching past
			// them needs, masked, then cut to the kept bytes' length.
			h := hex.EncodeToString(x[:min(len(x), maxCellBytes/2+maskContext(r))])
			if r != nil {
				h = r.RedactRange(h, 0, maxCellBytes)
			}
			return "x'" + h[:min(len(h), maxCellBytes)] + "'" + truncNote(len(x)-maxCellBytes/2)
		}
		return "x'" + hex.EncodeToString(x) + "'"
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case time.Time:
		return x.Format(time.RFC3339Nano)
	default:
		return x
	}
}

// openDB opens one connection to the database at path for one call. Read
// connections use SQLite's read-only mode and query_only; every connection
// gets the authorizer that backs up CheckSQL. done closes it.
func openDB(ctx context.Context, path string, readOnly bool) (*sql.Conn, func(), error) {
	if path == "" {
		return nil, nil, fault.Invalid("no database is configured for this agent")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, fmt.Errorf("create folder for database: %w", err)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// An empty file is an empty SQLite database; creating it lets a
		// read-only connection open a database nobody has written yet.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("create database: %w", err)
		}
		f.Close()
	}
	q := fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeoutMS)
	if readOnly {
		q = "mode=ro&" + q + "&_pragma=query_only(1)"
	} else {
		// WAL lets coworkers read the shared database while one writes; it
		// is stored in the file, so setting it again is a no-op.
		q += "&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)"
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(path)+"?"+q)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err == nil {
		err = conn.Raw(func(dc any) error {
			r, ok := dc.(sqlite.AuthorizerRegisterer)
			if !ok {
				return errors.New("the SQLite driver offers no authorizer")
			}
			return r.RegisterAuthorizer(authorize)
		})
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		db.Close()
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	return conn, func() { conn.Close(); db.Close() }, nil
}

// authorize is the SQLite authorizer on every tool connection: the same
// policy as CheckSQL, enforced by SQLite itself on what it compiles.
func authorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthAttach, sqlite.AuthDetach:
		return sqlite.AuthorizerDeny
	case sqlite.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return sqlite.AuthorizerDeny
		}
	case sqlite.AuthPragma:
		if arg2 != "" && !readPragmas[strings.ToLower(arg1)] {
			return sqlite.AuthorizerDeny
		}
	}
	return sqlite.AuthorizerOK
}

// uriPath escapes a file path for a SQLite "file:" URI.
func uriPath(path string) string {
	p := filepath.ToSlash(path)
	if runtime.GOOS == "windows" && !strings.HasPrefix(p, "/") {
		p = "/" + p // file:/C:/dir/x.db
	}
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// sqlError turns a SQLite error into one that tells the model what to fix.
func sqlError(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("run SQL: %w", err)
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		return fault.Invalid("this statement writes, and this tool is read-only")
	case sqlite3.SQLITE_AUTH:
		return fault.Invalid("SQLite refused the statement (not authorized): ATTACH, DETACH, load_extension and setting pragmas are not allowed")
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return fmt.Errorf("run SQL: the database stayed locked by another writer for %d ms; try again: %w", busyTimeoutMS, err)
	case sqlite3.SQLITE_INTERRUPT:
		return fmt.Errorf("run SQL: stopped: %w", err)
	case sqlite3.SQLITE_ERROR, sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_RANGE, sqlite3.SQLITE_TOOBIG:
		msg := err.Error()
		if strings.Contains(msg, "not authorized") {
			return fault.Invalid("SQLite refused the statement (not authorized): ATTACH, DETACH, load_extension and setting pragmas are not allowed")
		}
		return fault.Invalid("SQL error: %s; fix the statement (list_tables shows the tables and their columns)", msg)
	}
	return fmt.Errorf("run SQL: %w", err)
}

// readOnlyHint adds which tool to use when a read-only tool was asked to write.
func readOnlyHint(err error, writer string) error {
	if errors.Is(err, fault.ErrInvalid) && strings.Contains(err.Error(), "this tool is read-only") {
		return fault.Invalid("this statement writes, and this tool is read-only; use %s to change data", writer)
	}
	return err
}
