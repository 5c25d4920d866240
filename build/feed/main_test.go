package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/update"
)

// A feed signed with a new key verifies with the public key keygen printed
// and names each package's platform with its sha256.
func TestSignedFeedVerifies(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "release.key")
	var pub strings.Builder
	if err := keygen(keyFile, &pub); err != nil {
		t.Fatal(err)
	}
	if err := keygen(keyFile, &pub); err == nil {
		t.Error("keygen overwrote an existing key")
	}
	deb, exe := filepath.Join(dir, "rerun_1.2.0_amd64.deb"), filepath.Join(dir, "rerun-setup-v1.2.0-amd64.exe")
	os.WriteFile(deb, []byte("deb"), 0o644)
	os.WriteFile(exe, []byte("exe"), 0o644)
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("Tray icon.\n"), 0o644)
	if err := signCommand([]string{"-key", keyFile, "-version", "v1.2.0", "-base-url", "https://example.com/v1.2.0/", "-notes", notes, "-out", dir, deb, exe}); err != nil {
		t.Fatal(err)
	}
	feed, _ := os.ReadFile(filepath.Join(dir, "feed.json"))
	sig, _ := os.ReadFile(filepath.Join(dir, "feed.json.sig"))
	key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(pub.String()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := update.Verify(ed25519.PublicKey(key), feed, sig)
	if err != nil {
		t.Fatal(err)
	}
	// sha256("exe")
	if w := r.Downloads["windows-amd64"]; r.Version != "v1.2.0" || r.Notes != "Tray icon." || r.URL != "https://example.com/v1.2.0/rerun_1.2.0_amd64.deb" ||
		w.URL != "https://example.com/v1.2.0/rerun-setup-v1.2.0-amd64.exe" || w.SHA256 != "9095bdb859308b62acf04036ffd4adfe366d7f737d276eb6c46ae434f3816c9b" ||
		r.Downloads["linux-amd64"].SHA256 != r.SHA256 {
		t.Errorf("feed %s", feed)
	}
}

// What make dist uploads is what the app downloads and verifies: the feed,
// its signature, the packages and their signatures, served from a folder.
func TestAppDownloadsWhatWasSigned(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "release.key")
	var pub strings.Builder
	if err := keygen(keyFile, &pub); err != nil {
		t.Fatal(err)
	}
	key, _ := update.ParsePublicKey(pub.String())
	pub2 := filepath.Join(dir, "site")
	os.Mkdir(pub2, 0o755)
	srv := httptest.NewServer(http.FileServer(http.Dir(pub2)))
	defer srv.Close()
	deb := filepath.Join(pub2, "rerun_1.2.0_amd64.deb")
	os.WriteFile(deb, []byte(strings.Repeat("a deb ", 1000)), 0o644)
	if err := signCommand([]string{"-key", keyFile, "-version", "v1.2.0", "-base-url", srv.URL, "-out", pub2, deb}); err != nil {
		t.Fatal(err)
	}
	c := &update.Checker{FeedURL: srv.URL + "/feed.json", PublicKey: key, Current: "v1.1.0", Platform: "linux-amd64"}
	d, err := c.Download(context.Background(), filepath.Join(dir, "downloads"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(d.Path); string(got) != strings.Repeat("a deb ", 1000) || d.Version != "v1.2.0" {
		t.Fatalf("downloaded %+v", d)
	}
}
