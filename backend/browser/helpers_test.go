package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/tool"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// needChrome skips the test when no browser is installed; on the machines
// that run this suite (and in CI) one is, so the tests run there.
func needChrome(t testing.TB) string {
	t.Helper()
	bin, err := FindChrome(os.Getenv("RERUN_CHROME"))
	if errors.Is(err, ErrNoBrowser) {
		t.Skipf("no Chromium to test with: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// testManager returns a Manager on a temporary agents folder, closed when
// the test ends.
func testManager(t testing.TB, edit ...func(*Config)) *Manager {
	t.Helper()
	bin := needChrome(t)
	cfg := Config{
		AgentsDir: t.TempDir(),
		Bin:       bin,
		Headless:  true,
		Logger:    slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, e := range edit {
		e(&cfg)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return m
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// setup returns a site to browse, a Manager and the tool environment of
// agent (no variables).
func setup(t testing.TB, agent string, edit ...func(*Config)) (*site, *Manager, *tool.Env) {
	t.Helper()
	app, _ := appServer(t)
	return newSite(t, app), testManager(t, edit...), agentEnv(agent, nil)
}

// vars is a workspace's variables for ${NAME} in typed text.
type vars map[string]string

func (v vars) Resolve(text string) (string, error) {
	return secret.Resolve(text, func(name string) (string, bool) {
		s, ok := v[name]
		return s, ok
	})
}

func agentEnv(id string, v tool.VarResolver) *tool.Env {
	return &tool.Env{AgentID: id, Vars: v}
}

// call runs browser tool name with input (a Go value marshalled to JSON, or
// a string of JSON).
func call(t testing.TB, m *Manager, env *tool.Env, name string, input any) (string, error) {
	t.Helper()
	tl, ok := tool.Find(m.Tools(), name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	var raw json.RawMessage
	switch in := input.(type) {
	case nil:
		raw = json.RawMessage(`{}`)
	case string:
		raw = json.RawMessage(in)
	default:
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		raw = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	return tl.Run(ctx, env, raw)
}

// must runs a tool that must succeed.
func must(t testing.TB, m *Manager, env *tool.Env, name string, input any) string {
	t.Helper()
	out, err := call(t, m, env, name, input)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, input, err)
	}
	return out
}

// mustFail runs a tool that must fail with an error containing want.
func mustFail(t testing.TB, m *Manager, env *tool.Env, name string, input any, want string) string {
	t.Helper()
	out, err := call(t, m, env, name, input)
	if err == nil {
		t.Fatalf("%s(%v) = %q, want an error containing %q", name, input, out, want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("%s(%v) error = %q, want it to contain %q", name, input, err, want)
	}
	return err.Error()
}

// ref finds the number of the snapshot element whose line contains all of
// parts, e.g. ref(t, snap, `button "Sign in"`).
func ref(t testing.TB, snap string, parts ...string) int {
	t.Helper()
	for _, line := range strings.Split(snap, "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		ok := true
		for _, p := range parts {
			if !strings.Contains(line, p) {
				ok = false
			}
		}
		if ok {
			var n int
			fmt.Sscanf(line, "[%d]", &n)
			return n
		}
	}
	t.Fatalf("no element with %q in snapshot:\n%s", parts, snap)
	return 0
}

// line returns the snapshot line of element n.
func line(snap string, n int) string {
	for _, l := range strings.Split(snap, "\n") {
		if strings.HasPrefix(l, fmt.Sprintf("[%d] ", n)) {
			return l
		}
	}
	return ""
}

// site is the web the tests browse: pages served by httptest, and what the
// pages sent back.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	forms   []map[string]string // submitted forms
	hits    map[string]int      // requests per path
	cookies []string
	ready   atomic.Bool // /slow shows "Ready now" once set (and a poll sees it)
}

func (s *site) form(i int) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.forms) {
		return nil
	}
	return s.forms[i]
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// addrOf is the server's address as Config.Forbidden takes it.
func addrOf(srv *httptest.Server) string {
	return strings.TrimPrefix(srv.URL, "http://")
}

func port(srv *httptest.Server) string {
	_, p, _ := net.SplitHostPort(addrOf(srv))
	return p
}

const page = `<!doctype html><html><head><meta charset="utf-8"><title>%s</title></head><body>%s</body></html>`

func newSite(t testing.TB, app *httptest.Server) *site {
	s := &site{hits: map[string]int{}}
	mux := http.NewServeMux()
	serve := func(path, title, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, page, title, body)
		})
	}
	serve("/{$}", "Home", `<h1>Welcome home</h1><p>Some text about the site.</p>
		<ul><li>First item</li><li>Second item</li></ul>
		<a href="/next">Next page</a> <a href="/form">The form</a> <a href="#end">To the end</a><p id="end">The end</p>`)
	serve("/next", "Next", `<h1>Next page</h1><a href="/">Home again</a>`)
	serve("/form", "Sign in", `<h1>Sign in</h1>
		<form method="post" action="/submit">
		<label for="email">Email</label> <input id="email" name="email" type="email">
		<label>Password <input name="password" type="password"></label>
		<label for="country">Country</label>
		<select id="country" name="country"><option value="fr">France</option><option value="de">Germany</option><option value="it">Italy</option></select>
		<label><input type="checkbox" name="remember" value="yes"> Remember me</label>
		<textarea name="note" placeholder="A note"></textarea>
		<button type="submit">Sign in</button>
		</form>`)
	mux.HandleFunc("/submit", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f := map[string]string{}
		for k := range r.Form {
			f[k] = r.Form.Get(k)
		}
		s.mu.Lock()
		s.forms = append(s.forms, f)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// The page echoes what it got, as careless sites do.
		fmt.Fprintf(w, page, "Signed in", fmt.Sprintf("<h1>Signed in</h1><p>Email: %s</p><p>Echo: %s</p><p>Country: %s</p>",
			f["email"], f["password"], f["country"]))
	})
	// /slow gets ready when the test says so (s.ready), not after a time a
	// busy machine may overrun.
	mux.HandleFunc("/slow/ready", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, s.ready.Load())
	})
	serve("/slow", "Slow", `<h1>Slow</h1><p id="s">Loading…</p>
		<button id="b" disabled>Later</button>
		<script>(async () => {
			while ((await (await fetch('/slow/ready')).text()) !== 'true') await new Promise((r) => setTimeout(r, 50));
			document.getElementById('s').textContent = 'Ready now'; document.getElementById('b').disabled = false;
		})()</script>
		<a href="/next" onclick="event.preventDefault(); setTimeout(() => location.href = '/next', 400)">Go later</a>`)
	serve("/tabs", "Tabs", `<h1>Tabs</h1><a href="/next" target="_blank">Next in a new tab</a>
		<button onclick="window.open('/form')">Open the form</button>`)
	serve("/local", "Local links", fmt.Sprintf(`<h1>Local</h1><a href="%s/secret">The app</a>
		<a href="/redirect-local">Via redirect</a> <a href="%s/secret" target="_blank">The app in a new tab</a>
		<button onclick="fetch('%s/api/x').then(() => document.title = 'fetched', () => document.title = 'blocked')">Fetch</button>`, app.URL, app.URL, app.URL))
	mux.HandleFunc("/redirect-local", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, app.URL+"/secret", http.StatusFound)
	})
	mux.HandleFunc("/cookie", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err == nil {
			s.mu.Lock()
			s.cookies = append(s.cookies, c.Value)
			s.mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "kept-42", MaxAge: 3600, Path: "/"})
		fmt.Fprintf(w, page, "Cookie", "<p>cookie set</p>")
	})
	serve("/long", "Long", `<h1>Top</h1><div style="height:3000px">tall</div><button id="end">At the end</button>`)
	serve("/clicker", "Clicker", `<button id="b" style="position:absolute;left:100px;top:100px;width:200px;height:80px" onclick="this.textContent='Clicked!'; document.body.style.background='rgb(200,30,30)'">Press me</button>
		<input id="t" style="position:absolute;left:100px;top:300px;width:300px;height:40px" aria-label="Field">
		<a id="l" href="/next" style="position:absolute;left:100px;top:400px">Person's link</a>`)
	serve("/anim", "Anim", `<div id="d" style="width:400px;height:400px"></div>
		<script>let i = 0; (function f() { i++; document.getElementById('d').style.background = 'hsl(' + (i * 7 % 360) + ',80%,50%)'; requestAnimationFrame(f); })()</script>`)
	serve("/toggle", "Toggle", `<div id="d" style="position:absolute;inset:0;background:#fff" onmousedown="this.style.background = this.style.background === 'black' ? 'white' : 'black'"></div>`)
	serve("/dialog", "Dialog", `<button onclick="document.getElementById('r').textContent = confirm('Delete it?') ? 'yes' : 'no'">Delete</button><p id="r">none</p>`)
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		io.WriteString(w, "a,b\n1,2\n")
	})
	var huge strings.Builder
	for i := 1; i <= 1500; i++ {
		fmt.Fprintf(&huge, "<p>Paragraph %d with enough words to take some room in a snapshot.</p>", i)
		if i%100 == 0 {
			fmt.Fprintf(&huge, `<a href="/next?from=%d">Link %d</a>`, i, i)
		}
	}
	serve("/huge", "Huge", huge.String())
	serve("/rich", "Rich", `<h2>Section</h2>
		<div style="display:none">HIDDEN TEXT</div><div aria-hidden="true">ARIA HIDDEN</div>
		<table><tr><th>Name</th><th>Price</th></tr><tr><td>Tea</td><td>3 €</td></tr></table>
		<x-card></x-card>
		<script>customElements.define('x-card', class extends HTMLElement { constructor() { super();
			this.attachShadow({mode: 'open'}).innerHTML = '<p>Inside shadow</p><button onclick="this.textContent=\'Shadow done\'">Shadow button</button>'; } })</script>
		<div style="cursor:pointer" onclick="this.textContent='Div done'">Div that acts</div>
		<iframe style="margin-top:40px" srcdoc="<p>In the frame</p><button onclick='this.textContent=&quot;Frame done&quot;'>Frame button</button>"></iframe>
		<div style="position:fixed;left:0;top:0;width:100%;height:60px;background:#eee;z-index:9" id="banner">Cookie banner <button onclick="document.getElementById('banner').remove()">Accept</button></div>
		<button id="under" style="position:fixed;left:10px;top:10px" onclick="this.textContent='Under done'">Under banner</button>`)
	serve("/downloads", "Downloads", `<a href="/download">Get the report</a>`)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// appServer stands for the Rerun app's own local server; it counts the
// requests that reach it (there must be none).
func appServer(t testing.TB) (*httptest.Server, *int64) {
	var n int64
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		io.WriteString(w, "the app's API")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}
