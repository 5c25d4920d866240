package update

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// releaseServer serves a signed feed for v1.5.0 whose linux-amd64 package
// is pkg, and what it says as the package's bytes and signature (served
// and sig; the real ones when nil).
type releaseServer struct {
	pkg, served, sig []byte
	name             string
}

func (rs *releaseServer) start(t *testing.T, priv ed25519.PrivateKey) string {
	t.Helper()
	sum := sha256.Sum256(rs.pkg)
	if rs.served == nil {
		rs.served = rs.pkg
	}
	if rs.sig == nil {
		rs.sig = SignPackage(priv, sum[:])
	}
	if rs.name == "" {
		rs.name = "rerun_1.5.0_amd64.deb"
	}
	var feed []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			w.Write(feed)
		case "/feed.json.sig":
			w.Write(Sign(priv, feed))
		case "/pkg/" + rs.name:
			w.Write(rs.served)
		case "/pkg/" + rs.name + ".sig":
			if len(rs.sig) == 0 {
				http.NotFound(w, r)
				return
			}
			w.Write(rs.sig)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	feed = []byte(`{"version":"v1.5.0","url":"` + srv.URL + `/pkg/` + rs.name + `","sha256":"` + hex.EncodeToString(sum[:]) + `","notes":"Faster."}`)
	return srv.URL + "/feed.json"
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestDownloadVerifiesThePackage(t *testing.T) {
	pub, priv := keys(t)
	pkg := bytes.Repeat([]byte("deb package "), 50_000)
	rs := &releaseServer{pkg: pkg}
	c := &Checker{FeedURL: rs.start(t, priv), PublicKey: pub, Current: "v1.4.0", Platform: "linux-amd64"}
	dir := filepath.Join(t.TempDir(), "updates")
	d, err := c.Download(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(d.Path)
	if d.Version != "v1.5.0" || d.Path != filepath.Join(dir, "rerun_1.5.0_amd64.deb") || !bytes.Equal(got, pkg) || d.Size != int64(len(pkg)) {
		t.Fatalf("downloaded %+v (%d bytes on disk)", d, len(got))
	}
	if names := files(t, dir); len(names) != 1 {
		t.Errorf("left in the folder: %q, want only the package", names)
	}
}

func TestDownloadRefusesWhatTheKeyDidNotSign(t *testing.T) {
	pub, priv := keys(t)
	_, other := keys(t)
	pkg := []byte("the real package")
	otherSum := sha256.Sum256([]byte("another package"))
	for _, tc := range []struct {
		name string
		rs   *releaseServer
	}{
		{"package changed on the server", &releaseServer{pkg: pkg, served: []byte("the real packagE")}},
		{"package cut short", &releaseServer{pkg: pkg, served: pkg[:5]}},
		{"signature by another key", &releaseServer{pkg: pkg, sig: SignPackage(other, otherSum[:])}},
		{"signature of another package", &releaseServer{pkg: pkg, sig: SignPackage(priv, otherSum[:])}},
		{"no signature", &releaseServer{pkg: pkg, sig: []byte{}}},
		{"signature not base64", &releaseServer{pkg: pkg, sig: []byte("%%%")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Checker{FeedURL: tc.rs.start(t, priv), PublicKey: pub, Current: "v1.4.0", Platform: "linux-amd64"}
			dir := t.TempDir()
			_, err := c.Download(context.Background(), dir)
			if !errors.Is(err, ErrPackage) {
				t.Fatalf("Download = %v, want ErrPackage", err)
			}
			if names := files(t, dir); len(names) != 0 {
				t.Errorf("left in the folder after a refusal: %q", names)
			}
		})
	}
}

func TestDownloadOnlyANewerRelease(t *testing.T) {
	pub, priv := keys(t)
	rs := &releaseServer{pkg: []byte("p")}
	c := &Checker{FeedURL: rs.start(t, priv), PublicKey: pub, Current: "v1.5.0", Platform: "linux-amd64"}
	if _, err := c.Download(context.Background(), t.TempDir()); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("Download of the current version = %v, want an invalid-request error", err)
	}
}

func TestPackageName(t *testing.T) {
	for u, ok := range map[string]bool{
		"https://x.example/r/rerun_1.5.0_amd64.deb":  true,
		"https://x.example/r/Rerun-Setup.exe?dl=1":   true,
		"https://x.example/":                         false,
		"https://x.example/r/..":                     false,
		"https://x.example/r/.bashrc":                false,
		"https://x.example/r/a%2F..%2F..%2Fetc":      true, // its last part, "etc", inside the folder
		"https://x.example/r/C:%5Cwindows%5Cwin.ini": false,
	} {
		if _, err := packageName(u); (err == nil) != ok {
			t.Errorf("packageName(%q) = %v, want ok=%v", u, err, ok)
		}
	}
}
