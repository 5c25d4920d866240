package mcpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// impatientClient is an MCP client whose HTTP connection gives up when no
// response headers arrive within patience, as Claude Code and Gemini CLI do
// after 60 s. It counts the progress notifications it gets.
func (e *env) impatientClient(patience time.Duration, opts ...transport.StreamableHTTPCOption) (*client.Client, <-chan mcp.JSONRPCNotification) {
	e.t.Helper()
	hc := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: patience}}
	opts = append(opts, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + e.key}), transport.WithHTTPBasicClient(hc))
	c, err := client.NewStreamableHttpClient(e.srv.URL+mcpapi.Path, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	notes := make(chan mcp.JSONRPCNotification, 100)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case notes <- n:
		default:
		}
	})
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "impatient", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c, notes
}

// holdModel makes the agent's model answer only when release is called.
func (e *env) holdModel(answer string) (release func()) {
	gate := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(gate) }) }
	e.fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		<-gate
		return llmtest.Text(answer)
	})
	e.t.Cleanup(release)
	return release
}

func sendMessage(wait int, token any) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "send_message"
	req.Params.Arguments = map[string]any{"agent": "@slow", "message": "take your time", "wait_seconds": wait}
	if token != nil {
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
	}
	return req
}

func resultRun(t *testing.T, res *mcp.CallToolResult) mcpapi.RunView {
	t.Helper()
	var r mcpapi.RunView
	if len(res.Content) == 0 || res.IsError {
		t.Fatalf("send_message: %+v", res)
	}
	if err := json.Unmarshal([]byte(res.Content[0].(mcp.TextContent).Text), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A wait longer than the client's patience for response headers succeeds
// when the client sent a progress token: the answer is an event stream that
// starts at once and carries progress until the result.
func TestLongWaitStreamsProgress(t *testing.T) {
	const patience = 2 * time.Second
	e := newEnv(t, mcpapi.WithWaits(mcpapi.Waits{Progress: 200 * time.Millisecond, Bare: patience / 2}))
	c, notes := e.impatientClient(patience)
	mustCall(t, c, "create_agent", map[string]any{"name": "Slow"}, nil)
	release := e.holdModel("Finally done.")

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := c.CallTool(context.Background(), sendMessage(60, "tok-1"))
		got <- answer{res, err}
	}()
	// Progress until more than the client's patience has passed: the
	// connection outlived it.
	for {
		n := waittest.Recv(t, "a progress notification", notes)
		if n.Method != "notifications/progress" {
			continue
		}
		p := n.Params.AdditionalFields
		if p["progressToken"] != "tok-1" || p["total"] != float64(60) {
			t.Fatalf("progress = %v, want token tok-1 and total 60", p)
		}
		if p["progress"].(float64) > (patience + time.Second).Seconds() {
			break
		}
	}
	release()
	a := waittest.Recv(t, "the send_message result", got)
	if a.err != nil {
		t.Fatalf("send_message over a long wait: %v", a.err)
	}
	if r := resultRun(t, a.res); r.Status != "done" || r.Output != "Finally done." || r.Note != "" {
		t.Errorf("run = %s %q note %q, want done with the answer", r.Status, r.Output, r.Note)
	}
}

// Without a progress token the wait stops before the client would give up,
// and the answer says to poll get_run.
func TestBareWaitIsCappedAndSaysToPoll(t *testing.T) {
	const patience = 3 * time.Second
	e := newEnv(t, mcpapi.WithWaits(mcpapi.Waits{Progress: time.Second, Bare: patience / 3}))
	c, _ := e.impatientClient(patience)
	mustCall(t, c, "create_agent", map[string]any{"name": "Slow"}, nil)
	release := e.holdModel("Later.")
	res, err := c.CallTool(context.Background(), sendMessage(60, nil))
	if err != nil {
		t.Fatalf("send_message without a progress token: %v", err)
	}
	r := resultRun(t, res)
	if r.Status != "running" && r.Status != "queued" || !strings.Contains(r.Note, "poll get_run") || !strings.Contains(r.Note, r.ID) {
		t.Errorf("run = %s, note %q; want it still going and a note to poll get_run with its id", r.Status, r.Note)
	}
	release()
	if done, _ := e.ws.Runs.Wait(context.Background(), r.ID); done.Output != "Later." {
		t.Errorf("the run went on to %s %q, want done with its answer", done.Status, done.Output)
	}
}

// Arguments a client adds on its own are ignored and named; credentials and
// typos are still refused.
func TestUnknownArgumentsAreIgnoredAndNamed(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	text, isErr := call(t, c, "create_agent", map[string]any{"name": "Gem", "wait_for_previous": true})
	if isErr || !strings.Contains(text, `Ignored argument(s) "wait_for_previous"`) {
		t.Fatalf("create_agent with wait_for_previous: isError=%v %s", isErr, text)
	}
	if _, err := e.ws.Agents.ByHandle(context.Background(), "gem"); err != nil {
		t.Errorf("the agent was not created: %v", err)
	}
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"credential", "create_agent", map[string]any{"name": "X", "api_key": "sk-1"}, "looks like a credential"},
		{"typo", "create_agent", map[string]any{"nmae": "X"}, `did you mean "name"?`},
		{"name without its suffix", "get_run", map[string]any{"run": "run_1"}, `did you mean "run_id"?`},
		{"nested unknown", "update_agent", map[string]any{"agent": "@gem", "budget": map[string]any{"weekly": 1}}, `unknown argument "weekly"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if text, isErr := call(t, c, tc.tool, tc.args); !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s(%v): isError=%v %q, want an error containing %q", tc.tool, tc.args, isErr, text, tc.want)
			}
		})
	}
}

func TestProtocolEdges(t *testing.T) {
	e := newEnv(t)
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	if code, body := post(t, e, auth, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`); code != 200 || !strings.Contains(body, `"code":-32600`) {
		t.Errorf("batch: %d %s, want a -32600 error", code, body)
	}
	if _, body := post(t, e, auth, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":"{}"}}`); !strings.Contains(body, "must be a JSON object") || strings.Contains(body, "map[") {
		t.Errorf("string arguments: %s, want an error saying to send an object", body)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+mcpapi.Path, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET without a session: %d, want 405", res.StatusCode)
	}

	c := e.client(e.key)
	mustCall(t, c, "create_agent", map[string]any{"name": "Clerk"}, nil)
	mustCall(t, c, "db_execute", map[string]any{"agent": "@clerk", "sql": "CREATE TABLE t (x INTEGER)"}, nil)
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"two statements", "db_execute", map[string]any{"agent": "@clerk", "sql": "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"}, "2 statements"},
		{"shared, two statements", "space_db_execute", map[string]any{"sql": "CREATE TABLE a (x); CREATE TABLE b (y)"}, "2 statements"},
		{"limit over 200", "list_runs", map[string]any{"limit": 1000}, "between 1 and 200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if text, isErr := call(t, c, tc.tool, tc.args); !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s: isError=%v %q, want an error containing %q", tc.tool, isErr, text, tc.want)
			}
		})
	}
	var q struct{ Rows [][]any }
	mustCall(t, c, "db_query", map[string]any{"agent": "@clerk", "sql": "SELECT count(*) FROM t"}, &q)
	if q.Rows[0][0] != float64(0) {
		t.Errorf("rows after refused statements = %v, want 0", q.Rows[0][0])
	}
}

// Every schema is portable: no empty items schema, no type arrays (strict
// validators, Gemini and Cursor warn or refuse).
func TestSchemasArePortable(t *testing.T) {
	e := newEnv(t)
	res, err := e.client(e.key).ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["type"].([]any); ok {
				t.Errorf("%s %s: a type array", tool, path)
			}
			if items, ok := v["items"].(map[string]any); ok && len(items) == 0 {
				t.Errorf("%s %s: items is {}", tool, path)
			}
			for k, c := range v {
				walk(tool, path+"/"+k, c)
			}
		case []any:
			for _, c := range v {
				walk(tool, path+"/[]", c)
			}
		}
	}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool)
		var wire struct{ InputSchema any }
		if err := json.Unmarshal(b, &wire); err != nil || wire.InputSchema == nil {
			t.Fatalf("%s: no input schema (%v)", tool.Name, err)
		}
		walk(tool.Name, "", wire.InputSchema)
	}
}

// An SDK client gets a real session: an id, a GET stream that carries
// tools/list_changed when its key's tool set changes, and DELETE to end it.
// A bare POST without a session keeps working beside it.
func TestSessionsAndCompactToolSet(t *testing.T) {
	e := newEnv(t)
	c, notes := e.impatientClient(time.Minute, transport.WithContinuousListening())
	id := c.GetSessionId()
	if !strings.HasPrefix(id, "mcp-session-") {
		t.Fatalf("session id %q, want one", id)
	}
	list := func() int {
		res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return len(res.Tools)
	}
	if n := list(); n != 45 {
		t.Fatalf("tools = %d, want all 45 by default", n)
	}
	keys, _ := e.ws.Keys.List(context.Background())
	// The GET stream is open once the server can reach the session; each
	// change sends a notice, so keep changing until one arrives.
	waittest.Until(t, "tools/list_changed on the session's stream", func() bool {
		if _, err := e.ws.Keys.SetToolSet(context.Background(), keys[0].ID, apikey.ToolsCompact); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-notes:
			return n.Method == "notifications/tools/list_changed"
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	if n := list(); n != 28 {
		t.Errorf("compact tools = %d, want 28", n)
	}
	outside := mcp.CallToolRequest{}
	outside.Params.Name = "list_templates"
	if res, err := c.CallTool(context.Background(), outside); err == nil {
		t.Errorf("a tool outside the compact set answered: %+v", res)
	}
	auth := map[string]string{"Authorization": "Bearer " + e.key}
	if code, body := post(t, e, auth, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`); code != 200 || !strings.Contains(body, "agents") {
		t.Errorf("bare POST beside a session: %d %s", code, body)
	}
	other, _, _ := e.ws.Keys.Create(context.Background(), "other")
	if code, _ := post(t, e, map[string]string{"Authorization": "Bearer " + other, "Mcp-Session-Id": id}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != 404 {
		t.Errorf("another key's use of the session: %d, want 404", code)
	}
	req, _ := http.NewRequest("DELETE", e.srv.URL+mcpapi.Path, nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Mcp-Session-Id", id)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("DELETE: %d", res.StatusCode)
	}
	if code, _ := post(t, e, map[string]string{"Authorization": "Bearer " + e.key, "Mcp-Session-Id": id}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); code != 404 {
		t.Errorf("ended session: %d, want 404", code)
	}
}
