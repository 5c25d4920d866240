package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

const token = "test-token"

type env struct {
	t    *testing.T
	srv  *httptest.Server
	home *workspace.Home
	ws   string
	box  string
}

func newEnv(t testing.TB) *env { return newEnvWith(t, workspace.Config{}) }

// newEnvWith opens a data directory with cfg (DataDir is made here) and
// serves it, knowing its own address as the app does; its run workers run
// until the test ends.
func newEnvWith(t testing.TB, cfg workspace.Config) *env {
	srv := httptest.NewUnstartedServer(nil)
	cfg.DataDir, cfg.LocalAddr = t.TempDir(), srv.Listener.Addr().String()
	home, err := workspace.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { home.Serve(ctx); close(served) }()
	t.Cleanup(func() { stop(); <-served })
	assets := fstest.MapFS{"index.html": {Data: []byte("<title>Rerun</title>")}, "assets/app.js": {Data: []byte("x")}}
	srv.Config.Handler = httpapi.New(httpapi.Config{Home: home, Token: token, Assets: assets, Heartbeat: 50 * time.Millisecond,
		ExtraHosts: []string{"wails", "wails.localhost"}, ExtraOrigins: []string{"wails://wails", "http://wails.localhost"}, LocalURL: "http://" + cfg.LocalAddr})
	srv.Start()
	t.Cleanup(func() { srv.Close(); home.Close() })
	e := &env{srv: srv, home: home, ws: home.Current()}
	w, _ := home.Workspace(e.ws)
	boxes, _ := w.Boxes.List(context.Background())
	e.box = boxes[0].ID
	return e
}

// do sends an authenticated request and decodes a JSON answer into out.
func (e *env) do(t testing.TB, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

func TestGuard(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name   string
		path   string
		header map[string]string
		want   int
	}{
		{"ok with bearer", "/api/workspaces", map[string]string{"Authorization": "Bearer " + token}, 200},
		{"missing token", "/api/workspaces", nil, 401},
		{"wrong token", "/api/workspaces", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"wrong cookie", "/api/workspaces", map[string]string{"Cookie": "rerun_ui=nope"}, 401},
		{"token checked before routing", "/api/no-such-route", nil, 401},
		{"foreign host", "/api/workspaces", map[string]string{"Host": "evil.example", "Authorization": "Bearer " + token}, 403},
		{"rebinding host with port", "/api/workspaces", map[string]string{"Host": "attacker.com:7777", "Authorization": "Bearer " + token}, 403},
		{"localhost host", "/api/workspaces", map[string]string{"Host": "localhost:7777", "Authorization": "Bearer " + token}, 200},
		{"ipv6 loopback", "/api/workspaces", map[string]string{"Host": "[::1]:7777", "Authorization": "Bearer " + token}, 200},
		{"wails host", "/api/workspaces", map[string]string{"Host": "wails", "Authorization": "Bearer " + token}, 200},
		{"foreign origin", "/api/workspaces", map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer " + token}, 403},
		{"null origin", "/api/workspaces", map[string]string{"Origin": "null", "Authorization": "Bearer " + token}, 403},
		{"wails origin", "/api/workspaces", map[string]string{"Origin": "wails://wails", "Authorization": "Bearer " + token}, 200},
		{"windows window origin", "/api/workspaces", map[string]string{"Origin": "http://wails.localhost", "Authorization": "Bearer " + token}, 200},
		{"foreign host on page too", "/", map[string]string{"Host": "evil.example"}, 403},
		{"page needs no token", "/", nil, 200},
		{"old link does not log in", "/api/workspaces?token=" + token, nil, 401},
		{"old login link lands on the page without a cookie", "/?token=nope", nil, 200},
		{"boot needs the token too", "/api/boot", nil, 401},
		{"unknown api route", "/api/no-such-route", map[string]string{"Authorization": "Bearer " + token}, 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", e.srv.URL+tc.path, nil)
			for k, v := range tc.header {
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
			res.Body.Close()
			if res.StatusCode != tc.want {
				t.Errorf("status = %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

func TestSameOriginAllowed(t *testing.T) {
	e := newEnv(t)
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/workspaces/"+e.ws+"/boxes", strings.NewReader(`{"name":"Ops"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Origin", e.srv.URL)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 201 {
		t.Errorf("same-origin POST: status %d, want 201", res.StatusCode)
	}
}

func TestLoginLinkSetsCookie(t *testing.T) {
	e := newEnv(t)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(e.srv.URL + "/?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("login: %d to %q, want 303 to /", res.StatusCode, res.Header.Get("Location"))
	}
	cookies := res.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Value != token {
		t.Fatalf("cookie = %+v, want one HttpOnly SameSite=Strict cookie with the token", cookies)
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/workspaces", nil)
	req.AddCookie(cookies[0])
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Errorf("API with the cookie: %d, want 200", res.StatusCode)
	}
}

func TestBodyLimit(t *testing.T) {
	e := newEnv(t)
	big := `{"name":"` + strings.Repeat("x", httpapi.MaxBodyBytes) + `"}`
	var out map[string]string
	if got := e.do(t, "POST", "/api/workspaces/"+e.ws+"/boxes", big, &out); got != 413 {
		t.Errorf("oversized body: status %d, want 413", got)
	}
	// Without a Content-Length the limit still holds while reading.
	req, _ := http.NewRequest("POST", e.srv.URL+"/api/workspaces/"+e.ws+"/boxes", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 {
		t.Errorf("oversized chunked body: status %d, want 413", res.StatusCode)
	}
}

func TestNotFound(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/workspaces/ws_nope/board", ""},
		{"GET", "/api/workspaces/" + "WS" + "/agents/ag_nope", ""},
		{"PATCH", "/api/workspaces/WS/agents/ag_nope", `{"name":"x"}`},
		{"DELETE", "/api/workspaces/WS/agents/ag_nope", ""},
		{"GET", "/api/workspaces/WS/agents/ag_nope/souls", ""},
		{"PATCH", "/api/workspaces/WS/boxes/bx_nope", `{"name":"x"}`},
		{"DELETE", "/api/workspaces/WS/boxes/bx_nope", ""},
		{"POST", "/api/workspaces/ws_nope/switch", ""},
	} {
		path := strings.Replace(tc.path, "WS", e.ws, 1)
		var out map[string]string
		if got := e.do(t, tc.method, path, tc.body, &out); got != 404 || out["error"] == "" {
			t.Errorf("%s %s: %d %v, want 404 with an error message", tc.method, path, got, out)
		}
	}
}

// TestBoot: the page's first answer holds what the workspace list, the
// capabilities and the current workspace's board answer, and follows a
// switch of the current workspace.
func TestBoot(t *testing.T) {
	e := newEnv(t)
	if got := e.do(t, "POST", "/api/workspaces/"+e.ws+"/agents", `{"name":"Ada","box_id":"`+e.box+`"}`, nil); got != 201 {
		t.Fatalf("create agent: %d", got)
	}
	raw := func(path string) json.RawMessage {
		var m json.RawMessage
		if got := e.do(t, "GET", path, "", &m); got != 200 {
			t.Fatalf("GET %s: %d", path, got)
		}
		return m
	}
	var boot struct {
		Workspaces   json.RawMessage
		Current      string
		Capabilities json.RawMessage
		Board        json.RawMessage
	}
	check := func(current string) {
		t.Helper()
		if got := e.do(t, "GET", "/api/boot", "", &boot); got != 200 {
			t.Fatalf("GET /api/boot: %d", got)
		}
		var list struct {
			Workspaces json.RawMessage
			Current    string
		}
		json.Unmarshal(raw("/api/workspaces"), &list)
		if boot.Current != current || list.Current != current || string(boot.Workspaces) != string(list.Workspaces) {
			t.Errorf("boot's workspaces %s (current %q), want %s (current %q)", boot.Workspaces, boot.Current, list.Workspaces, current)
		}
		if want := raw("/api/capabilities"); string(boot.Capabilities) != string(want) {
			t.Errorf("boot's capabilities %s, want %s", boot.Capabilities, want)
		}
		if want := raw("/api/workspaces/" + current + "/board"); string(boot.Board) != string(want) {
			t.Errorf("boot's board\n%s\nwant\n%s", boot.Board, want)
		}
	}
	check(e.ws)
	if !strings.Contains(string(boot.Board), `"name":"Ada"`) {
		t.Errorf("boot's board has no agent Ada: %s", boot.Board)
	}
	var other struct{ ID string }
	if got := e.do(t, "POST", "/api/workspaces", `{"name":"Other"}`, &other); got != 201 {
		t.Fatalf("create workspace: %d", got)
	}
	if got := e.do(t, "POST", "/api/workspaces/"+other.ID+"/switch", "", nil); got != 200 {
		t.Fatalf("switch: %d", got)
	}
	check(other.ID)
}

func TestAgentLifecycle(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	var b struct{ ID string }
	if got := e.do(t, "POST", base+"/boxes", `{"name":"Sales"}`, &b); got != 201 {
		t.Fatalf("create box: %d", got)
	}
	var a agent.Agent
	if got := e.do(t, "POST", base+"/agents", `{"name":"Deal Closer","box_id":"`+e.box+`","soul":"v1"}`, &a); got != 201 || a.Handle != "deal-closer" {
		t.Fatalf("create agent: %d %+v", got, a)
	}
	var out map[string]string
	if got := e.do(t, "POST", base+"/agents", `{"name":"Again","handle":"deal-closer","box_id":"`+e.box+`"}`, &out); got != 409 || !strings.Contains(out["error"], "already taken") {
		t.Errorf("duplicate handle: %d %v, want 409 saying it is taken", got, out)
	}
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID, `{"handle":"new-one"}`, &out); got != 400 || !strings.Contains(out["error"], "never changes") {
		t.Errorf("handle change: %d %v, want 400 saying it never changes", got, out)
	}
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID, `{"box_id":"`+b.ID+`","soul":"v2"}`, &a); got != 200 || a.BoxID != b.ID || a.Soul != "v2" {
		t.Errorf("move + soul: %d %+v", got, a)
	}
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID, `{"network":false}`, &a); got != 200 || a.Network {
		t.Errorf("network off: %d %+v", got, a)
	}
	var sb struct {
		Sandboxed bool
		Detail    string
	}
	t.Setenv("RERUN_SANDBOX", "off")
	if e.do(t, "GET", "/api/sandbox", "", &sb); sb.Sandboxed || !strings.Contains(sb.Detail, "switched off") {
		t.Errorf("sandbox status with RERUN_SANDBOX=off = %+v", sb)
	}
	if got := e.do(t, "DELETE", base+"/boxes/"+b.ID, "", &out); got != 409 {
		t.Errorf("delete non-empty box: %d, want 409", got)
	}
	var souls []agent.SoulVersion
	if e.do(t, "GET", base+"/agents/"+a.ID+"/souls", "", &souls); len(souls) != 2 || souls[0].Body != "v2" {
		t.Errorf("souls = %+v, want v2 then v1", souls)
	}
	var h map[string]string
	e.do(t, "GET", "/api/handle?name=Deal+Closer&ws="+e.ws, "", &h)
	if h["handle"] != "deal-closer-2" {
		t.Errorf("suggested handle = %q, want deal-closer-2", h["handle"])
	}
	if got := e.do(t, "DELETE", base+"/agents/"+a.ID, "", nil); got != 204 {
		t.Errorf("delete agent: %d", got)
	}
	if got := e.do(t, "DELETE", base+"/boxes/"+b.ID, "", nil); got != 204 {
		t.Errorf("delete emptied box: %d", got)
	}
}

func TestBadJSONSaysWhatToFix(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	for _, tc := range []struct{ body, want string }{
		{``, "empty"},
		{`{"name":`, "not valid JSON"},
		{`{"name": 5}`, `"name" must be a string`},
		{`{"name":"x","box_id":"` + e.box + `","capabilities":"files"}`, `"capabilities" must be a list`},
		{`{"nmae":"x"}`, `unknown field "nmae"`},
		{`{"name":"x","box_id":"` + e.box + `"} {}`, "after the JSON object"},
		{`[1]`, "must be a JSON object"},
	} {
		var out map[string]string
		if got := e.do(t, "POST", base+"/agents", tc.body, &out); got != 400 || !strings.Contains(out["error"], tc.want) {
			t.Errorf("body %q: %d %q, want 400 containing %q", tc.body, got, out["error"], tc.want)
		}
	}
}

func TestEventsStream(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(res.Body)
	readUntil := func(prefix string) string {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				t.Fatalf("stream ended before %q: %v", prefix, err)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
	}
	readUntil(": connected")
	var b struct{ ID string }
	e.do(t, "POST", "/api/workspaces/"+e.ws+"/boxes", `{"name":"Live"}`, &b)
	readUntil("event: change")
	data := readUntil("data: ")
	var c struct{ Workspace, Kind, ID string }
	json.Unmarshal([]byte(strings.TrimPrefix(data, "data: ")), &c)
	if c.Workspace != e.ws || c.Kind != "box.created" || c.ID != b.ID {
		t.Errorf("change = %+v, want box.created %s in %s", c, b.ID, e.ws)
	}
	readUntil(": ping") // heartbeat keeps an idle stream alive
}

// A client that goes away without the request context being cancelled (the
// Wails window) must not leave the stream's goroutine behind: the next
// heartbeat write fails and the handler returns.
func TestEventsStopOnWriteError(t *testing.T) {
	e := newEnv(t)
	h := httpapi.New(httpapi.Config{Home: e.home, Token: token, Heartbeat: 10 * time.Millisecond})
	req := httptest.NewRequest("GET", "/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := &failingWriter{header: http.Header{}, after: 2}
	done := make(chan struct{})
	go func() { h.ServeHTTP(w, req); close(done) }()
	select {
	case <-done:
	case <-time.After(waittest.Patience):
		t.Fatal("stream kept running after its writes failed")
	}
	if n := e.home.Events().Subscribers(); n != 0 {
		t.Errorf("subscribers left = %d, want 0", n)
	}
}

type failingWriter struct {
	header http.Header
	after  int
}

func (w *failingWriter) Header() http.Header { return w.header }
func (w *failingWriter) WriteHeader(int)     {}
func (w *failingWriter) Write(p []byte) (int, error) {
	if w.after == 0 {
		return 0, io.ErrClosedPipe
	}
	w.after--
	return len(p), nil
}

func TestAssets(t *testing.T) {
	e := newEnv(t)
	for path, want := range map[string]string{"/": "<title>Rerun</title>", "/agents/x": "<title>Rerun</title>", "/assets/app.js": "x"} {
		res, err := http.Get(e.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != want {
			t.Errorf("GET %s = %q, want %q", path, b, want)
		}
	}
	res, _ := http.Get(e.srv.URL + "/missing.js")
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("missing asset: %d, want 404", res.StatusCode)
	}
}
