package connector_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// An app's stdio server runs confined: it reads its agent's folder, the
// shared folder and the folder its configuration names, and nothing else
// of the workspace; its ordinary calls still work.
func TestStdioServerSandboxed(t *testing.T) {
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	ctx := context.Background()
	ws := t.TempDir()
	named := t.TempDir() // the folder the app's configuration names
	files := map[string]string{
		filepath.Join(ws, "agents", agentA, "files", "mine.txt"): "MINE",
		filepath.Join(ws, "shared", "team.txt"):                  "TEAM",
		filepath.Join(ws, "agents", agentB, "files", "b.txt"):    "OTHER-AGENT-CANARY",
		filepath.Join(ws, "workspace.db"):                        "DB-CANARY",
		filepath.Join(named, "doc.txt"):                          "NAMED",
	}
	for p, text := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(t.TempDir(), "secret.key")
	os.WriteFile(outside, []byte("KEY-CANARY"), 0o600)

	f := newFixture(t, connector.Config{AgentsDir: filepath.Join(ws, "agents")})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AddCustom(ctx, agentA, connector.Custom{
		Name: "Test server", Command: exe, Args: []string{named},
		Env: map[string]string{connectortest.StdioEnv: "1"},
	}); err != nil {
		t.Fatal(err)
	}
	tools, err := f.svc.Tools(ctx, agentA)
	if err != nil {
		t.Fatal(err)
	}
	echo, _ := tool.Find(tools, "test_server__echo")
	read, ok := tool.Find(tools, "test_server__read")
	if !ok {
		t.Fatalf("no read tool among %d tools", len(tools))
	}
	if out, err := echo.Run(ctx, nil, json.RawMessage(`{"message":"hi"}`)); err != nil || out != "echo: hi" {
		t.Fatalf("echo in the sandbox: %q, %v", out, err)
	}
	readFile := func(path string) (string, error) {
		in, _ := json.Marshal(map[string]string{"path": path})
		return read.Run(ctx, nil, in)
	}
	for path, want := range map[string]string{
		"mine.txt": "MINE", filepath.Join(ws, "shared", "team.txt"): "TEAM", filepath.Join(named, "doc.txt"): "NAMED",
	} {
		if out, err := readFile(path); err != nil || !strings.Contains(out, want) {
			t.Errorf("read %s: %q, %v; want %q", path, out, err, want)
		}
	}
	for _, path := range []string{outside, filepath.Join(ws, "workspace.db"), "../../" + agentB + "/files/b.txt", "/proc/self/environ"} {
		out, err := readFile(path)
		t.Logf("read %s → %q, %v", path, out, err)
		if err == nil || !strings.Contains(err.Error(), "permission denied") || strings.Contains(out+err.Error(), "CANARY") {
			t.Errorf("read %s: %q, %v; want permission denied", path, out, err)
		}
	}
}
