package secret

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSealOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	b, err := OpenBox(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
	sealed := b.Seal("sk-ant-secret", "anthropic")
	if strings.Contains(sealed, "sk-ant") {
		t.Fatal("sealed value contains the plain text")
	}
	if b.Seal("sk-ant-secret", "anthropic") == sealed {
		t.Error("two seals of one value are equal: the nonce is not random")
	}
	b2, err := OpenBox(path) // reopen: same key
	if err != nil {
		t.Fatal(err)
	}
	if got, err := b2.Open(sealed, "anthropic"); err != nil || got != "sk-ant-secret" {
		t.Errorf("Open = %q, %v; want the secret", got, err)
	}
	if _, err := b2.Open(sealed, "openai"); err == nil {
		t.Error("opened with the wrong label")
	}
	if _, err := b2.Open("bm90IHNlYWxlZA==", "anthropic"); err == nil {
		t.Error("opened garbage")
	}
	other, _ := OpenBox(filepath.Join(t.TempDir(), "k"))
	if _, err := other.Open(sealed, "anthropic"); err == nil {
		t.Error("opened with another key")
	}
}

func TestBadKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := OpenBox(path); err == nil || !strings.Contains(err.Error(), "want 32") {
		t.Errorf("short key: %v, want an error saying the size", err)
	}
}
