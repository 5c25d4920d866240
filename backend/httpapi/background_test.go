package httpapi_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/autostart"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/registrytest"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Start at login turns the autostart entry on and off; where there is none
// the Settings hear it is not available and turning it on says so.
func TestAutostartRoutes(t *testing.T) {
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	dir := filepath.Join(t.TempDir(), "autostart")
	entry := &autostart.Entry{Exec: "/usr/bin/rerun", Args: []string{"--hidden"}, Dir: dir}
	for _, tc := range []struct {
		name  string
		entry *autostart.Entry
	}{{"available", entry}, {"unavailable", nil}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, Autostart: tc.entry}))
			defer srv.Close()
			e := &env{srv: srv, home: home, ws: home.Current()}
			var st autostart.State
			if code := e.do(t, "GET", "/api/autostart", "", &st); code != 200 || st.Enabled || st.Available != (tc.entry != nil) {
				t.Fatalf("GET = %d %+v", code, st)
			}
			code := e.do(t, "PUT", "/api/autostart", `{"enabled":true}`, &st)
			if tc.entry == nil {
				if code != 400 {
					t.Errorf("PUT on no entry = %d, want 400", code)
				}
				return
			}
			b, _ := os.ReadFile(filepath.Join(dir, "rerun.desktop"))
			if code != 200 || !st.Enabled || !strings.Contains(string(b), "Exec=/usr/bin/rerun --hidden\n") {
				t.Fatalf("PUT on = %d %+v, entry %q", code, st, b)
			}
			if code := e.do(t, "PUT", "/api/autostart", `{"enabled":false}`, &st); code != 200 || st.Enabled {
				t.Fatalf("PUT off = %d %+v", code, st)
			}
			if _, err := os.Stat(filepath.Join(dir, "rerun.desktop")); !os.IsNotExist(err) {
				t.Errorf("entry left after turning off: %v", err)
			}
			if code := e.do(t, "PUT", "/api/autostart", `{"enabled":"yes"}`, nil); code != 400 {
				t.Errorf("PUT with a bad body = %d, want 400", code)
			}
		})
	}
}

// The pause-all switch of a workspace, through the API.
func TestHoldRoutes(t *testing.T) {
	e := newEnv(t)
	var h struct{ Held bool }
	if code := e.do(t, "GET", "/api/workspaces/"+e.ws+"/hold", "", &h); code != 200 || h.Held {
		t.Fatalf("GET hold = %d %+v", code, h)
	}
	if code := e.do(t, "PUT", "/api/workspaces/"+e.ws+"/hold", `{"held":true}`, &h); code != 200 || !h.Held {
		t.Fatalf("PUT hold = %d %+v", code, h)
	}
	w, _ := e.home.Workspace(e.ws)
	if !w.Runs.Held() {
		t.Error("the workspace's runs are not held")
	}
	var board struct{ Held bool }
	if e.do(t, "GET", "/api/workspaces/"+e.ws+"/board", "", &board); !board.Held {
		t.Error("the board does not say all coworkers are paused")
	}
	if code := e.do(t, "PUT", "/api/workspaces/"+e.ws+"/hold", `{"held":false}`, &h); code != 200 || h.Held || w.Runs.Held() {
		t.Fatalf("PUT resume = %d %+v", code, h)
	}
}

// What closing the window does: kept in the data directory across
// restarts; a choice that does not exist is refused and changes nothing.
func TestPreferencesRoutes(t *testing.T) {
	data := t.TempDir()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: data})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	type body struct {
		WhenClosed string `json:"when_closed"`
		Window     bool   `json:"window"`
	}
	serve := func(window bool) *env {
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, DataDir: data, Window: window}))
		t.Cleanup(srv.Close)
		return &env{srv: srv, home: home, ws: home.Current()}
	}
	e := serve(true)
	var p body
	if code := e.do(t, "GET", "/api/preferences", "", &p); code != 200 || p.WhenClosed != "background" || !p.Window {
		t.Fatalf("GET = %d %+v, want background in a window", code, p)
	}
	if code := e.do(t, "PUT", "/api/preferences", `{"when_closed":"quit"}`, &p); code != 200 || p.WhenClosed != "quit" {
		t.Fatalf("PUT quit = %d %+v", code, p)
	}
	var fail struct{ Error string }
	if code := e.do(t, "PUT", "/api/preferences", `{"when_closed":"minimise"}`, &fail); code != 400 || !strings.Contains(fail.Error, `"background"`) {
		t.Fatalf("PUT minimise = %d %q, want 400 naming the choices", code, fail.Error)
	}
	// Another server on the same data directory (the next launch) reads it.
	e = serve(false)
	if code := e.do(t, "GET", "/api/preferences", "", &p); code != 200 || p.WhenClosed != "quit" || p.Window {
		t.Fatalf("GET after restart = %d %+v, want quit kept, no window", code, p)
	}
}

// The page's "board painted" lands in the log (what make bench times a
// launch by); a value that is no time is refused.
func TestBoardPaintedIsLogged(t *testing.T) {
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	sw := &syncWriter{w: &strings.Builder{}}
	log := slog.New(slog.NewTextHandler(sw, nil))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, Logger: log}))
	defer srv.Close()
	e := &env{srv: srv, home: home, ws: home.Current()}
	if code := e.do(t, "POST", "/api/ui/painted", `{"page_ms":412.7,"script_ms":88.1,"data_ms":301,"frame_ms":350}`, nil); code != 204 {
		t.Fatalf("painted = %d, want 204", code)
	}
	if code := e.do(t, "POST", "/api/ui/painted", `{"page_ms":-5}`, nil); code != 400 {
		t.Fatalf("painted -5 = %d, want 400", code)
	}
	if code := e.do(t, "POST", "/api/ui/painted", `{"page_ms":400,"data_ms":-1}`, nil); code != 400 {
		t.Fatalf("painted data_ms -1 = %d, want 400", code)
	}
	out := sw.String()
	if !strings.Contains(out, `msg="ui board painted" page_ms=412 script_ms=88 data_ms=301 frame_ms=350`) {
		t.Fatalf("log lacks the painted line:\n%s", out)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

// The MCP registry the catalog searches: the one Rerun started with until
// the person picks another in Settings → General (kept across restarts);
// a URL that is not https is refused and changes nothing; off searches
// only the built-in apps.
func TestMCPRegistryPreference(t *testing.T) {
	data := t.TempDir()
	started := registrytest.New(t, registrytest.NPM("io.github.test/weather", "Forecasts.", "weather-mcp", "1.0.0"))
	company := registrytest.New(t, registrytest.NPM("com.example/ledger", "The company ledger.", "@example/ledger-mcp", "2.0.0"))
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: data, MCPRegistry: started.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	type body struct {
		MCPRegistry    string `json:"mcp_registry"`
		MCPRegistryURL string `json:"mcp_registry_url"`
	}
	serve := func() *env {
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, DataDir: data}))
		t.Cleanup(srv.Close)
		return &env{srv: srv, home: home, ws: home.Current()}
	}
	catalog := func(e *env, q string) (ids []string, registry string) {
		t.Helper()
		var page connector.CatalogResult
		if code := e.do(t, "GET", "/api/workspaces/"+e.ws+"/apps/catalog?q="+q, "", &page); code != 200 {
			t.Fatalf("catalog = %d", code)
		}
		for _, a := range page.Apps {
			if a.Source == connector.SourceRegistry {
				ids = append(ids, a.ID)
			}
		}
		return ids, page.Registry.URL
	}
	e := serve()
	var p body
	if code := e.do(t, "GET", "/api/preferences", "", &p); code != 200 || p.MCPRegistry != "" || p.MCPRegistryURL != started.URL {
		t.Fatalf("GET = %d %+v, want the registry Rerun started with", code, p)
	}
	if ids, u := catalog(e, "weather"); len(ids) != 1 || ids[0] != "io.github.test/weather" || u != started.URL {
		t.Fatalf("catalog from the started registry: %v at %q", ids, u)
	}
	var fail struct{ Error string }
	if code := e.do(t, "PUT", "/api/preferences", `{"mcp_registry":"http://registry.example.com"}`, &fail); code != 400 || !strings.Contains(fail.Error, "https://") {
		t.Fatalf("PUT http URL = %d %q, want 400 saying https", code, fail.Error)
	}
	if code := e.do(t, "GET", "/api/preferences", "", &p); p.MCPRegistryURL != started.URL || p.MCPRegistry != "" {
		t.Fatalf("a refused URL changed the registry: %d %+v", code, p)
	}
	if code := e.do(t, "PUT", "/api/preferences", `{"mcp_registry":"`+company.URL+`/"}`, &p); code != 200 || p.MCPRegistryURL != company.URL {
		t.Fatalf("PUT company = %d %+v", code, p)
	}
	if ids, _ := catalog(e, "ledger"); len(ids) != 1 || ids[0] != "com.example/ledger" {
		t.Fatalf("catalog from the company registry: %v", ids)
	}
	// The next launch (a new server on the same data) keeps the choice.
	home.SetMCPRegistry("")
	e = serve()
	if code := e.do(t, "GET", "/api/preferences", "", &p); code != 200 || p.MCPRegistryURL != company.URL {
		t.Fatalf("after restart = %d %+v, want the company registry kept", code, p)
	}
	if code := e.do(t, "PUT", "/api/preferences", `{"mcp_registry":"off"}`, &p); code != 200 || p.MCPRegistryURL != "" {
		t.Fatalf("PUT off = %d %+v", code, p)
	}
	if ids, u := catalog(e, "ledger"); len(ids) != 0 || u != "" {
		t.Fatalf("registry off still lists %v from %q", ids, u)
	}
	if code := e.do(t, "PUT", "/api/preferences", `{"mcp_registry":""}`, &p); code != 200 || p.MCPRegistryURL != started.URL {
		t.Fatalf("PUT default = %d %+v, want the started registry back", code, p)
	}
}
