package main_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestFlags runs the built binary with its flags and environment.
func TestFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "rerun-relay")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("tls", func(t *testing.T) {
		certFile, keyFile, pool := selfSigned(t)
		line := run(t, exec.Command(bin, "-listen", "127.0.0.1:0", "-db", filepath.Join(t.TempDir(), "r.db"),
			"-tls-cert", certFile, "-tls-key", keyFile), "https://")
		url, _, _ := strings.Cut(line, " ")
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		res, err := hc.Get(strings.Replace(url, "127.0.0.1", "localhost", 1) + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || string(b) != "ok\n" {
			t.Errorf("healthz over TLS: got %d %q, want 200 ok", res.StatusCode, b)
		}
	})

	t.Run("environment", func(t *testing.T) {
		db := filepath.Join(t.TempDir(), "env.db")
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "RERUN_RELAY_LISTEN=127.0.0.1:0", "RERUN_RELAY_DB="+db,
			"RERUN_RELAY_PUBLIC_URL=https://relay.example.com")
		line := run(t, cmd, "http://")
		if !strings.Contains(line, "(public https://relay.example.com)") {
			t.Errorf("got %q, want the public URL from the environment", line)
		}
		if _, err := os.Stat(db); err != nil {
			t.Errorf("the store is not at RERUN_RELAY_DB: %v", err)
		}
	})

	t.Run("certificate without key", func(t *testing.T) {
		out, err := exec.Command(bin, "-listen", "127.0.0.1:0", "-tls-cert", "c.pem").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "-tls-cert and -tls-key go together") {
			t.Errorf("got %v %q, want a refusal naming both flags", err, out)
		}
	})
}

// run starts cmd, waits for its "listening on" line and returns what
// follows it (the URL first); the process is killed when the test ends.
func run(t *testing.T, cmd *exec.Cmd, scheme string) string {
	t.Helper()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case l, ok := <-lines:
		rest, found := strings.CutPrefix(l, "rerun-relay listening on ")
		if !ok || !found || !strings.HasPrefix(rest, scheme) {
			t.Fatalf("first line %q, want rerun-relay listening on %s…", l, scheme)
		}
		return rest
	case <-time.After(waittest.Patience):
		t.Fatal("the relay did not start")
	}
	return ""
}

// selfSigned writes a certificate for localhost and its key, and returns
// their files and a pool that trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kb, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile, pool
}
