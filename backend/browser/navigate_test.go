package browser

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// The address bar of the Desktop: the person, holding the browser, goes to
// a typed address, back, forward and reloads; typed addresses the browser
// must not open are refused with what to type; without holding the browser
// nothing moves.
func TestNavigate(t *testing.T) {
	app, hits := appServer(t)
	s := newSite(t, app)
	m := testManager(t, func(c *Config) { c.Forbidden = []string{addrOf(app)} })
	b, err := m.Start(t.Context(), "nav", s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	at := func(what, path, title string) {
		t.Helper()
		waittest.Until(t, what, func() bool {
			st := b.State()
			return st.URL == s.URL+path && st.Title == title
		})
	}
	// Back and Forward follow the tab's history, so the address bar
	// enables only the ones that go somewhere.
	history := func(what string, back, fwd bool) {
		t.Helper()
		waittest.Until(t, fmt.Sprintf("%s: back %v, forward %v", what, back, fwd), func() bool {
			st := b.State()
			return st.CanGoBack == back && st.CanGoForward == fwd
		})
	}
	at("the home page", "/", "Home")
	history("the first page", false, false)

	if err := b.Navigate(t.Context(), NavGo, s.URL+"/next"); !errors.Is(err, ErrNotInControl) {
		t.Fatalf("go before taking over: err = %v, want ErrNotInControl", err)
	}
	if st := b.State(); st.URL != s.URL+"/" {
		t.Fatalf("go before taking over moved the tab to %s", st.URL)
	}

	b.TakeOver()
	nav := func(action, u string) {
		t.Helper()
		if err := b.Navigate(t.Context(), action, u); err != nil {
			t.Fatalf("Navigate(%s, %q): %v", action, u, err)
		}
	}
	nav(NavGo, "  "+s.URL+"/next  ")
	at("the typed address", "/next", "Next")
	history("a second page", true, false)
	nav(NavBack, "")
	at("back", "/", "Home")
	history("back at the first page", false, true)
	nav(NavForward, "")
	at("forward", "/next", "Next")
	history("forward again", true, false)
	if err := b.Navigate(t.Context(), NavForward, ""); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "no later page") {
		t.Fatalf("forward at the newest page: err = %v, want no later page", err)
	}
	loads := s.hit("/next")
	nav(NavReload, "")
	waittest.Until(t, "the reload reaches the site", func() bool { return s.hit("/next") > loads })
	at("the reloaded page", "/next", "Next")

	for _, tc := range []struct{ name, action, url, want string }{
		{"file", NavGo, "file:///etc/passwd", "file: addresses do not open"},
		{"javascript", NavGo, "javascript:alert(1)", "javascript: addresses do not open"},
		{"chrome", NavGo, "chrome://settings", "chrome: addresses do not open"},
		{"empty", NavGo, "  ", "the address is empty"},
		{"the app's own server", NavGo, app.URL + "/api/info", "local server"},
		{"unknown action", "home", "", `navigation "home" is not go, back, forward or reload`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := b.Navigate(t.Context(), tc.action, tc.url)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Navigate(%s, %q): err = %v, want a refusal containing %q", tc.action, tc.url, err, tc.want)
			}
			if st := b.State(); st.URL != s.URL+"/next" {
				t.Fatalf("after the refusal the tab is on %s, want it left on /next", st.URL)
			}
		})
	}
	if *hits != 0 {
		t.Fatalf("the app's server got %d requests", *hits)
	}
	// A redirect to the app's own server is refused too, and the tab stays.
	if err := b.Navigate(t.Context(), NavGo, s.URL+"/redirect-local"); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "local server") {
		t.Fatalf("go to a redirect to the app: err = %v, want a refusal", err)
	}
	at("the tab left where it was after the refused redirect", "/next", "Next")
	if *hits != 0 {
		t.Fatalf("the app's server got %d requests", *hits)
	}

	b.HandBack()
	if err := b.Navigate(t.Context(), NavBack, ""); !errors.Is(err, ErrNotInControl) {
		t.Fatalf("back after handing back: err = %v, want ErrNotInControl", err)
	}
}

// A site that does not answer does not hold the address bar: Navigate
// returns once its bound passed, and the page shows when the site answers.
func TestNavigateDoesNotWaitForASlowSite(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, page, strings.TrimPrefix(r.URL.Path, "/"), "<p>here</p>")
	}))
	t.Cleanup(func() {
		once.Do(func() { close(release) })
		slow.Close()
	})
	m := testManager(t)
	b, err := m.Start(t.Context(), "slow", slow.URL+"/first")
	if err != nil {
		t.Fatal(err)
	}
	b.TakeOver()
	ctx, cancel := context.WithTimeout(t.Context(), waittest.Patience)
	defer cancel()
	if err := b.Navigate(ctx, NavGo, slow.URL+"/late"); err != nil {
		t.Fatalf("go to a site that does not answer yet: %v, want nil (it goes on loading)", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Navigate waited for the whole test's patience")
	}
	once.Do(func() { close(release) })
	waittest.Until(t, "the late page shows", func() bool { return b.State().Title == "late" })
}

func TestTypedURL(t *testing.T) {
	f, _ := parseForbidden([]string{"127.0.0.1:7777"})
	for _, tc := range []struct{ in, want, err string }{
		{"example.com", "https://example.com", ""},
		{"  example.com/a?b=c#d ", "https://example.com/a?b=c#d", ""},
		{"example.com:8443/x", "https://example.com:8443/x", ""},
		{"http://example.com", "http://example.com", ""},
		{"HTTPS://Example.com/Path", "https://Example.com/Path", ""},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/", ""},
		{"", "", "the address is empty; type a web address"},
		{"file:///etc/passwd", "", "file: addresses do not open in the agent's browser; type a web address, like example.com"},
		{"javascript:alert(1)", "", "javascript: addresses do not open"},
		{"chrome://settings", "", "chrome: addresses do not open"},
		{"about:blank", "", "about: addresses do not open"},
		{"data:text/html,hi", "", "data: addresses do not open"},
		{"view-source:https://example.com", "", "view-source: addresses do not open"},
		{"https://", "", "has no host"},
		{"cats and dogs", "", `"cats and dogs" is not a web address; type a web address`},
		{"localhost:7777/api", "", "local server"},
		{"http://127.0.0.1:7777/", "", "local server"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := f.typedURL(tc.in)
			if tc.err != "" {
				if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("typedURL(%q) = %q, %v; want a refusal containing %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("typedURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

// FuzzTypedURL: whatever the person types, an accepted address is http(s)
// with a host, never the app's own server, and reads the same when typed
// again; a refusal is ErrInvalid.
func FuzzTypedURL(f *testing.F) {
	for _, s := range []string{"example.com", "https://example.com/a", "localhost:7777", "file:///x", "javascript:x", "chrome://version",
		"http://[::1]:7777", "example.com:8080/x", " a b ", "http://0x7f.1:7777/", "HTTP://X", "//x", "a:1", "%41.com"} {
		f.Add(s)
	}
	forbid, _ := parseForbidden([]string{"127.0.0.1:7777"})
	f.Fuzz(func(t *testing.T, in string) {
		got, err := forbid.typedURL(in)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("typedURL(%q): err = %v, not ErrInvalid", in, err)
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			t.Fatalf("typedURL(%q) accepted %q", in, got)
		}
		if forbid.blocks(u) {
			t.Fatalf("typedURL(%q) accepted the forbidden %q", in, got)
		}
		again, err := forbid.typedURL(got)
		if err != nil {
			t.Fatalf("typedURL(%q) = %q, which typed again is refused: %v", in, got, err)
		}
		if u2, _ := url.Parse(again); u2 == nil || u2.Scheme != u.Scheme || u2.Host != u.Host {
			t.Fatalf("typedURL(%q) = %q, typed again %q: another site", in, got, again)
		}
	})
}
