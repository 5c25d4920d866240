package httpapi_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
)

// While the data directory opens, the page's files are served at once and
// an API request waits for the real handler, then reaches it.
func TestPendingServesTheShellAndHoldsTheAPI(t *testing.T) {
	assets := fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><p>shell</p>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
		"favicon.svg":   {Data: []byte("<svg/>")},
	}
	p := httpapi.NewPending(assets)
	srv := httptest.NewServer(p)
	defer srv.Close()

	for path, want := range map[string]string{"/": "shell", "/assets/app.js": "console.log", "/favicon.svg": "<svg"} {
		if code, body := get(t, srv.URL+path); code != 200 || !strings.Contains(body, want) {
			t.Fatalf("GET %s before ready = %d %q, want 200 with %q", path, code, body, want)
		}
	}

	type answer struct {
		code int
		body string
	}
	got := make(chan answer, 1)
	go func() {
		code, body := get(t, srv.URL+"/api/workspaces")
		got <- answer{code, body}
	}()
	select {
	case a := <-got:
		t.Fatalf("API answered %d %q before the handler was ready", a.code, a.body)
	default:
	}
	p.Ready(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "real "+r.URL.Path)
	}))
	if a := <-got; a.code != 200 || a.body != "real /api/workspaces" {
		t.Fatalf("held API request = %d %q, want the real handler's answer", a.code, a.body)
	}
	// Once ready, everything is the real handler's, files too.
	if code, body := get(t, srv.URL+"/"); code != 200 || body != "real /" {
		t.Fatalf("GET / after ready = %d %q, want the real handler", code, body)
	}
}

// A data directory that cannot open is said to every API request, waiting
// or later; the shell still loads to show it.
func TestPendingFailSaysWhy(t *testing.T) {
	p := httpapi.NewPending(fstest.MapFS{"index.html": {Data: []byte("shell")}})
	srv := httptest.NewServer(p)
	defer srv.Close()
	p.Fail(errors.New("the data directory is in use by rerun serve (process 4242)"))
	code, body := get(t, srv.URL+"/api/workspaces")
	if code != 503 || !strings.Contains(body, "in use by rerun serve (process 4242)") {
		t.Fatalf("API after Fail = %d %q, want 503 with the reason", code, body)
	}
	if code, body := get(t, srv.URL+"/"); code != 200 || body != "shell" {
		t.Fatalf("GET / after Fail = %d %q, want the shell, which shows the reason", code, body)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
