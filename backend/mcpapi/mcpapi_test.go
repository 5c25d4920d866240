package mcpapi_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

type env struct {
	t    testing.TB
	home *workspace.Home
	srv  *httptest.Server
	ws   *workspace.Workspace
	key  string
	fake *llmtest.Server
}

func newEnv(t testing.TB, opts ...mcpapi.Option) *env {
	fake := llmtest.New(t)
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir(),
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { home.Serve(ctx); close(served) }()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: "ui-token", MCP: mcpapi.Handler(home, "test", nil, opts...)}))
	t.Cleanup(func() { srv.Close(); stop(); <-served; home.Close() })
	ws, _ := home.Workspace(home.Current())
	key, _, err := ws.Keys.Create(context.Background(), "tests")
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, home: home, srv: srv, ws: ws, key: key, fake: fake}
}

func (e *env) client(key string) *client.Client {
	e.t.Helper()
	c, err := client.NewStreamableHttpClient(e.srv.URL+mcpapi.Path, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		e.t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// call calls a tool and returns its text and whether it was a tool error.
func call(t testing.TB, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text, res.IsError
}

func mustCall(t testing.TB, c *client.Client, name string, args map[string]any, out any) {
	t.Helper()
	text, isErr := call(t, c, name, args)
	if isErr {
		t.Fatalf("%s(%v): tool error %s", name, args, text)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(text), out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, text)
		}
	}
}

func TestToolsListGolden(t *testing.T) {
	e := newEnv(t)
	res, err := e.client(e.key).ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.MarshalIndent(res.Tools, "", "  ")
	path := filepath.Join("testdata", "tools.golden.json")
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (go test -update to create): %v", err)
	}
	if string(got) != string(want) {
		t.Errorf("tools/list changed; review and run go test -update\n%s", got)
	}
	names := map[string]bool{}
	for _, tool := range res.Tools {
		names[tool.Name] = true
		if tool.Annotations.ReadOnlyHint == nil || tool.Description == "" {
			t.Errorf("%s: missing annotations or description", tool.Name)
		}
	}
	for _, n := range []string{"list_spaces", "list_agents", "get_agent", "create_agent", "update_agent", "delete_agent",
		"send_message", "list_runs", "get_run", "list_tables", "db_query", "db_execute", "list_space_tables", "space_db_query", "space_db_execute",
		"search_connectors", "list_connectors", "list_agent_connectors", "attach_connector", "detach_connector",
		"list_templates", "get_template", "create_template", "update_template", "delete_template", "upsert_template_skill",
		"delete_template_skill", "upsert_template_schedule", "delete_template_schedule", "upsert_template_file",
		"delete_template_file", "submit_template"} {
		if !names[n] {
			t.Errorf("tool %s missing", n)
		}
	}
	if len(res.Tools) != 45 {
		t.Errorf("%d tools, want the product's 45", len(res.Tools))
	}
}

func TestAgentTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	var spaces struct{ Spaces []mcpapi.Space }
	mustCall(t, c, "list_spaces", nil, &spaces)
	if len(spaces.Spaces) != 1 || spaces.Spaces[0].Agents != 0 {
		t.Fatalf("spaces = %+v", spaces)
	}
	var a mcpapi.Agent
	mustCall(t, c, "create_agent", map[string]any{"name": "Inbox Keeper", "soul": "# Answer mail", "capabilities": []string{"files", "database"}}, &a)
	if a.Handle != "inbox-keeper" || a.Space != "Main" || a.Soul != "# Answer mail" {
		t.Fatalf("created %+v", a)
	}
	var list struct{ Agents []mcpapi.Agent }
	mustCall(t, c, "list_agents", nil, &list)
	if len(list.Agents) != 1 || list.Agents[0].Soul != "" {
		t.Errorf("list_agents = %+v (souls are only in get_agent)", list)
	}
	var got mcpapi.Agent
	mustCall(t, c, "get_agent", map[string]any{"agent": "@inbox-keeper"}, &got)
	if got.ID != a.ID || got.Soul != "# Answer mail" {
		t.Errorf("get_agent by handle = %+v", got)
	}
	mustCall(t, c, "update_agent", map[string]any{"agent": a.ID, "soul": "# v2", "model": "gpt-4o"}, &got)
	if got.Soul != "# v2" || got.Model != "gpt-4o" || got.Handle != "inbox-keeper" {
		t.Errorf("update_agent = %+v", got)
	}
	mustCall(t, c, "update_agent", map[string]any{"agent": a.ID, "budget": map[string]any{"day_usd": 2.5, "run_tokens": 40000}}, &got)
	if got.Budget == nil || got.Budget.DayUSD != 2.5 || got.Budget.RunTokens != 40000 || got.Soul != "# v2" {
		t.Errorf("update_agent budget = %+v", got.Budget)
	}
	mustCall(t, c, "update_agent", map[string]any{"agent": a.ID, "budget": map[string]any{"run_tokens": 0}}, &got)
	if got.Budget == nil || got.Budget.DayUSD != 2.5 || got.Budget.RunTokens != 0 {
		t.Errorf("update_agent clearing one limit = %+v", got.Budget)
	}
	if !got.Network {
		t.Errorf("a new agent's network is off")
	}
	mustCall(t, c, "update_agent", map[string]any{"agent": a.ID, "network": false}, &got)
	if stored, _ := e.ws.Agents.Get(context.Background(), a.ID); got.Network || stored.Network {
		t.Errorf("update_agent network false: got %v, stored %v", got.Network, stored.Network)
	}
	souls, _ := e.ws.Agents.Souls(context.Background(), a.ID)
	if len(souls) != 2 {
		t.Errorf("soul versions = %d, want 2", len(souls))
	}

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"unknown agent", "get_agent", map[string]any{"agent": "@nobody"}, "no agent"},
		{"handle never changes", "update_agent", map[string]any{"agent": a.ID, "handle": "new"}, "never changes"},
		{"duplicate handle", "create_agent", map[string]any{"name": "X", "handle": "inbox-keeper"}, "already taken"},
		{"unknown space", "create_agent", map[string]any{"name": "X", "space": "Nowhere"}, "created in the Rerun app"},
		{"credential refused", "create_agent", map[string]any{"name": "X", "api_key": "sk-123"}, "looks like a credential"},
		{"unknown nested argument", "update_agent", map[string]any{"agent": a.ID, "budget": map[string]any{"colour": "red"}}, "unknown argument"},
		{"bad capability", "create_agent", map[string]any{"name": "X", "capabilities": []string{"teleport"}}, "unknown capability"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := call(t, c, tc.tool, tc.args)
			if !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s: isError=%v %q, want an error containing %q", tc.tool, isErr, text, tc.want)
			}
		})
	}
	mustCall(t, c, "list_agents", nil, &list)
	if len(list.Agents) != 1 {
		t.Errorf("failed calls stored something: %d agents", len(list.Agents))
	}
	mustCall(t, c, "delete_agent", map[string]any{"agent": "@inbox-keeper"}, nil)
	mustCall(t, c, "list_agents", nil, &list)
	if len(list.Agents) != 0 {
		t.Errorf("agent still listed after delete_agent")
	}
}

func TestSendMessageAndRuns(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	var a mcpapi.Agent
	mustCall(t, c, "create_agent", map[string]any{"name": "Helper", "capabilities": []string{"files"}}, &a)
	e.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "1", Name: "write_file", Args: `{"path":"x.txt","content":"hi"}`}), llmtest.Text("Wrote x.txt."))
	var r mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": "@helper", "message": "write a file", "wait_seconds": 20}, &r)
	if r.Status != "done" || r.Output != "Wrote x.txt." || r.Source != "api" || r.Agent != "@helper" {
		t.Fatalf("send_message = %+v", r.Run)
	}
	var full mcpapi.RunView
	mustCall(t, c, "get_run", map[string]any{"run_id": r.ID}, &full)
	if len(full.Steps) != 5 {
		t.Errorf("get_run steps = %d, want 5", len(full.Steps))
	}
	e.fake.Script(llmtest.Text("second"))
	var queued mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": a.ID, "message": "again"}, &queued)
	if queued.Status != "queued" || queued.SessionID != r.SessionID {
		t.Errorf("send_message without wait = %s in %s, want queued in the same API session %s", queued.Status, queued.SessionID, r.SessionID)
	}
	e.ws.Runs.Wait(context.Background(), queued.ID)
	var runs struct{ Runs []mcpapi.RunView }
	mustCall(t, c, "list_runs", map[string]any{"agent": "@helper", "status": "done"}, &runs)
	if len(runs.Runs) != 2 || runs.Runs[0].ID != queued.ID {
		t.Errorf("list_runs = %d runs", len(runs.Runs))
	}
	mustCall(t, c, "list_runs", map[string]any{"source": "chat"}, &runs)
	if len(runs.Runs) != 0 {
		t.Errorf("list_runs source=chat = %d, want 0", len(runs.Runs))
	}
	mustCall(t, c, "list_runs", map[string]any{"query": "write"}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != r.ID || runs.Runs[0].Agent != "@helper" {
		t.Errorf("list_runs query=write = %+v, want the run asked to write a file", runs.Runs)
	}
	mustCall(t, c, "list_runs", map[string]any{"query": "again", "agent": "@helper", "status": "done"}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != queued.ID {
		t.Errorf("list_runs query=again = %+v, want the second run", runs.Runs)
	}
	mustCall(t, c, "list_runs", map[string]any{"query": "again", "source": "chat"}, &runs)
	if len(runs.Runs) != 0 {
		t.Errorf("list_runs query=again source=chat = %d, want 0", len(runs.Runs))
	}
	if text, isErr := call(t, c, "list_runs", map[string]any{"query": "again", "status": "nope"}); !isErr || !strings.Contains(text, "status") {
		t.Errorf("list_runs bad status with query: %v %s", isErr, text)
	}
	if text, isErr := call(t, c, "get_run", map[string]any{"run_id": "run_nope"}); !isErr || !strings.Contains(text, "no run") {
		t.Errorf("unknown run: %v %s", isErr, text)
	}
	if text, isErr := call(t, c, "send_message", map[string]any{"agent": "@helper", "message": "x", "wait_seconds": 999}); !isErr {
		t.Errorf("wait_seconds 999 accepted: %s", text)
	}
}

func TestDatabaseTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Clerk"}, nil)
	mustCall(t, c, "db_execute", map[string]any{"agent": "@clerk", "sql": "CREATE TABLE t (x INTEGER)"}, nil)
	mustCall(t, c, "db_execute", map[string]any{"agent": "@clerk", "sql": "INSERT INTO t VALUES (?)", "args": []any{42}}, nil)
	var q struct {
		Columns []string
		Rows    [][]any
	}
	mustCall(t, c, "db_query", map[string]any{"agent": "@clerk", "sql": "SELECT x FROM t"}, &q)
	if len(q.Rows) != 1 || q.Rows[0][0] != float64(42) {
		t.Errorf("db_query = %+v", q)
	}
	var tables struct{ Tables []struct{ Name string } }
	mustCall(t, c, "list_tables", map[string]any{"agent": "@clerk"}, &tables)
	if len(tables.Tables) != 1 || tables.Tables[0].Name != "t" {
		t.Errorf("list_tables = %+v", tables)
	}
	mustCall(t, c, "space_db_execute", map[string]any{"sql": "CREATE TABLE shared_t (y TEXT)"}, nil)
	mustCall(t, c, "list_space_tables", nil, &tables)
	if len(tables.Tables) != 1 || tables.Tables[0].Name != "shared_t" {
		t.Errorf("list_space_tables = %+v", tables)
	}
	for _, bad := range []map[string]any{
		{"agent": "@clerk", "sql": "ATTACH DATABASE '/etc/x' AS x"},
		{"agent": "@clerk", "sql": "INSERT INTO t VALUES (1)"}, // a write through the read-only tool
	} {
		if text, isErr := call(t, c, "db_query", bad); !isErr {
			t.Errorf("db_query %v accepted: %s", bad["sql"], text)
		}
	}
	if text, isErr := call(t, c, "space_db_execute", map[string]any{"sql": "VACUUM INTO '/tmp/copy.db'"}); !isErr {
		t.Errorf("VACUUM INTO accepted: %s", text)
	}
}

func post(t testing.TB, e *env, header map[string]string, body string) (int, string) {
	req, _ := http.NewRequest("POST", e.srv.URL+mcpapi.Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		if k == "Host" {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestAuthAndGuards(t *testing.T) {
	e := newEnv(t)
	other, err := e.home.Create(context.Background(), "Other")
	if err != nil {
		t.Fatal(err)
	}
	ow, _ := e.home.Workspace(other.ID)
	otherKey, _, _ := ow.Keys.Create(context.Background(), "other")
	revoked, k, _ := e.ws.Keys.Create(context.Background(), "old")
	e.ws.Keys.Revoke(context.Background(), k.ID)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   int
	}{
		{"good key", map[string]string{"Authorization": "Bearer " + e.key}, 200},
		{"no key", nil, 401},
		{"wrong key", map[string]string{"Authorization": "Bearer rrk_wrong"}, 401},
		{"revoked key", map[string]string{"Authorization": "Bearer " + revoked}, 401},
		{"UI token is not an API key", map[string]string{"Authorization": "Bearer ui-token"}, 401},
		{"foreign host", map[string]string{"Authorization": "Bearer " + e.key, "Host": "evil.example"}, 403},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + e.key, "Origin": "https://evil.example"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, body := post(t, e, tc.header, list); got != tc.want {
				t.Errorf("status %d, want %d: %s", got, tc.want, body)
			}
		})
	}
	// A key reaches its own workspace only.
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_agent","arguments":{"name":"Elsewhere"}}}`
	if code, body := post(t, e, map[string]string{"Authorization": "Bearer " + otherKey}, call); code != 200 || strings.Contains(body, `"isError":true`) {
		t.Fatalf("create in other workspace: %d %s", code, body)
	}
	mine, _ := e.ws.Agents.List(context.Background())
	theirs, _ := ow.Agents.List(context.Background())
	if len(mine) != len(workspace.Builtins) || len(theirs) != len(workspace.Builtins)+1 { // each has its @rerun and @foreman
		t.Errorf("agents: mine %d, theirs %d (with @rerun); the other workspace's key must act there only", len(mine), len(theirs))
	}
}

// A bare JSON-RPC POST works without initialize (stateless mode), as the
// README's curl lines show.
func TestStatelessCurl(t *testing.T) {
	e := newEnv(t)
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	code, body := post(t, e, auth, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`)
	if code != 200 || !strings.Contains(body, `\"agents\":[]`) {
		t.Errorf("tools/call without initialize: %d %s", code, body)
	}
	code, body = post(t, e, auth, `{"jsonrpc":"2.0","id":1,"method":"no/such"}`)
	if code != 200 || !strings.Contains(body, `"error"`) {
		t.Errorf("unknown method: %d %s, want a JSON-RPC error", code, body)
	}
	code, body = post(t, e, auth, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create_space","arguments":{"name":"x"}}}`)
	if !strings.Contains(body, "error") {
		t.Errorf("create_space: %d %s, want an error (spaces are created in the app)", code, body)
	}
}

// FuzzRequest posts arbitrary bodies: the endpoint answers every one without
// a 5xx and keeps working.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_agent","arguments":{"name":"F"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_agent","arguments":{"agent":7}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"db_query","arguments":{"agent":"x","sql":"ATTACH 'a' AS b"}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, `{`, `null`, `{"jsonrpc":"1.0"}`,
	} {
		f.Add(s)
	}
	e := newEnv(f)
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	f.Fuzz(func(t *testing.T, body string) {
		if code, out := post(t, e, auth, body); code >= 500 {
			t.Errorf("body %q: %d %s", body, code, out)
		}
		if code, _ := post(t, e, auth, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != 200 {
			t.Fatalf("endpoint broken after %q: %d", body, code)
		}
	})
}

func TestMissingArgumentsSayWhatToSend(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	for tool, want := range map[string]string{
		"get_agent":      "say which agent",
		"create_agent":   "needs a name",
		"send_message":   "say which agent",
		"get_run":        "say which run",
		"db_query":       "sql is empty",
		"space_db_query": "",
	} {
		text, isErr := call(t, c, tool, map[string]any{})
		if !isErr || !strings.Contains(text, want) {
			t.Errorf("%s with no arguments: isError=%v %q, want an error containing %q", tool, isErr, text, want)
		}
	}
}

// A run that pauses over the API reads back as paused, with its last message
// as output and the card it waits on; nothing in the API answers it.
func TestPausedRunOverMCP(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Asker", "capabilities": []string{"human"}}, nil)
	e.fake.Script(llmtest.Reply{Text: "I need one thing.", ToolCalls: []llmtest.ToolCall{{ID: "q", Name: "ask_question",
		Args: `{"questions":[{"question":"Which account?","options":["Work","Home"]}]}`}}})
	var r mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": "@asker", "message": "pay the bill", "wait_seconds": 20}, &r)
	if r.Status != "paused" || r.Output != "I need one thing." {
		t.Fatalf("send_message = %s %q, want paused with the last message", r.Status, r.Output)
	}
	var runs struct{ Runs []mcpapi.RunView }
	mustCall(t, c, "list_runs", map[string]any{"status": "paused"}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].ID != r.ID {
		t.Fatalf("list_runs status=paused = %+v", runs.Runs)
	}
	var full mcpapi.RunView
	mustCall(t, c, "get_run", map[string]any{"run_id": r.ID}, &full)
	if full.WaitingFor == nil || full.WaitingFor.Kind != "question" || !strings.Contains(string(full.WaitingFor.Request), "Which account?") {
		t.Fatalf("get_run waiting_for = %+v", full.WaitingFor)
	}
	tools, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if strings.Contains(tl.Name, "answer") || strings.Contains(tl.Name, "approve") || strings.Contains(tl.Name, "pause") {
			t.Errorf("tool %s could answer a card on someone's behalf", tl.Name)
		}
	}
}

// A message to an API conversation whose card is still open is refused
// with what to do, as in the app's chat; a new session is not held up.
func TestSendMessageRefusedWhileACardIsOpen(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Asker", "capabilities": []string{"human"}}, nil)
	e.fake.Script(llmtest.Reply{Text: "I need one thing.", ToolCalls: []llmtest.ToolCall{{ID: "q", Name: "ask_question",
		Args: `{"questions":[{"question":"Which account?","options":["Work","Home"]}]}`}}})
	var r mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": "@asker", "message": "pay the bill", "wait_seconds": 20}, &r)
	if r.Status != "paused" {
		t.Fatalf("send_message = %s, want paused", r.Status)
	}
	text, isErr := call(t, c, "send_message", map[string]any{"agent": "@asker", "message": "any news?"})
	if !isErr || !strings.Contains(text, "answer or dismiss the card in the Rerun app first") {
		t.Fatalf("send_message while a card is open: isError=%v %q, want refused with what to do", isErr, text)
	}
	e.fake.Script(llmtest.Text("Fresh start."))
	var fresh mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": "@asker", "message": "other thing", "new_session": true, "wait_seconds": 20}, &fresh)
	if fresh.Status != "done" || fresh.SessionID == r.SessionID {
		t.Fatalf("send_message new_session = %s in %s, want done in a new session", fresh.Status, fresh.SessionID)
	}
}

func TestSkillTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Writer"}, nil)
	md := "---\nname: weekly-report\ndescription: Write the Friday report. Use on Fridays.\n---\n\n# Weekly report\n\n1. Read shared/metrics.csv\n"
	var up mcpapi.SkillView
	mustCall(t, c, "upsert_skill", map[string]any{"agent": "@writer", "skill_md": md, "files": map[string]any{"template.md": "# Week {{n}}"}}, &up)
	if up.Name != "weekly-report" || len(up.Files) != 1 || up.Files[0] != "template.md" {
		t.Fatalf("upsert_skill = %+v", up)
	}
	var list struct {
		Skills []struct{ Name, Description string }
	}
	mustCall(t, c, "list_skills", map[string]any{"agent": "@writer"}, &list)
	if len(list.Skills) != 1 || list.Skills[0].Description != "Write the Friday report. Use on Fridays." {
		t.Fatalf("list_skills = %+v", list)
	}
	var got mcpapi.SkillView
	mustCall(t, c, "get_skill", map[string]any{"agent": "@writer", "name": "weekly-report"}, &got)
	if !strings.Contains(got.SkillMD, "1. Read shared/metrics.csv") || !strings.Contains(got.SkillMD, "name: weekly-report") {
		t.Fatalf("get_skill skill_md = %q", got.SkillMD)
	}
	var file struct{ Content string }
	mustCall(t, c, "get_skill", map[string]any{"agent": "@writer", "name": "weekly-report", "file": "template.md"}, &file)
	if file.Content != "# Week {{n}}" {
		t.Fatalf("get_skill file = %q", file.Content)
	}
	if text, isErr := call(t, c, "upsert_skill", map[string]any{"agent": "@writer", "skill_md": "no front matter"}); !isErr || !strings.Contains(text, "skill_md") {
		t.Fatalf("bad SKILL.md: %v %s", isErr, text)
	}
	if text, isErr := call(t, c, "get_skill", map[string]any{"agent": "@writer", "name": "weekly-report", "file": "../../agent.db"}); !isErr {
		t.Fatalf("path escape accepted: %s", text)
	}
	mustCall(t, c, "delete_skill", map[string]any{"agent": "@writer", "name": "weekly-report"}, nil)
	mustCall(t, c, "list_skills", map[string]any{"agent": "@writer"}, &list)
	if len(list.Skills) != 0 {
		t.Fatalf("after delete_skill: %+v", list)
	}
	if text, isErr := call(t, c, "delete_skill", map[string]any{"agent": "@writer", "name": "weekly-report"}); !isErr || !strings.Contains(text, "no skill") {
		t.Fatalf("deleting a missing skill: %v %s", isErr, text)
	}
}
