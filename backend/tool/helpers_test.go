package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// testEnv is an Env over fresh temp folders and database paths.
func testEnv(t *testing.T) *Env {
	t.Helper()
	base := t.TempDir()
	return &Env{
		AgentID:     "a1",
		AgentName:   "Ada",
		AgentHandle: "ada",
		FilesDir:    filepath.Join(base, "agents", "a1", "files"),
		SharedDir:   filepath.Join(base, "shared"),
		AgentDB:     filepath.Join(base, "agents", "a1", "agent.db"),
		SharedDB:    filepath.Join(base, "shared.db"),
	}
}

// call runs the named catalog tool with input given as a Go value.
func call(t *testing.T, env *Env, name string, input any) (string, error) {
	t.Helper()
	tl, ok := Find(Catalog(), name)
	if !ok {
		t.Fatalf("tool %q is not in the catalog", name)
	}
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(context.Background(), env, raw)
}

// mustCall is call that fails the test on an error.
func mustCall(t *testing.T, env *Env, name string, input any) string {
	t.Helper()
	out, err := call(t, env, name, input)
	if err != nil {
		t.Fatalf("%s(%v): %v", name, input, err)
	}
	return out
}

// wantErr checks err is an ErrInvalid / ErrNotFound (as kind says) whose
// message holds want.
func wantErr(t *testing.T, err error, kind error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", want)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Errorf("got error kind of %q, want %v", err, kind)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("got error %q, want it to contain %q", err, want)
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

var invalid = fault.ErrInvalid

// runShell runs run_command and reads its result.
func runShell(t *testing.T, env *Env, input map[string]any) commandResult {
	t.Helper()
	out := mustCall(t, env, "run_command", input)
	var res commandResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("output %q is not the result JSON: %v", out, err)
	}
	return res
}
