package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/update"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// The About box's facts and its "Check for updates": a signed local feed
// with a newer release, the same feed with a broken signature, a feed that
// does not answer, and checks turned off.
func TestAboutInfoAndUpdateCheck(t *testing.T) {
	dir := t.TempDir()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	feed := `{"version":"v1.5.0","url":"https://example.com/rerun-setup-v1.5.0-amd64.exe","sha256":"` + strings.Repeat("0f", 32) + `","notes":"Tray icon."}`
	sig := string(update.Sign(priv, []byte(feed)))
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good/feed.json", "/badsig/feed.json":
			w.Write([]byte(feed))
		case "/good/feed.json.sig":
			w.Write([]byte(sig))
		case "/badsig/feed.json.sig":
			w.Write([]byte(strings.Repeat("A", 86) + "==\n"))
		default:
			http.Error(w, "down", http.StatusServiceUnavailable)
		}
	}))
	defer feeds.Close()

	get := func(t *testing.T, checker *update.Checker, path string, out any) int {
		t.Helper()
		h := httpapi.New(httpapi.Config{Home: home, Token: token, Version: "v1.4.2", Commit: "abc1234",
			BuildDate: "2026-12-02T02:00:00Z", DataDir: dir, Updates: checker})
		req := httptest.NewRequest("GET", "http://127.0.0.1:7788"+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		json.NewDecoder(w.Body).Decode(out)
		return w.Code
	}
	var info map[string]string
	if code := get(t, nil, "/api/info", &info); code != 200 || info["data_dir"] != dir || info["version"] != "v1.4.2" {
		t.Errorf("info: %d %v", code, info)
	}

	checker := func(path string) *update.Checker {
		return &update.Checker{FeedURL: feeds.URL + path, PublicKey: pub, Current: "v1.4.2", Platform: "windows-amd64"}
	}
	var st update.Status
	if code := get(t, checker("/good/feed.json"), "/api/update", &st); code != 200 || !st.Available || st.Latest != "v1.5.0" ||
		st.Current != "v1.4.2" || st.Notes != "Tray icon." || !strings.HasSuffix(st.URL, "rerun-setup-v1.5.0-amd64.exe") {
		t.Errorf("newer release: %d %+v", code, st)
	}
	for _, tc := range []struct {
		name    string
		checker *update.Checker
		code    int
		want    string
	}{
		{"bad signature", checker("/badsig/feed.json"), 502, "signature is not valid"},
		{"feed down", checker("/down/feed.json"), 502, "could not check for updates"},
		{"checks off", &update.Checker{FeedURL: "off"}, 409, "update checks are off"},
		{"no key built in", &update.Checker{FeedURL: feeds.URL + "/good/feed.json"}, 409, "no release key built in"},
		{"no checker", nil, 409, "update checks are off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fail struct{ Error string }
			if code := get(t, tc.checker, "/api/update", &fail); code != tc.code || !strings.Contains(fail.Error, tc.want) {
				t.Errorf("got %d %q, want %d %q", code, fail.Error, tc.code, tc.want)
			}
		})
	}
}

// "Download and verify", then "Open installer": the package lands in the
// data directory's updates folder only when the release key signed it, and
// only that verified file is handed to the system, on a second click.
func TestUpdateDownloadAndOpen(t *testing.T) {
	dir := t.TempDir()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	pkg := []byte(strings.Repeat("installer ", 4000))
	served := pkg
	sum := sha256.Sum256(pkg)
	var feed []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			w.Write(feed)
		case "/feed.json.sig":
			w.Write(update.Sign(priv, feed))
		case "/rerun-setup-v1.5.0-amd64.exe":
			w.Write(served)
		case "/rerun-setup-v1.5.0-amd64.exe.sig":
			w.Write(update.SignPackage(priv, sum[:]))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	feed = []byte(`{"version":"v1.5.0","url":"` + srv.URL + `/rerun-setup-v1.5.0-amd64.exe","sha256":"` + hex.EncodeToString(sum[:]) + `","notes":"Tray icon."}`)

	var opened []string
	h := httpapi.New(httpapi.Config{Home: home, Token: token, Version: "v1.4.2", DataDir: dir,
		Updates:  &update.Checker{FeedURL: srv.URL + "/feed.json", PublicKey: pub, Current: "v1.4.2", Platform: "windows-amd64"},
		OpenFile: func(p string) error { opened = append(opened, p); return nil }})
	post := func(path string, out any) int {
		req := httptest.NewRequest("POST", "http://127.0.0.1:7788"+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		json.NewDecoder(w.Body).Decode(out)
		return w.Code
	}
	var fail struct{ Error string }
	if code := post("/api/update/open", &fail); code != 409 || !strings.Contains(fail.Error, "download it first") || len(opened) != 0 {
		t.Fatalf("open before a download = %d %q, opened %q", code, fail.Error, opened)
	}

	// A package changed on its way is refused and not kept.
	served = append([]byte("X"), pkg[1:]...)
	if code := post("/api/update/download", &fail); code != 502 || !strings.Contains(fail.Error, "not the signed release") {
		t.Fatalf("tampered download = %d %q", code, fail.Error)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "updates")); len(entries) != 0 {
		t.Fatalf("a refused package left %d files", len(entries))
	}
	if code := post("/api/update/open", &fail); code != 409 {
		t.Fatalf("open after a refused download = %d", code)
	}

	served = pkg
	var d update.Downloaded
	if code := post("/api/update/download", &d); code != 200 || d.Version != "v1.5.0" || d.Path != filepath.Join(dir, "updates", "rerun-setup-v1.5.0-amd64.exe") {
		t.Fatalf("download = %d %+v", code, d)
	}
	if b, _ := os.ReadFile(d.Path); string(b) != string(pkg) {
		t.Fatalf("the kept package differs from the signed one")
	}
	if code := post("/api/update/open", &d); code != 200 || len(opened) != 1 || opened[0] != d.Path {
		t.Fatalf("open = %d, opened %q", code, opened)
	}
}
