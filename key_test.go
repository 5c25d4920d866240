package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// `rerun key create` without a NAME makes a key with a default name.
func TestKeyCreateWithoutName(t *testing.T) {
	dir := t.TempDir()
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	home.Close()
	r, w, _ := os.Pipe()
	stdout := os.Stdout
	os.Stdout = w
	err = keyCommand([]string{"create", "--data-dir", dir})
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatalf("rerun key create: %v", err)
	}
	keys, _, closeDB, err := workspace.Keys(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	list, _ := keys.List(context.Background())
	if len(list) != 1 || !strings.HasPrefix(list[0].Name, "created by rerun key create, ") {
		t.Fatalf("keys = %+v, want one with the default name", list)
	}
	if k := strings.TrimSpace(string(out)); !strings.HasPrefix(k, list[0].Prefix) {
		t.Errorf("printed %q, want the key starting %s", k, list[0].Prefix)
	}
}
