//go:build !windows

package browser

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// The Desktop's start, tabs, the takeover card and forgetting a deleted
// agent's browser, on one Chromium.
func TestDeskStartTabsTakeoverForget(t *testing.T) {
	app, hits := appServer(t)
	s := newSite(t, app)
	m := testManager(t, func(c *Config) { c.Forbidden = []string{addrOf(app)} })
	env := agentEnv("desk", nil)
	card := m.TakeoverTool("desk")

	if _, _, err := card.Pause(json.RawMessage(`{"reason":"solve the captcha"}`)); err == nil || !strings.Contains(err.Error(), "browser_open first") {
		t.Fatalf("takeover before the browser runs: err = %v, want one saying to open the page first", err)
	}
	if _, err := m.Start(t.Context(), "desk", app.URL+"/secret"); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "local server") {
		t.Fatalf("Start on the app's own server: err = %v, want a refusal", err)
	}
	if *hits != 0 {
		t.Fatalf("the app's server got %d requests", *hits)
	}

	b, err := m.Start(t.Context(), "desk", s.URL+"/form")
	if err != nil {
		t.Fatal(err)
	}
	if st := b.State(); !st.Running || !strings.HasSuffix(st.URL, "/form") || st.Title != "Sign in" {
		t.Fatalf("state after Start(url) = %+v, want the form open", st)
	}
	// A running browser stays where it is.
	if _, err := m.Start(t.Context(), "desk", s.URL+"/next"); err != nil {
		t.Fatal(err)
	}
	if st := b.State(); !strings.HasSuffix(st.URL, "/form") {
		t.Fatalf("Start(url) on a running browser moved it to %s", st.URL)
	}

	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/next", "new_tab": true})
	tabs := b.Tabs()
	if len(tabs) != 2 || tabs[0].Active || !tabs[1].Active || !strings.HasSuffix(tabs[1].URL, "/next") || tabs[1].Title != "Next" {
		t.Fatalf("tabs = %+v, want the form and the active Next tab", tabs)
	}

	kind, req, err := card.Pause(json.RawMessage(`{"reason":" Sign in with your account "}`))
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := req.(pause.TakeoverRequest)
	if kind != pause.Takeover || tr.Reason != "Sign in with your account" || tr.URL != s.URL+"/next" {
		t.Fatalf("card = %s %+v, want a takeover on %s/next", kind, req, s.URL)
	}
	if _, _, err := card.Pause(json.RawMessage(`{"reason":"x","url":"https://elsewhere.example"}`)); err == nil {
		t.Fatal("the model chose the card's url")
	}
	if !card.IsPause() || card.Family != Family {
		t.Fatalf("request_takeover: pause %v, family %q", card.IsPause(), card.Family)
	}

	pid := b.running().pid
	profile := b.profileDir()
	if err := m.Forget("desk"); err != nil {
		t.Fatal(err)
	}
	if treeAlive(pid) {
		t.Errorf("the forgotten browser's processes (group %d) are alive", pid)
	}
	if _, ok := m.Lookup("desk"); ok {
		t.Error("Lookup still finds the forgotten browser")
	}
	if left := chromeProcs(t, profile); len(left) > 0 {
		t.Errorf("processes left on the profile: %v", left)
	}
}

// A page that only sets document.title sends no event: the state of a
// watched browser still gets the new title.
func TestWatchedTitleStaysFresh(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Before</title><body style="margin:0">
			<button style="position:absolute;left:0;top:0;width:300px;height:300px" onclick="document.title = 'After'; this.textContent = 'ok'">x</button>`)
	}))
	defer srv.Close()
	changed := make(chan struct{}, 64)
	m := testManager(t, func(c *Config) {
		c.OnChange = func(string) {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	})
	b, err := m.Start(t.Context(), "titles", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ch := frames(t, b)
	frameWhere(t, ch, func(f Frame) bool { return f.Title == "Before" })
	b.TakeOver()
	if err := b.Input(t.Context(), Event{Type: "click", X: 150, Y: 150}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(waittest.Patience)
	for b.State().Title != "After" {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("state title = %q %s after the page set it, want After", b.State().Title, waittest.Patience)
		}
	}
}
