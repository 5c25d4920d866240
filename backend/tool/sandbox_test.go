//go:build linux

package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/sandbox"
)

// run_command is confined: the workspace's other files and the app's own
// process are out of reach; the network follows the agent's switch.
func TestRunCommandSandboxed(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	env := testEnv(t)
	ws := filepath.Dir(env.SharedDir)
	if err := os.WriteFile(filepath.Join(ws, "secret.key"), []byte("KEY-CANARY"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "REACHED") }))
	defer srv.Close()
	for _, tt := range []struct {
		name, command string
		noNet         bool
		want          string
		code          int
	}{
		{"workspace key", "cat ../../../secret.key", false, "Permission denied", 1},
		{"app environ", `tr '\0' '\n' < /proc/$PPID/environ`, false, "Permission denied", 2},
		{"own folder", "echo mine > m.txt && cat m.txt", false, "mine", 0},
		{"shared folder", `echo s > "$SHARED_DIR/s.txt" && cat "$SHARED_DIR/s.txt"`, false, "s", 0},
		{"temp folder", `mktemp | grep -c "^$TMPDIR/"`, false, "1", 0},
		{"network on", "curl -sS " + srv.URL, false, "REACHED", 0},
		{"network off", "curl -sS " + srv.URL, true, "Couldn't connect", 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env.NoNetwork = tt.noNet
			res := runShell(t, env, map[string]any{"command": tt.command})
			if res.ExitCode != tt.code || !strings.Contains(res.Output, tt.want) || strings.Contains(res.Output, "CANARY") {
				t.Fatalf("%s: exit %d, %q; want exit %d with %q", tt.command, res.ExitCode, res.Output, tt.code, tt.want)
			}
		})
	}
}

// Where commands are not sandboxed, each one waits for the person's
// approval: run_command carries its own approval card.
func TestRunCommandAsksWhenNotSandboxed(t *testing.T) {
	t.Setenv("RERUN_SANDBOX", "off")
	rc, _ := Find(Catalog(), "run_command")
	if rc.Approve == nil {
		t.Fatal("run_command runs unconfined without asking")
	}
	title, detail, err := rc.Approve(context.Background(), json.RawMessage(`{"command":"ls -la"}`))
	if err != nil || !strings.Contains(title, "not sandboxed") || detail != "ls -la" {
		t.Fatalf("approval card %q %q %v", title, detail, err)
	}
	if ok, why := Sandboxed(); ok || !strings.Contains(why, "off") {
		t.Fatalf("Sandboxed() = %v, %q", ok, why)
	}
	t.Setenv("RERUN_SANDBOX", "")
	if ok, _ := sandbox.Available(); ok {
		if rc, _ := Find(Catalog(), "run_command"); rc.Approve != nil {
			t.Fatal("run_command asks although commands are sandboxed")
		}
	}
}
