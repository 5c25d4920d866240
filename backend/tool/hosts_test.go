package tool

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// hostVars is a workspace with TOKEN limited to hosts and FREE unlimited.
func hostVars(t *testing.T, hosts ...string) *secret.Variables {
	t.Helper()
	box, err := secret.NewBox(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := secret.NewVariables(storetest.Open(t), box, "ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	value := "tok-bound-0123456789"
	if _, err := vars.Update(context.Background(), "TOKEN", secret.Change{Value: &value, Hosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Set(context.Background(), "FREE", "free-value-0123"); err != nil {
		t.Fatal(err)
	}
	return vars
}

// seen records, by Host header, the requests a server received and the
// Authorization they carried.
type seen struct {
	mu   sync.Mutex
	auth map[string][]string
}

func (s *seen) get(host string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth[host]
}

func TestFetchURLHostBoundVariable(t *testing.T) {
	rec := &seen{auth: map[string][]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.auth[r.Host] = append(rec.auth[r.Host], r.Header.Get("X-Token"))
		rec.mu.Unlock()
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	local := u.Host                                              // 127.0.0.1:port
	other := strings.Replace(local, "127.0.0.1", "localhost", 1) // the same server under another name

	env := testEnv(t)
	env.Vars = hostVars(t, "127.0.0.1")
	headers := map[string]any{"X-Token": "${TOKEN}"}

	// Allowed host: sent.
	if _, err := call(t, env, "fetch_url", map[string]any{"url": srv.URL + "/a", "headers": headers}); err != nil {
		t.Fatalf("fetch from an allowed host: %v", err)
	}
	if got := rec.get(local); len(got) != 1 || got[0] != "tok-bound-0123456789" {
		t.Fatalf("allowed host saw %q, want the token once", got)
	}

	// Another host: refused before anything is sent.
	_, err := call(t, env, "fetch_url", map[string]any{"url": "http://" + other + "/b", "headers": headers})
	want := "the variable TOKEN may only be sent to 127.0.0.1, and this would send it to localhost: nothing was sent"
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Settings → Variables") {
		t.Fatalf("fetch from another host: err = %v, want %q", err, want)
	}
	// In the URL too.
	if _, err := call(t, env, "fetch_url", map[string]any{"url": "http://" + other + "/c?t=${TOKEN}"}); err == nil || !strings.Contains(err.Error(), "may only be sent to 127.0.0.1") {
		t.Fatalf("token in another host's URL: err = %v", err)
	}
	if got := rec.get(other); len(got) != 0 {
		t.Fatalf("the other host received %d requests: %q", len(got), got)
	}

	// A redirect to another host is not followed with the header.
	_, err = call(t, env, "fetch_url", map[string]any{"url": srv.URL + "/r?to=" + url.QueryEscape("http://"+other+"/d"), "headers": headers})
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "the server redirected to http://"+other+"/d: the variable TOKEN may only be sent to 127.0.0.1") {
		t.Fatalf("redirect to another host: err = %v", err)
	}
	if got := rec.get(other); len(got) != 0 {
		t.Fatalf("the redirect reached the other host: %q", got)
	}

	// An unbound variable goes anywhere (what every variable did before).
	if _, err := call(t, env, "fetch_url", map[string]any{"url": "http://" + other + "/e", "headers": map[string]any{"X-Token": "${FREE}"}}); err != nil {
		t.Fatalf("unbound variable: %v", err)
	}
	if got := rec.get(other); len(got) != 1 || got[0] != "free-value-0123" {
		t.Fatalf("other host saw %q, want FREE's value once", got)
	}
}

func TestRunCommandHostBoundVariable(t *testing.T) {
	env := testEnv(t)
	env.Vars = hostVars(t, "*.example.com")
	ran := func() bool {
		_, err := os.Stat(filepath.Join(env.FilesDir, "ran"))
		os.Remove(filepath.Join(env.FilesDir, "ran"))
		return err == nil
	}
	refused := []struct {
		name    string
		command string
		env     map[string]any
	}{
		{"url in the command", `touch ran; echo "https://evil.example/?t=${TOKEN}"`, nil},
		{"another url beside an allowed one", `touch ran; echo https://api.example.com/x ${TOKEN} http://evil.example:8080/`, nil},
		{"url with a user part", `touch ran; echo ssh://${TOKEN}@evil.example/repo`, nil},
		{"variable in env", `touch ran; echo https://evil.example/$T`, map[string]any{"T": "${TOKEN}"}},
		{"url in env", `touch ran; echo $U ${TOKEN}`, map[string]any{"U": "https://evil.example/"}},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			ran()
			in := map[string]any{"command": tt.command}
			if tt.env != nil {
				in["env"] = tt.env
			}
			_, err := call(t, env, "run_command", in)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "the variable TOKEN may only be sent to *.example.com, and this would send it to evil.example: nothing was sent") {
				t.Fatalf("err = %v, want TOKEN refused for evil.example", err)
			}
			if ran() {
				t.Fatal("the command ran")
			}
		})
	}
	for _, command := range []string{
		`touch ran; echo https://api.example.com/${TOKEN} https://example.com`,
		`touch ran; echo ${TOKEN} >/dev/null`,                     // no URL: where it goes is not written
		`touch ran; echo https://evil.example/ ${FREE} $${TOKEN}`, // FREE is unbound; $${ is literal
	} {
		res := runShell(t, env, map[string]any{"command": command})
		if res.ExitCode != 0 || !ran() {
			t.Errorf("%s: exit %d, output %q; want it run", command, res.ExitCode, res.Output)
		}
	}
}
