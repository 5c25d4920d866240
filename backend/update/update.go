// Package update owns the check for a newer Rerun: it reads the release
// feed, verifies the feed's ed25519 signature with the key built into this
// binary, and compares versions; on the person's click it downloads the
// package and keeps it only when the key signed it (download.go). It never
// installs anything: the person opens the verified package. A Watch
// (watch.go) checks by itself, once a day, and remembers what it found.
//
// The feed is two files at a configurable URL: FEED (JSON, see Release) and
// FEED.sig, the base64 ed25519 signature of FEED's exact bytes. The feed's
// sha256 of the package ties the package to the same key.
package update

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Release is what the feed says about the newest release.
type Release struct {
	Version string `json:"version"` // semver, "v" optional: v1.4.0
	URL     string `json:"url"`     // the package (or release page) to download
	SHA256  string `json:"sha256"`  // hex sha256 of the package at URL
	Notes   string `json:"notes"`   // what changed, plain text or markdown
	// Downloads names a package per platform ("windows-amd64",
	// "linux-amd64", …); a platform missing here gets URL and SHA256.
	Downloads map[string]Download `json:"downloads,omitempty"`
}

// Download is one platform's package.
type Download struct {
	URL    string `json:"url"`
	SHA256 string `json:"sha256"`
}

// Status is the answer of a check.
type Status struct {
	Current   string `json:"current"`
	Latest    string `json:"latest"`
	Available bool   `json:"available"`
	URL       string `json:"url,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	Notes     string `json:"notes,omitempty"`
}

// Errors of Check, besides fault.ErrInvalid for a feed that is not valid.
var (
	// ErrOff: no feed URL is configured (RERUN_UPDATE_FEED=off, tests).
	ErrOff = errors.New("update checks are off")
	// ErrUnreachable: the feed could not be fetched (offline, server down).
	ErrUnreachable = errors.New("could not check for updates")
	// ErrSignature: the feed is not signed by the built-in key.
	ErrSignature = errors.New("the release feed's signature is not valid")
	// ErrNoKey: this build has no key to check a feed with (a local build).
	ErrNoKey = errors.New("this build has no release key built in")
)

// maxFeed caps what is read from the feed; a real one is a few KiB.
const maxFeed = 1 << 20

// Checker checks one feed. The zero HTTP client is http.DefaultClient with
// a 15 s timeout.
type Checker struct {
	FeedURL   string            // "" or "off": checks are off
	PublicKey ed25519.PublicKey // the key built into the binary; nil: refuse every feed
	Current   string            // this build's version
	Platform  string            // GOOS-GOARCH
	Client    *http.Client
}

// Check fetches and verifies the feed and says whether its release is newer
// than Current.
func (c *Checker) Check(ctx context.Context) (Status, error) {
	if err := c.Ready(); err != nil {
		return Status{}, err
	}
	feed, err := c.get(ctx, c.FeedURL)
	if err != nil {
		return Status{}, err
	}
	sig, err := c.get(ctx, c.FeedURL+".sig")
	if err != nil {
		return Status{}, err
	}
	r, err := Verify(c.PublicKey, feed, sig)
	if err != nil {
		return Status{}, err
	}
	st := Status{Current: c.Current, Latest: r.Version, URL: r.URL, SHA256: r.SHA256, Notes: r.Notes}
	if d, ok := r.Downloads[c.Platform]; ok {
		st.URL, st.SHA256 = d.URL, d.SHA256
	}
	st.Available = Newer(r.Version, c.Current)
	return st, nil
}

// Ready says, without the network, whether Check can run: ErrOff with no
// feed URL, ErrNoKey with no key built in.
func (c *Checker) Ready() error {
	if c.FeedURL == "" || c.FeedURL == "off" {
		return fmt.Errorf("%w: set RERUN_UPDATE_FEED to a release feed URL to turn them on", ErrOff)
	}
	if len(c.PublicKey) != ed25519.PublicKeySize {
		return fmt.Errorf("%w, so it trusts no release feed; new versions are on the releases page", ErrNoKey)
	}
	return nil
}

// Reason is the sentence a failed check shows the person: the feed's
// fault (unreachable, unsigned, not valid) said as such.
func Reason(err error) string {
	msg := fault.Message(err)
	if errors.Is(err, fault.ErrInvalid) {
		msg = "could not check for updates: " + msg
	}
	return msg
}

func (c *Checker) get(ctx context.Context, u string) ([]byte, error) {
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 15 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return nil, fault.Invalid("the release feed URL %q is not valid: %v", u, err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s did not answer (%v); check the internet connection", ErrUnreachable, host(u), unwrapURL(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s answered %s", ErrUnreachable, host(u), resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFeed+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading from %s: %v", ErrUnreachable, host(u), err)
	}
	if len(b) > maxFeed {
		return nil, fault.Invalid("the release feed at %s is larger than %d bytes", host(u), maxFeed)
	}
	return b, nil
}

func host(u string) string {
	if p, err := url.Parse(u); err == nil && p.Host != "" {
		return p.Host
	}
	return "the release feed"
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Verify checks sig (base64, as in FEED.sig) over feed with key and parses
// the feed. The signature is checked before the JSON is read.
func Verify(key ed25519.PublicKey, feed, sig []byte) (Release, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	if err != nil || len(raw) != ed25519.SignatureSize || len(key) != ed25519.PublicKeySize || !ed25519.Verify(key, feed, raw) {
		return Release{}, fmt.Errorf("%w: it was refused; the feed or its .sig was changed, or it is signed with another key", ErrSignature)
	}
	return Parse(feed)
}

// Parse reads a feed and checks its fields: a semver version, an https (or
// loopback http) URL, a sha256 of 64 hex digits.
func Parse(feed []byte) (Release, error) {
	var r Release
	dec := json.NewDecoder(strings.NewReader(string(feed)))
	if err := dec.Decode(&r); err != nil {
		return Release{}, fault.Invalid("the release feed is not valid JSON: %v", err)
	}
	if dec.More() {
		return Release{}, fault.Invalid("the release feed has data after its JSON object")
	}
	if _, ok := parseSemver(r.Version); !ok {
		return Release{}, fault.Invalid("the release feed's version %q is not a version like v1.2.3", r.Version)
	}
	if err := checkDownload("", Download{URL: r.URL, SHA256: r.SHA256}); err != nil {
		return Release{}, err
	}
	for platform, d := range r.Downloads {
		if err := checkDownload(platform, d); err != nil {
			return Release{}, err
		}
	}
	return r, nil
}

func checkDownload(platform string, d Download) error {
	what := "the release feed's"
	if platform != "" {
		what = fmt.Sprintf("the release feed's %s", platform)
	}
	u, err := url.Parse(d.URL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return fault.Invalid("%s url %q is not an https URL", what, d.URL)
	}
	if b, err := hex.DecodeString(d.SHA256); err != nil || len(b) != 32 {
		return fault.Invalid("%s sha256 %q is not 64 hex digits", what, d.SHA256)
	}
	return nil
}

func isLoopback(h string) bool {
	return h == "localhost" || h == "127.0.0.1" || h == "::1"
}

// Sign is what `make dist` runs (build/feed): the base64 signature of feed.
func Sign(key ed25519.PrivateKey, feed []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(key, feed)) + "\n")
}

// ParsePublicKey reads a base64 ed25519 public key (the -ldflags value).
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fault.Invalid("the release key %q is not a base64 ed25519 public key", s)
	}
	return ed25519.PublicKey(b), nil
}
