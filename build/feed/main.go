// Command feed makes the signed release feed "Check for updates" reads
// (backend/update): FEED.json listing the packages with their sha256,
// FEED.json.sig, its ed25519 signature, and PACKAGE.sig for each package
// (the signature of its sha256), to upload beside it.
//
//	go run ./build/feed keygen KEYFILE      new signing key (0600); prints the public key
//	go run ./build/feed pubkey KEYFILE      the public key to build in (make UPDATE_KEY=…)
//	go run ./build/feed sign -key KEYFILE -version V -base-url URL [-notes FILE] -out DIR PACKAGE...
//
// make dist runs sign when SIGNING_KEY names a key file. A KEYFILE holds the
// base64 32-byte ed25519 seed.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/update"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: feed keygen KEYFILE | pubkey KEYFILE | sign -key KEYFILE -version V -base-url URL [-notes FILE] -out DIR PACKAGE...")
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; {
	case cmd == "keygen" && len(args) == 1:
		err = keygen(args[0], os.Stdout)
	case cmd == "pubkey" && len(args) == 1:
		var key ed25519.PrivateKey
		if key, err = readKey(args[0]); err == nil {
			fmt.Println(base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)))
		}
	case cmd == "sign":
		err = signCommand(args)
	default:
		err = fmt.Errorf("unknown command %q", strings.Join(os.Args[1:], " "))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "feed:", err)
		os.Exit(1)
	}
}

func keygen(path string, out io.Writer) error {
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("%s exists: keep it (it signs every release) or remove it yourself", path)
	}
	seed := make([]byte, ed25519.SeedSize)
	rand.Read(seed)
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(seed)+"\n"), 0o600); err != nil {
		return err
	}
	pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
	_, err := fmt.Fprintln(out, base64.StdEncoding.EncodeToString(pub))
	return err
}

func readKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s is not a signing key (base64 of a 32-byte ed25519 seed; make one with keygen)", path)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

func signCommand(args []string) error {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	keyFile := fs.String("key", "", "signing key file")
	version := fs.String("version", "", "the release's version")
	baseURL := fs.String("base-url", "", "where the packages will be downloaded from (URL of their folder)")
	notesFile := fs.String("notes", "", "file with the release notes")
	out := fs.String("out", "build/dist", "folder for feed.json and feed.json.sig")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keyFile == "" || *version == "" || *baseURL == "" || fs.NArg() == 0 {
		return fmt.Errorf("sign needs -key, -version, -base-url and at least one package")
	}
	key, err := readKey(*keyFile)
	if err != nil {
		return err
	}
	notes := ""
	if *notesFile != "" {
		b, err := os.ReadFile(*notesFile)
		if err != nil {
			return err
		}
		notes = strings.TrimSpace(string(b))
	}
	feed, err := Feed(*version, strings.TrimSuffix(*baseURL, "/"), notes, fs.Args())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "feed.json"), feed, 0o644); err != nil {
		return err
	}
	// Each package's own signature, uploaded beside it: the app checks it
	// and the feed's sha256 before it offers to open a downloaded package.
	for _, p := range fs.Args() {
		if err := SignPackageFile(key, p, filepath.Join(*out, filepath.Base(p)+".sig")); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(*out, "feed.json.sig"), update.Sign(key, feed), 0o644)
}

// SignPackageFile writes to out the signature of the package at p (of its
// SHA-256 digest, update.SignPackage).
func SignPackageFile(key ed25519.PrivateKey, p, out string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	return os.WriteFile(out, update.SignPackage(key, h.Sum(nil)), 0o644)
}

// platforms name a package's platform from the names build/dist.sh and
// build/dist-windows.sh give them.
var platforms = []struct {
	re       *regexp.Regexp
	platform string
}{
	{regexp.MustCompile(`^rerun-setup-.*-(amd64|arm64)\.exe$`), "windows-"},
	{regexp.MustCompile(`^rerun_.*_(amd64|arm64)\.deb$`), "linux-"},
}

// Feed is the feed JSON for packages (the first is also the default
// download), checked by update.Parse before it is signed.
func Feed(version, baseURL, notes string, packages []string) ([]byte, error) {
	r := update.Release{Version: version, Notes: notes, Downloads: map[string]update.Download{}}
	for i, p := range packages {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		d := update.Download{URL: baseURL + "/" + filepath.Base(p), SHA256: hex.EncodeToString(sum[:])}
		if i == 0 {
			r.URL, r.SHA256 = d.URL, d.SHA256
		}
		for _, pl := range platforms {
			if m := pl.re.FindStringSubmatch(filepath.Base(p)); m != nil {
				r.Downloads[pl.platform+m[1]] = d
			}
		}
	}
	feed, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := update.Parse(feed); err != nil {
		return nil, fmt.Errorf("the feed would not be accepted: %w", err)
	}
	return append(feed, '\n'), nil
}
