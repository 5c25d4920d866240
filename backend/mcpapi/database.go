package mcpapi

import (
	"context"
	"encoding/json"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/tool"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// databaseTools reach an agent's own database and the workspace's shared
// one, with the same SQL guard the agents' own tools have (no ATTACH,
// DETACH, load_extension, PRAGMA writes or VACUUM INTO; reads read-only).
func databaseTools() []toolDef {
	sqlArgs := `"sql":{"type":"string","description":"One SQLite statement (no ; between statements: send each in its own call); use ? placeholders for values."},` +
		`"args":{"type":"array","description":"Values for the ? placeholders, in order.","items":{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"},{"type":"null"}]}}`
	own := func(ctx context.Context, w *workspace.Workspace, ref string) (string, error) {
		a, err := findAgent(ctx, w, ref)
		if err != nil {
			return "", err
		}
		return agentDB(w, a.ID), nil
	}
	shared := func(_ context.Context, w *workspace.Workspace, _ string) (string, error) { return sharedDB(w), nil }

	type sqlIn struct {
		Agent string `json:"agent"`
		SQL   string `json:"sql"`
		Args  []any  `json:"args"`
	}
	list := func(name, title, desc, schema string, path func(context.Context, *workspace.Workspace, string) (string, error)) toolDef {
		return toolDef{name: name, title: title, description: desc, schema: schema, readOnly: true, idempotent: true, masked: true,
			run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
				var in sqlIn
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				p, err := path(ctx, w, in.Agent)
				if err != nil {
					return nil, err
				}
				tables, err := tool.ListTables(ctx, p, redactor(w))
				if err != nil {
					return nil, err
				}
				return map[string]any{"tables": tables}, nil
			}}
	}
	// statement builds db_query / db_execute and their shared twins: guard
	// the SQL, find the database, run it (read-only or not).
	statement := func(name, title, desc, schema string, path func(context.Context, *workspace.Workspace, string) (string, error), read bool) toolDef {
		return toolDef{name: name, title: title, description: desc, schema: schema, readOnly: read, idempotent: read, destructive: !read, masked: true,
			run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
				var in sqlIn
				if err := decode(args, &in); err != nil {
					return nil, err
				}
				if err := tool.CheckSQL(in.SQL); err != nil {
					return nil, err
				}
				if n := tool.Statements(in.SQL); n > 1 {
					return nil, fault.Invalid("sql holds %d statements; %s runs one: send each statement in its own call", n, name)
				}
				p, err := path(ctx, w, in.Agent)
				if err != nil {
					return nil, err
				}
				if read {
					return tool.QueryDB(ctx, p, in.SQL, in.Args, redactor(w))
				}
				return tool.ExecDB(ctx, p, in.SQL, in.Args)
			}}
	}
	query := func(name, title, desc, schema string, path func(context.Context, *workspace.Workspace, string) (string, error)) toolDef {
		return statement(name, title, desc, schema, path, true)
	}
	exec := func(name, title, desc, schema string, path func(context.Context, *workspace.Workspace, string) (string, error)) toolDef {
		return statement(name, title, desc, schema, path, false)
	}
	agentOnlySchema := `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`
	agentSQL := `{"type":"object","properties":{` + agentRef + `,` + sqlArgs + `},"required":["agent","sql"],"additionalProperties":false}`
	sharedSQL := `{"type":"object","properties":{` + sqlArgs + `},"required":["sql"],"additionalProperties":false}`
	return []toolDef{
		list("list_tables", "List an agent's tables", "List the tables and views of an agent's private SQLite database, with their CREATE statements.", agentOnlySchema, own),
		query("db_query", "Query an agent's database", "Run one read-only SQL statement (SELECT, WITH, EXPLAIN) on an agent's private SQLite database. Returns {columns, rows, row_count, truncated}, at most 500 rows.", agentSQL, own),
		exec("db_execute", "Change an agent's database", "Run SQL that changes an agent's private SQLite database (CREATE, INSERT, UPDATE, DELETE, ALTER, DROP). Returns {rows_affected, last_insert_id}.", agentSQL, own),
		list("list_space_tables", "List shared tables", "List the tables and views of the workspace's shared SQLite database, which every agent can use.", `{"type":"object","properties":{},"additionalProperties":false}`, shared),
		query("space_db_query", "Query the shared database", "Run one read-only SQL statement on the workspace's shared SQLite database. Returns {columns, rows, row_count, truncated}, at most 500 rows.", sharedSQL, shared),
		exec("space_db_execute", "Change the shared database", "Run SQL that changes the workspace's shared SQLite database. Returns {rows_affected, last_insert_id}.", sharedSQL, shared),
	}
}

// redactor masks the workspace's variable values in what the database
// tools return (toolDef.masked), as the agents' own database tools do: the
// cells before they are cut, then the whole result. A client of the API
// never reads a value in a row.
func redactor(w *workspace.Workspace) *secret.Redactor {
	if w.Variables == nil {
		return nil
	}
	return w.Variables.Redactor()
}
