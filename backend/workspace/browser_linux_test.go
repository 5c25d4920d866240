package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// chromeOn lists the live processes whose command line names dir (an
// agent's browser profile): the browser and its helpers.
func chromeOn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmd), dir) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if _, rest, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(rest, "Z") {
				continue // a zombie: exited, waiting for its parent to reap it
			}
		}
		out = append(out, e.Name())
	}
	return out
}

// waitNone waits a little for the processes on dir to be gone.
func waitNone(t *testing.T, dir string) []string {
	t.Helper()
	var left []string
	for range 50 {
		if left = chromeOn(t, dir); len(left) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return left
}

// Each agent's Chromium goes with the agent, and every one of them with the
// app: none is left running.
func TestBrowsersEndWithTheirAgentAndTheApp(t *testing.T) {
	bin, err := browser.FindChrome(os.Getenv("RERUN_CHROME"))
	if errors.Is(err, browser.ErrNoBrowser) {
		t.Skip(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir, Chrome: bin, LocalAddr: "127.0.0.1:7777"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w, _ := h.Workspace(h.Current())
	var profiles []string
	var ids []string
	for _, name := range []string{"Leaver", "Stayer"} {
		a, err := w.Agents.Create(ctx, agent.NewAgent{Name: name, BoxID: firstBox(t, w)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Browsers.For(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(w.Agents.Dir(a.ID), "browser")
		if len(chromeOn(t, p)) == 0 {
			t.Fatalf("no browser process runs on %s", p)
		}
		profiles, ids = append(profiles, p), append(ids, a.ID)
	}
	// The app's own server is never a page of theirs.
	if _, err := w.Browsers.Start(ctx, ids[1], "http://localhost:7777/api/info"); err == nil || !strings.Contains(err.Error(), "local server") {
		t.Fatalf("opening the local server: err = %v, want a refusal", err)
	}

	if err := w.DeleteAgent(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if left := waitNone(t, profiles[0]); len(left) > 0 {
		t.Errorf("processes of the deleted agent's browser left: %v", left)
	}
	if _, err := os.Stat(filepath.Dir(profiles[0])); !os.IsNotExist(err) {
		t.Errorf("the deleted agent's folder is still there (%v)", err)
	}
	if len(chromeOn(t, profiles[1])) == 0 {
		t.Fatal("deleting one agent stopped another's browser")
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if left := waitNone(t, profiles[1]); len(left) > 0 {
		t.Errorf("processes left after the app closed: %v", left)
	}
}
