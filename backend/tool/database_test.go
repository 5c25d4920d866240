package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func TestDatabaseTools(t *testing.T) {
	env := testEnv(t)
	steps := []struct {
		name  string
		tool  string
		input map[string]any
		want  string // exact output
		err   string
	}{
		{"empty database lists no tables", "list_tables", map[string]any{}, `{"tables":[]}`, ""},
		{"create", "db_execute", map[string]any{"sql": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, score REAL, data BLOB)"}, `{"rows_affected":0,"last_insert_id":0}`, ""},
		{"insert with args", "db_execute", map[string]any{"sql": "INSERT INTO notes (body, score) VALUES (?, ?)", "args": []any{"it's <b>", 3}}, `{"rows_affected":1,"last_insert_id":1}`, ""},
		{"insert bool and null", "db_execute", map[string]any{"sql": "INSERT INTO notes (body, score) VALUES (?, ?)", "args": []any{true, nil}}, `{"rows_affected":1,"last_insert_id":2}`, ""},
		{"several statements", "db_execute", map[string]any{"sql": "INSERT INTO notes (body) VALUES ('x'); INSERT INTO notes (body) VALUES ('y');"}, `{"rows_affected":1,"last_insert_id":4}`, ""},
		{"update", "db_execute", map[string]any{"sql": "UPDATE notes SET score = 1.5 WHERE id > ?", "args": []any{2}}, `{"rows_affected":2,"last_insert_id":0}`, ""},
		{"query", "db_query", map[string]any{"sql": "SELECT id, body, score, typeof(score) FROM notes WHERE id <= ? ORDER BY id", "args": []any{2}},
			`{"columns":["id","body","score","typeof(score)"],"rows":[[1,"it's <b>",3,"real"],[2,"1",null,"null"]],"row_count":2,"truncated":false}`, ""},
		{"blob and infinity", "db_query", map[string]any{"sql": "SELECT x'00ff', x'6869', 1e999"},
			`{"columns":["x'00ff'","x'6869'","1e999"],"rows":[["x'00ff'","hi","+Inf"]],"row_count":1,"truncated":false}`, ""},
		{"pragma table_info", "db_query", map[string]any{"sql": "SELECT name FROM pragma_table_info('notes') WHERE pk = 1"},
			`{"columns":["name"],"rows":[["id"]],"row_count":1,"truncated":false}`, ""},
		{"pragma read", "db_query", map[string]any{"sql": "PRAGMA table_info(notes)"}, "", ""},
		{"list tables", "list_tables", map[string]any{}, `{"tables":[{"name":"notes","type":"table","sql":"CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, score REAL, data BLOB)"}]}`, ""},
		{"shared database is separate", "list_space_tables", map[string]any{}, `{"tables":[]}`, ""},
		{"shared create", "space_db_execute", map[string]any{"sql": "CREATE TABLE leads (name TEXT); INSERT INTO leads VALUES ('acme')"}, `{"rows_affected":1,"last_insert_id":1}`, ""},
		{"shared query", "space_db_query", map[string]any{"sql": "SELECT name FROM leads"}, `{"columns":["name"],"rows":[["acme"]],"row_count":1,"truncated":false}`, ""},
		{"own db has no shared table", "db_query", map[string]any{"sql": "SELECT * FROM leads"}, "", "SQL error: SQL logic error: no such table: leads"},

		{"query refuses writes", "db_query", map[string]any{"sql": "DELETE FROM notes"}, "", "this statement writes, and this tool is read-only; use db_execute to change data"},
		{"shared query refuses writes", "space_db_query", map[string]any{"sql": "INSERT INTO leads VALUES ('x')"}, "", "use space_db_execute to change data"},
		{"query refuses writing CTE", "db_query", map[string]any{"sql": "WITH x AS (SELECT 1) INSERT INTO notes (body) SELECT * FROM x"}, "", "read-only"},
		{"query refuses several statements", "db_query", map[string]any{"sql": "SELECT 1; SELECT 2"}, "", "db_query runs one statement at a time"},
		{"execute refuses args with several statements", "db_execute", map[string]any{"sql": "SELECT ?; SELECT ?", "args": []any{1, 2}}, "", "args go with a single statement"},
		{"attach", "db_execute", map[string]any{"sql": "ATTACH 'other.db' AS o"}, "", "ATTACH is not allowed"},
		{"attach on query", "space_db_query", map[string]any{"sql": "attach ':memory:' as m"}, "", "ATTACH is not allowed"},
		{"load_extension", "db_query", map[string]any{"sql": "SELECT load_extension('x')"}, "", "load_extension is not allowed"},
		{"pragma write", "db_execute", map[string]any{"sql": "PRAGMA journal_mode = DELETE"}, "", "PRAGMA journal_mode = … is not allowed"},
		{"query_only cannot be lifted", "db_query", map[string]any{"sql": "PRAGMA query_only = 0"}, "", "PRAGMA query_only = … is not allowed"},
		{"vacuum into", "db_execute", map[string]any{"sql": "VACUUM INTO 'copy.db'"}, "", "VACUUM INTO is not allowed"},
		{"syntax error", "db_execute", map[string]any{"sql": "CREAT TABLE x (a)"}, "", `SQL error: SQL logic error: near "CREAT": syntax error`},
		{"constraint", "db_execute", map[string]any{"sql": "INSERT INTO notes (id) VALUES (1)"}, "", "UNIQUE constraint failed: notes.id"},
		{"object arg", "db_execute", map[string]any{"sql": "SELECT ?", "args": []any{map[string]any{"a": 1}}}, "", "args[0] is an object or array"},
		{"missing sql", "db_query", map[string]any{}, "", "sql is empty"},
		{"unknown argument", "db_query", map[string]any{"query": "SELECT 1"}, "", `unknown field "query"`},
	}
	for _, tt := range steps {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, tt.tool, tt.input)
			if tt.err != "" {
				wantErr(t, err, fault.ErrInvalid, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestQueryCaps(t *testing.T) {
	env := testEnv(t)
	mustCall(t, env, "db_execute", map[string]any{"sql": "CREATE TABLE n (i INTEGER)"})
	mustCall(t, env, "db_execute", map[string]any{"sql": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 600) INSERT INTO n SELECT i FROM c"})
	tests := []struct {
		name      string
		sql       string
		rows      int
		truncated bool
	}{
		{"under the row cap", "SELECT i FROM n LIMIT 500", 500, false},
		{"over the row cap", "SELECT i FROM n", MaxQueryRows, true},
		{"over the byte cap", "SELECT i, printf('%.2000c', 'x') FROM n", MaxQueryBytes / 2010, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := mustCall(t, env, "db_query", map[string]any{"sql": tt.sql})
			var res QueryResult
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
			if res.RowCount != tt.rows || len(res.Rows) != tt.rows || res.Truncated != tt.truncated {
				t.Errorf("got %d rows (row_count %d), truncated %v; want %d, %v", len(res.Rows), res.RowCount, res.Truncated, tt.rows, tt.truncated)
			}
			if len(out) > MaxQueryBytes+1024 {
				t.Errorf("got %d bytes of output, want at most about %d", len(out), MaxQueryBytes)
			}
		})
	}
	t.Run("long cell is cut", func(t *testing.T) {
		out := mustCall(t, env, "db_query", map[string]any{"sql": "SELECT printf('%.20000c', 'y')"})
		want := fmt.Sprintf(`[truncated: %d more bytes]`, 20000-maxCellBytes)
		if !strings.Contains(out, want) || len(out) > maxCellBytes+200 {
			t.Errorf("got %d bytes %q…, want a cell cut at %d with %q", len(out), out[:60], maxCellBytes, want)
		}
	})
}

// The authorizer refuses what the guard refuses even when SQL reaches SQLite
// without the guard.
func TestAuthorizer(t *testing.T) {
	env := testEnv(t)
	tests := []struct {
		name, sql string
		readOnly  bool
		allowed   bool
	}{
		{"attach", "ATTACH ':memory:' AS m", false, false},
		{"detach", "DETACH main", false, false},
		{"load_extension", "SELECT load_extension('x')", true, false},
		{"pragma set", "PRAGMA user_version = 3", false, false},
		{"pragma set call form", "PRAGMA query_only(0)", true, false},
		{"pragma read", "PRAGMA user_version", true, true},
		{"pragma table_info", "PRAGMA table_info(x)", true, true},
		{"select", "SELECT abs(-1)", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, done, err := openDB(context.Background(), env.AgentDB, tt.readOnly)
			if err != nil {
				t.Fatal(err)
			}
			defer done()
			_, err = conn.ExecContext(context.Background(), tt.sql)
			if tt.allowed {
				if err != nil {
					t.Errorf("got %v, want allowed", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "not authorized") {
				t.Errorf("got %v, want a not authorized error", err)
			}
		})
	}
}

// Stopping the run interrupts a runaway query.
func TestQueryCancel(t *testing.T) {
	env := testEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := QueryDB(ctx, env.AgentDB, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the context's error", err)
	}
}
