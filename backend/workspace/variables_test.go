package workspace_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Nothing the home logs carries a variable's value.
func TestLogsNeverCarryVariableValues(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	h, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	other, _ := h.Create(ctx, "Other")
	w, _ := h.Workspace(other.ID)
	const value = "ghp_canary0123456789"
	if _, err := w.Variables.Set(ctx, "GITHUB_TOKEN", value); err != nil {
		t.Fatal(err)
	}
	h.Logger().Info("tool said "+value, "output", "token="+value)
	h.Logger().With("workspace", other.ID).Warn("again", "err", value)
	if strings.Contains(buf.String(), value) {
		t.Errorf("log carries the value:\n%s", buf.String())
	}
	if !strings.Contains(buf.String(), "tool said") {
		t.Errorf("log lost the line itself:\n%s", buf.String())
	}
}

// The variables route says where the data key is; tests keep it in a file.
func TestKeyStoreOfTests(t *testing.T) {
	dir := t.TempDir()
	h := open(t, dir)
	defer h.Close()
	where, note := h.KeyStore()
	if where != secret.KeyStoreFile || !strings.Contains(note, filepath.Join(dir, "secret.key")) {
		t.Errorf("key store = %q, %q; want the file in the data dir", where, note)
	}
	if fi, err := os.Stat(filepath.Join(dir, "secret.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v; want mode 0600", fi, err)
	}
}
