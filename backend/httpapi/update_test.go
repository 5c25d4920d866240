package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
