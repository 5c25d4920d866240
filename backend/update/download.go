package update

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// A package is tied to the release key twice: its SHA-256 is in the signed
// feed, and PACKAGE.sig next to it is the base64 ed25519 signature of that
// SHA-256 (the 32 bytes of the digest), made by build/feed sign. Download
// checks both before the file takes its name; nothing is run or installed
// here: the person opens the verified package themselves (Open).

// ErrPackage: the downloaded package is not what the release key signed.
var ErrPackage = errors.New("the downloaded package is not the signed release")

// MaxPackage caps a download; a release package is tens of MB.
const MaxPackage = 1 << 30

// Downloaded is a package on disk, verified.
type Downloaded struct {
	Version string `json:"version"`
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Size    int64  `json:"size"`
}

// SignPackage is the base64 signature of a package's SHA-256 digest (what
// build/feed writes as PACKAGE.sig).
func SignPackage(key ed25519.PrivateKey, digest []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, digest)) + "\n")
}

// Download checks the feed again (a status from the client is not
// trusted), then fetches this platform's package of a newer release into
// dir and verifies it. A package that fails a check is deleted; only a
// verified one is left, under its own file name.
func (c *Checker) Download(ctx context.Context, dir string) (Downloaded, error) {
	st, err := c.Check(ctx)
	if err != nil {
		return Downloaded{}, err
	}
	if !st.Available {
		return Downloaded{}, fault.Invalid("Rerun %s is already the newest version; there is nothing to download", st.Current)
	}
	name, err := packageName(st.URL)
	if err != nil {
		return Downloaded{}, err
	}
	want, _ := hex.DecodeString(st.SHA256) // Parse checked it
	sig, err := c.get(ctx, st.URL+".sig")
	if err != nil {
		return Downloaded{}, fmt.Errorf("%w: its signature (%s.sig) could not be fetched: %v", ErrPackage, name, err)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	if err != nil || len(raw) != ed25519.SignatureSize || !ed25519.Verify(c.PublicKey, want, raw) {
		return Downloaded{}, fmt.Errorf("%w: %s.sig is not the release key's signature of it; nothing was downloaded", ErrPackage, name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Downloaded{}, fmt.Errorf("download the update: %w", err)
	}
	part, err := os.CreateTemp(dir, name+".*.part")
	if err != nil {
		return Downloaded{}, fmt.Errorf("download the update: %w", err)
	}
	defer os.Remove(part.Name()) // gone once renamed
	n, got, err := c.fetch(ctx, st.URL, part)
	if cerr := part.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("download the update: %w", cerr)
	}
	if err != nil {
		return Downloaded{}, err
	}
	if !ed25519.Verify(c.PublicKey, got, raw) || hex.EncodeToString(got) != st.SHA256 {
		return Downloaded{}, fmt.Errorf("%w: %s has SHA-256 %x, the signed feed says %s; it was deleted", ErrPackage, name, got, st.SHA256)
	}
	final := filepath.Join(dir, name)
	if err := os.Rename(part.Name(), final); err != nil {
		return Downloaded{}, fmt.Errorf("download the update: %w", err)
	}
	return Downloaded{Version: st.Latest, Path: final, SHA256: st.SHA256, Size: n}, nil
}

// fetch streams u into w, returning its size and SHA-256.
func (c *Checker) fetch(ctx context.Context, u string, w io.Writer) (int64, []byte, error) {
	client := c.Client
	if client == nil {
		// A package takes longer than a feed: no total timeout, but one
		// for the answer to start.
		client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ResponseHeaderTimeout: 30 * time.Second}}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, nil, fault.Invalid("the package URL %q is not valid: %v", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s did not answer (%v); check the internet connection", ErrUnreachable, host(u), unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("%w: %s answered %s for the package", ErrUnreachable, host(u), resp.Status)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(resp.Body, MaxPackage+1))
	if err != nil {
		return n, nil, fmt.Errorf("%w: the download from %s broke off after %d bytes: %v", ErrUnreachable, host(u), n, err)
	}
	if n > MaxPackage {
		return n, nil, fmt.Errorf("%w: it is larger than %d bytes", ErrPackage, int64(MaxPackage))
	}
	return n, h.Sum(nil), nil
}

// packageName is the file name a package is saved under: the last part of
// its URL's path, refused when it could name something else.
func packageName(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", fault.Invalid("the package URL %q is not valid: %v", u, err)
	}
	name := path.Base(p.Path)
	if name == "" || name == "." || name == "/" || name == ".." || strings.ContainsAny(name, `/\:`) || strings.HasPrefix(name, ".") {
		return "", fault.Invalid("the package URL %q does not end in a file name", u)
	}
	return name, nil
}
