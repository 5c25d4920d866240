// Package mailpittest starts a real SMTP server for tests: Mailpit
// (github.com/axllent/mailpit), built from the module in
// internal/tools/mailpit with `go build` (from the module cache or the Go
// module proxy, like any dependency; no binary is downloaded), and read
// back through its HTTP API.
package mailpittest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// Version is the Mailpit the tests run (internal/tools/mailpit/go.mod).
const Version = "v1.33.1"

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Binary builds Mailpit once per test process and returns its path. The
// binary is kept in the user's cache folder, so later runs only check it.
// RERUN_MAILPIT names one already built (make test builds it once, before
// the test packages that need it start at the same time).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("RERUN_MAILPIT"); p != "" {
			binary = p
			if _, err := os.Stat(p); err != nil {
				buildErr = fmt.Errorf("RERUN_MAILPIT: %w", err)
			}
			return
		}
		_, file, _, _ := runtime.Caller(0)
		modDir := filepath.Join(filepath.Dir(file), "..", "tools", "mailpit")
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		binary = filepath.Join(cache, "rerun-desktop-test", "mailpit-"+Version)
		if runtime.GOOS == "windows" {
			binary += ".exe"
		}
		if _, err := os.Stat(binary); err == nil {
			return
		}
		tmp := binary + ".part" + strconv.Itoa(os.Getpid())
		cmd := exec.Command("go", "build", "-o", tmp, "github.com/axllent/mailpit")
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build mailpit in %s: %v\n%s", modDir, err, out)
			return
		}
		buildErr = os.Rename(tmp, binary)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// Server is a running Mailpit.
type Server struct {
	Host    string // 127.0.0.1
	Port    int    // SMTP
	API     string // http://127.0.0.1:port
	Cert    *x509.Certificate
	RootCAs *x509.CertPool // trusts Cert: the TLS config of a client
}

// Options choose how the server behaves.
type Options struct {
	// TLS: "" none, "starttls" offers (and requires) STARTTLS, "tls" is
	// implicit TLS. The certificate is made for 127.0.0.1 and localhost.
	TLS string
	// Users, when set, are the only accepted logins (user → password);
	// otherwise any login, or none, is accepted.
	Users map[string]string
	// Args are more Mailpit flags (e.g. --smtp-allowed-recipients).
	Args []string
}

// Start starts Mailpit on free ports and stops it when the test ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	s := &Server{Host: "127.0.0.1", Port: FreePort(t)}
	httpPort := FreePort(t)
	s.API = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	args := []string{
		"--smtp", fmt.Sprintf("127.0.0.1:%d", s.Port), "--listen", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--database", filepath.Join(dir, "mailpit.db"), "--smtp-disable-rdns", "--disable-version-check", "--quiet",
	}
	if o.TLS != "" {
		certFile, keyFile := s.makeCert(t, dir)
		args = append(args, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile)
		if o.TLS == "tls" {
			args = append(args, "--smtp-require-tls")
		} else {
			args = append(args, "--smtp-require-starttls")
		}
	} else {
		args = append(args, "--smtp-auth-allow-insecure")
	}
	if len(o.Users) > 0 {
		f := filepath.Join(dir, "users")
		var b []byte
		for u, p := range o.Users {
			b = append(b, u+":"+p+"\n"...)
		}
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--smtp-auth-file", f)
	} else {
		args = append(args, "--smtp-auth-accept-any")
	}
	args = append(args, o.Args...)
	cmd := exec.Command(bin, args...)
	log, _ := os.Create(filepath.Join(dir, "mailpit.log"))
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		log.Close()
	})
	waittest.Until(t, "mailpit answers on its API and SMTP ports", func() bool {
		select {
		case err := <-exited:
			out, _ := os.ReadFile(filepath.Join(dir, "mailpit.log"))
			t.Fatalf("mailpit exited: %v\n%s", err, out)
		default:
		}
		res, err := http.Get(s.API + "/api/v1/info")
		if err != nil {
			return false
		}
		res.Body.Close()
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port))
		if err != nil {
			return false
		}
		c.Close()
		return res.StatusCode == 200
	})
	return s
}

// FreePort is a port nothing listens on (for now).
func FreePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// makeCert writes a self-signed certificate for 127.0.0.1 and localhost.
func (s *Server) makeCert(t testing.TB, dir string) (certFile, keyFile string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailpit test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	s.Cert, _ = x509.ParseCertificate(der)
	s.RootCAs = x509.NewCertPool()
	s.RootCAs.AddCert(s.Cert)
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

// TLSConfig trusts the server's certificate.
func (s *Server) TLSConfig() *tls.Config { return &tls.Config{RootCAs: s.RootCAs} }

// Summary is a message in the list.
type Summary struct {
	ID        string `json:"ID"`
	MessageID string `json:"MessageID"`
	Subject   string `json:"Subject"`
}

// Message is one message, read whole.
type Message struct {
	ID        string `json:"ID"`
	MessageID string `json:"MessageID"`
	Subject   string `json:"Subject"`
	Text      string `json:"Text"`
	From      struct {
		Address string `json:"Address"`
	} `json:"From"`
	To []struct {
		Address string `json:"Address"`
	} `json:"To"`
}

func (s *Server) get(t testing.TB, path string, into any) {
	t.Helper()
	res, err := http.Get(s.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("mailpit GET %s: %s", path, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(into); err != nil {
		t.Fatalf("mailpit GET %s: %v", path, err)
	}
}

// Messages lists what arrived, newest first.
func (s *Server) Messages(t testing.TB) []Summary {
	t.Helper()
	var out struct {
		Messages []Summary `json:"messages"`
	}
	s.get(t, "/api/v1/messages?limit=500", &out)
	return out.Messages
}

// Message reads one message.
func (s *Server) Message(t testing.TB, id string) Message {
	t.Helper()
	var m Message
	s.get(t, "/api/v1/message/"+id, &m)
	return m
}

// Headers reads one message's headers.
func (s *Server) Headers(t testing.TB, id string) map[string][]string {
	t.Helper()
	h := map[string][]string{}
	s.get(t, "/api/v1/message/"+id+"/headers", &h)
	return h
}
