package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Pop out in the desktop window: the route hands the system the login link
// of the page that shows only that agent's Desktop; without the hook
// (rerun serve) it says to pop out from the browser; an agent or workspace
// that does not exist opens nothing.
func TestOpenDesktopPopsOutThroughTheSystem(t *testing.T) {
	ctx := context.Background()
	home, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	wsID := home.Current()
	ws, _ := home.Workspace(wsID)
	boxes, _ := ws.Boxes.List(ctx)
	var opened []string
	var openErr error
	window := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788",
		OpenURL: func(u string) error { opened = append(opened, u); return openErr }})
	serve := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788"})
	call := func(h http.Handler, auth bool, method, path, body string) (int, string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:7788"+path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var out struct{ Error string }
		json.NewDecoder(w.Body).Decode(&out)
		return w.Code, out.Error
	}
	var a struct{ ID string }
	req := httptest.NewRequest("POST", "http://127.0.0.1:7788/api/workspaces/"+wsID+"/agents",
		strings.NewReader(`{"name":"Scout","box_id":"`+boxes[0].ID+`"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	window.ServeHTTP(w, req)
	if json.NewDecoder(w.Body).Decode(&a); w.Code != 201 || a.ID == "" {
		t.Fatalf("create agent: %d", w.Code)
	}
	body := `{"workspace":"` + wsID + `","agent":"` + a.ID + `"}`

	if code, msg := call(window, true, "POST", "/api/ui/open-desktop", body); code != 204 || msg != "" {
		t.Fatalf("pop out = %d %q, want 204", code, msg)
	}
	if len(opened) != 1 {
		t.Fatalf("opened %q, want one address", opened)
	}
	// The address carries a one-time code, never the UI token (the
	// browser's command line is readable by every user of the computer).
	u, err := url.Parse(opened[0])
	if err != nil || u.Scheme+"://"+u.Host+u.Path != "http://127.0.0.1:7788/" || u.Fragment != "desktop="+wsID+"/"+a.ID ||
		u.Query().Get("login") == "" || strings.Contains(opened[0], token) {
		t.Fatalf("opened %q, want the page of the Desktop with a login code and no token", opened[0])
	}
	// The code signs the browser in once: an HttpOnly cookie with the
	// token, and the page again without the code. A second use does not.
	signIn := func() *http.Response {
		req := httptest.NewRequest("GET", "http://127.0.0.1:7788"+u.Path+"?"+u.RawQuery, nil)
		w := httptest.NewRecorder()
		window.ServeHTTP(w, req)
		return w.Result()
	}
	first := signIn()
	if first.StatusCode != http.StatusSeeOther || first.Header.Get("Location") != "/" {
		t.Fatalf("sign in with the code = %d to %q, want 303 to /", first.StatusCode, first.Header.Get("Location"))
	}
	if cs := first.Cookies(); len(cs) != 1 || cs[0].Value != token || !cs[0].HttpOnly {
		t.Fatalf("sign in with the code set %v, want an HttpOnly cookie with the token", cs)
	}
	again := signIn()
	if again.StatusCode != http.StatusSeeOther || len(again.Cookies()) != 0 {
		t.Fatalf("the code used again = %d with cookies %v, want a redirect without a cookie", again.StatusCode, again.Cookies())
	}
	// Each pop-out gets its own code.
	if code, _ := call(window, true, "POST", "/api/ui/open-desktop", body); code != 204 || len(opened) != 2 || opened[1] == opened[0] {
		t.Fatalf("a second pop out = %d, opened %q; want a new code", code, opened)
	}
	opened = opened[:1]

	for _, tc := range []struct {
		name    string
		h       http.Handler
		auth    bool
		body    string
		code    int
		message string
	}{
		{"no token", window, false, body, 401, "UI token"},
		{"rerun serve", serve, true, body, 409, "from your browser"},
		{"unknown agent", window, true, `{"workspace":"` + wsID + `","agent":"nobody"}`, 404, "no agent"},
		{"unknown workspace", window, true, `{"workspace":"elsewhere","agent":"` + a.ID + `"}`, 404, ""},
		{"nothing named", window, true, `{}`, 400, "name the workspace and the agent"},
		{"unknown field", window, true, `{"workspace":"` + wsID + `","agent":"` + a.ID + `","url":"http://evil.test"}`, 400, "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := call(tc.h, tc.auth, "POST", "/api/ui/open-desktop", tc.body)
			if code != tc.code || !strings.Contains(strings.ToLower(msg), strings.ToLower(tc.message)) {
				t.Errorf("got %d %q, want %d saying %q", code, msg, tc.code, tc.message)
			}
		})
	}
	if len(opened) != 1 {
		t.Errorf("refused calls opened %q", opened[1:])
	}

	// The system could not open it: the person hears why.
	openErr = errors.New("xdg-open: not found")
	if code, msg := call(window, true, "POST", "/api/ui/open-desktop", body); code != 500 || msg == "" {
		t.Errorf("failed open = %d %q, want 500 with a reason", code, msg)
	}
}

// The backups folder in the desktop window is chosen in the system's
// dialog: /api/info says there is one, the route hands it the title and a
// starting folder that exists (one that does not is left out), and
// answers the folder chosen, or "" when the person cancelled. Without the
// hook (rerun serve) the page types the path.
func TestPickFolderShowsTheWindowsDialog(t *testing.T) {
	ctx := context.Background()
	home, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	existing := t.TempDir()
	var asked [][2]string
	answer, answerErr := "/home/ada/Backups", error(nil)
	window := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788",
		PickFolder: func(_ context.Context, title, start string) (string, error) {
			asked = append(asked, [2]string{title, start})
			return answer, answerErr
		}})
	serve := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788"})
	call := func(h http.Handler, auth bool, method, path, body string) (int, map[string]string) {
		req := httptest.NewRequest(method, "http://127.0.0.1:7788"+path, strings.NewReader(body))
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		out := map[string]string{}
		json.NewDecoder(w.Body).Decode(&out)
		return w.Code, out
	}

	if _, info := call(window, true, "GET", "/api/info", ""); info["folder_picker"] != "native" {
		t.Errorf("window info folder_picker = %q, want native", info["folder_picker"])
	}
	if _, info := call(serve, true, "GET", "/api/info", ""); info["folder_picker"] != "" {
		t.Errorf("serve info folder_picker = %q, want none", info["folder_picker"])
	}

	code, out := call(window, true, "POST", "/api/ui/pick-folder", `{"title":"Choose the   backups folder","start":"`+existing+`"}`)
	if code != 200 || out["path"] != answer {
		t.Fatalf("pick = %d %v, want 200 with %q", code, out, answer)
	}
	if len(asked) != 1 || asked[0] != [2]string{"Choose the backups folder", existing} {
		t.Fatalf("dialog asked with %q", asked)
	}
	answer = ""
	if code, out := call(window, true, "POST", "/api/ui/pick-folder", `{"start":"/no/such/folder"}`); code != 200 || out["path"] != "" {
		t.Fatalf("cancelled pick = %d %v, want 200 with no path", code, out)
	}
	if asked[1] != [2]string{"Choose a folder", ""} {
		t.Errorf("a missing start folder reached the dialog: %q", asked[1])
	}
	answerErr = errors.New("no display")
	if code, out := call(window, true, "POST", "/api/ui/pick-folder", `{}`); code != 500 || !strings.Contains(out["error"], "folder dialog") {
		t.Errorf("failed dialog = %d %v, want 500 saying so", code, out)
	}
	for _, tc := range []struct {
		name string
		h    http.Handler
		auth bool
		code int
	}{
		{"no token", window, false, 401},
		{"rerun serve", serve, true, 409},
	} {
		if code, _ := call(tc.h, tc.auth, "POST", "/api/ui/pick-folder", `{}`); code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
	}
	if len(asked) != 3 {
		t.Errorf("refused calls showed the dialog: %q", asked[3:])
	}
}
