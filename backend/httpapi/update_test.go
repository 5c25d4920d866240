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
	"sync/atomic"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/update"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
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
		var watch *update.Watch
		if checker != nil {
			watch = update.NewWatch(checker, update.WatchConfig{})
		}
		h := httpapi.New(httpapi.Config{Home: home, Token: token, Version: "v1.4.2", Commit: "abc1234",
			BuildDate: "2026-12-02T02:00:00Z", DataDir: dir, Updates: watch})
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
		Updates:  update.NewWatch(&update.Checker{FeedURL: srv.URL + "/feed.json", PublicKey: pub, Current: "v1.4.2", Platform: "windows-amd64"}, update.WatchConfig{}),
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

// What the last check found is answered without the network; a click
// updates it and tells open pages on the event stream; "Only when I ask"
// stops the daily check at once and is kept for the next start, which
// reads the last result back.
func TestLastUpdateAndTheDailyChoice(t *testing.T) {
	dir := t.TempDir()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	pub, priv, _ := ed25519.GenerateKey(nil)
	feed := []byte(`{"version":"v1.5.0","url":"https://example.com/rerun-setup.exe","sha256":"` + strings.Repeat("0f", 32) + `","notes":"Tray icon."}`)
	sig := update.Sign(priv, feed)
	var requests atomic.Int64
	feeds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json", "/badsig/feed.json":
			requests.Add(1)
			w.Write(feed)
		case "/feed.json.sig":
			w.Write(sig)
		case "/badsig/feed.json.sig":
			w.Write(update.Sign(priv, []byte("another feed")))
		default:
			http.NotFound(w, r)
		}
	}))
	defer feeds.Close()
	watch := func(path string) *update.Watch {
		return update.NewWatch(&update.Checker{FeedURL: feeds.URL + path, PublicKey: pub, Current: "v1.4.2"},
			update.WatchConfig{Path: filepath.Join(dir, update.WatchFile), Bus: home.Events()})
	}
	serve := func(w *update.Watch) *env {
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Home: home, Token: token, DataDir: dir, Updates: w}))
		t.Cleanup(srv.Close)
		return &env{srv: srv, home: home, ws: home.Current()}
	}
	type last struct {
		update.Result
		Checks string `json:"checks"`
		Off    string `json:"off"`
	}

	w := watch("/feed.json")
	e := serve(w)
	var got last
	if code := e.do(t, "GET", "/api/update/last", "", &got); code != 200 || got.Checks != "daily" || !got.CheckedAt.IsZero() || got.Available || !w.Daily() {
		t.Fatalf("before any check: %d %+v, want daily and nothing checked", code, got)
	}

	changes, stop := home.Events().Subscribe()
	defer stop()
	var st update.Status
	if code := e.do(t, "GET", "/api/update", "", &st); code != 200 || !st.Available {
		t.Fatalf("click: %d %+v", code, st)
	}
	if c := waittest.Recv(t, "the update.checked change", changes); c.Kind != update.KindChecked || c.Workspace != "" {
		t.Fatalf("change %+v, want %s for no workspace", c, update.KindChecked)
	}
	before := requests.Load()
	if code := e.do(t, "GET", "/api/update/last", "", &got); code != 200 || !got.Available || got.Latest != "v1.5.0" ||
		got.Notes != "Tray icon." || got.CheckedAt.IsZero() || requests.Load() != before {
		t.Fatalf("after the click: %d %+v (%d requests more), want v1.5.0 available and no request", code, got, requests.Load()-before)
	}

	var p struct {
		UpdateChecks string `json:"update_checks"`
	}
	if code := e.do(t, "GET", "/api/preferences", "", &p); code != 200 || p.UpdateChecks != "daily" {
		t.Fatalf("preferences = %d %+v, want daily", code, p)
	}
	if code := e.do(t, "PUT", "/api/preferences", `{"update_checks":"manual"}`, &p); code != 200 || p.UpdateChecks != "manual" || w.Daily() {
		t.Fatalf("PUT manual = %d %+v, daily still %v", code, p, w.Daily())
	}
	var fail struct{ Error string }
	if code := e.do(t, "PUT", "/api/preferences", `{"update_checks":"weekly"}`, &fail); code != 400 || !strings.Contains(fail.Error, `"manual"`) {
		t.Fatalf("PUT weekly = %d %q, want 400 naming the choices", code, fail.Error)
	}
	if code := e.do(t, "GET", "/api/update/last", "", &got); code != 200 || got.Checks != "manual" || !got.Available {
		t.Fatalf("manual: %d %+v", code, got)
	}

	// The next start: manual is applied, the last result read back.
	w = watch("/feed.json")
	e = serve(w)
	if code := e.do(t, "GET", "/api/update/last", "", &got); code != 200 || got.Checks != "manual" || w.Daily() || !got.Available || got.Latest != "v1.5.0" {
		t.Fatalf("after a restart: %d %+v, daily %v", code, got, w.Daily())
	}

	// A click on a badly signed feed: remembered as an error, no release.
	e = serve(watch("/badsig/feed.json"))
	if code := e.do(t, "GET", "/api/update", "", &fail); code != 502 || !strings.Contains(fail.Error, "signature is not valid") {
		t.Fatalf("bad signature click = %d %q", code, fail.Error)
	}
	got = last{}
	if code := e.do(t, "GET", "/api/update/last", "", &got); code != 200 || got.Available || got.Latest != "" || !strings.Contains(got.Error, "signature is not valid") {
		t.Fatalf("after a bad signature: %d %+v", code, got)
	}

	for _, tc := range []struct {
		name  string
		watch *update.Watch
		want  string
	}{
		{"no watch", nil, "update checks are off"},
		{"feed off", update.NewWatch(&update.Checker{FeedURL: "off", PublicKey: pub}, update.WatchConfig{Path: filepath.Join(dir, update.WatchFile)}), "RERUN_UPDATE_FEED"},
		{"no key", update.NewWatch(&update.Checker{FeedURL: feeds.URL + "/feed.json"}, update.WatchConfig{Path: filepath.Join(dir, update.WatchFile)}), "no release key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := last{}
			if code := serve(tc.watch).do(t, "GET", "/api/update/last", "", &got); code != 200 || got.Checks != "off" ||
				!strings.Contains(got.Off, tc.want) || !got.CheckedAt.IsZero() || got.Available {
				t.Fatalf("got %d %+v, want off saying %q", code, got, tc.want)
			}
		})
	}

	// Like every route, it asks for the token.
	res, err := http.Get(e.srv.URL + "/api/update/last")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Fatalf("without the token: %d, want 401", res.StatusCode)
	}
}
