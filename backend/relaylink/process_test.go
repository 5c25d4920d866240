package relaylink_test

// Process tests of the relay link: the relay (rerun-relay) and the desktop
// (`rerun serve`) are real processes built here, on loopback, killed with
// SIGKILL at the moments that matter. Runs are counted in the workspace's
// database file.

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

var (
	procBuild    sync.Once
	procBins     string
	procBuildErr error
)

// binaries builds rerun and rerun-relay once per test run.
func binaries(t *testing.T) (rerun, relay string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	procBuild.Do(func() {
		procBins, procBuildErr = os.MkdirTemp("", "rerun-relay-proc")
		if procBuildErr != nil {
			return
		}
		for name, pkg := range map[string]string{"rerun": "github.com/rerun-build/rerun-desktop", "rerun-relay": "github.com/rerun-build/rerun-desktop/sync/cmd/rerun-relay"} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(procBins, name), pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				procBuildErr = fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
				return
			}
		}
	})
	if procBuildErr != nil {
		t.Fatal(procBuildErr)
	}
	return filepath.Join(procBins, "rerun"), filepath.Join(procBins, "rerun-relay")
}

// child is a process whose stdout is searched as it comes.
type child struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func startChild(t *testing.T, name string, cmd *exec.Cmd) *child {
	t.Helper()
	c := &child{t: t, name: name, cmd: cmd, done: make(chan struct{})}
	logf, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.mu.Lock()
			c.out.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
		}
		cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		c.kill()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log (tail):\n%s", name, b[max(0, len(b)-3000):])
		}
	})
	return c
}

// find waits for re in the child's stdout and returns its first group.
func (c *child) find(re *regexp.Regexp) string {
	c.t.Helper()
	deadline := time.Now().Add(waittest.Patience)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		m := re.FindStringSubmatch(c.out.String())
		c.mu.Unlock()
		if m != nil {
			return m[1]
		}
		select {
		case <-c.done:
			c.t.Fatalf("%s exited before printing %s", c.name, re)
		case <-time.After(20 * time.Millisecond):
		}
	}
	c.t.Fatalf("%s did not print %s in %s", c.name, re, waittest.Patience)
	return ""
}

func (c *child) kill() {
	c.cmd.Process.Kill()
	<-c.done
}

// proxy forwards TCP to target; each direction can be cut (bytes read and
// dropped) to hold back acks or deliveries.
type proxy struct {
	ln               net.Listener
	target           string
	dropUp, dropDown atomic.Bool // up: desktop → relay
	mu               sync.Mutex
	conns            []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go p.pipe(out, in, &p.dropUp)
			go p.pipe(in, out, &p.dropDown)
		}
	}()
	t.Cleanup(func() { ln.Close(); p.cut() })
	return p
}

func (p *proxy) pipe(dst, src net.Conn, drop *atomic.Bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !drop.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// cut closes every connection.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

// procRelay runs rerun-relay on db at addr ("" picks a port).
func procRelay(t *testing.T, bin, db, addr string) (*child, string) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	c := startChild(t, "relay", exec.Command(bin, "-db", db, "-listen", addr))
	url := c.find(regexp.MustCompile(`rerun-relay listening on (http://\S+)`))
	return c, url
}

// desktop is a `rerun serve` process on a data directory.
type desktop struct {
	*child
	url, token, dir string
}

func procDesktop(t *testing.T, bin, dir string) *desktop {
	cmd := exec.Command(bin, "serve", "--port", "0", "--data-dir", dir)
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "RERUN_KEYCHAIN=off"}
	c := startChild(t, "desktop", cmd)
	m := c.find(regexp.MustCompile(`(http://127\.0\.0\.1:\d+/\?token=\S+)`))
	url, token, _ := strings.Cut(m, "/?token=")
	return &desktop{child: c, url: url, token: token, dir: dir}
}

// api calls the desktop's HTTP API and decodes the answer into out.
func (d *desktop) api(method, path string, in, out any) int {
	d.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.url+path, body)
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer res.Body.Close()
	if out != nil {
		json.NewDecoder(res.Body).Decode(out)
	}
	return res.StatusCode
}

// runCount counts the runs of a session in the workspace's database file.
func runCount(t *testing.T, dbPath, session string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM runs WHERE session_id = ?`, session).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitCount waits until the session has want runs, then a moment more to
// see that no other comes.
func waitCount(t *testing.T, dbPath, session string, want int, what string) {
	t.Helper()
	waittest.Progress(t, what, waittest.Stall, func() (int, bool) {
		n := runCount(t, dbPath, session)
		return n, n >= want
	})
	time.Sleep(500 * time.Millisecond)
	if n := runCount(t, dbPath, session); n != want {
		t.Fatalf("%s: %d runs, want exactly %d", what, n, want)
	}
}

func post(t *testing.T, url, body string) int {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// queueDepth reads the relay's rerun_relay_queue_depth metric.
func queueDepth(t *testing.T, relayURL string) string {
	res, err := http.Get(relayURL + "/metrics")
	if err != nil {
		return "unreachable"
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^rerun_relay_queue_depth (\S+)`).FindSubmatch(b)
	if m == nil {
		return "absent"
	}
	return string(m[1])
}

// newRelayWorkspace links a workspace on the relay database db, as its
// operator does, and returns its id and secret.
func newRelayWorkspace(t *testing.T, relayBin, db string) (id, secret string) {
	t.Helper()
	out, err := exec.Command(relayBin, "-db", db, "-new-workspace").Output()
	if err != nil {
		t.Fatalf("rerun-relay -new-workspace: %v", err)
	}
	if _, err := fmt.Sscanf(string(out), "workspace %s\nsecret %s\n", &id, &secret); err != nil {
		t.Fatalf("rerun-relay -new-workspace printed %q: %v", out, err)
	}
	return id, secret
}

func TestRelayProcesses(t *testing.T) {
	rerunBin, relayBin := binaries(t)
	dir := t.TempDir()
	relayDB := filepath.Join(dir, "relay.db")
	relayWS, secret := newRelayWorkspace(t, relayBin, relayDB)
	relayProc, relayURL := procRelay(t, relayBin, relayDB, "")
	// The desktop reaches the relay through a proxy that can hold back
	// either direction; webhook senders call the relay directly.
	px := startProxy(t, strings.TrimPrefix(relayURL, "http://"))
	data := filepath.Join(dir, "desktop")
	d := procDesktop(t, rerunBin, data)

	var list struct{ Current string }
	d.api("GET", "/api/workspaces", nil, &list)
	ws := "/api/workspaces/" + list.Current
	dbPath := filepath.Join(data, "workspaces", list.Current, "workspace.db")
	var board struct{ Boxes []struct{ ID string } }
	d.api("GET", ws+"/board", nil, &board)
	var agent struct{ ID string }
	if got := d.api("POST", ws+"/agents", map[string]string{"name": "Ada", "box_id": board.Boxes[0].ID}, &agent); got != 201 {
		t.Fatalf("create agent: %d", got)
	}
	var st map[string]any
	if got := d.api("POST", ws+"/relay", map[string]string{"relay_url": px.URL(), "workspace_id": relayWS, "secret": secret}, &st); got != 201 {
		t.Fatalf("link: %d %v", got, st)
	}
	var created struct {
		PublicURL string `json:"public_url"`
		Trigger   struct {
			SessionID string `json:"session_id"`
		}
	}
	// The hook base arrives with the relay's hello.
	for deadline := time.Now().Add(waittest.Patience); st["connected"] != true || st["hook_base"] == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("relay status %v: not connected after %s", st, waittest.Patience)
		}
		d.api("GET", ws+"/relay", nil, &st)
	}
	if got := d.api("POST", ws+"/agents/"+agent.ID+"/triggers", map[string]string{"name": "Orders", "instruction": "File it."}, &created); got != 201 {
		t.Fatalf("create trigger: %d", got)
	}
	if !strings.HasPrefix(created.PublicURL, relayURL+"/h/rrh_") {
		t.Fatalf("public URL %q, want the relay's /h/", created.PublicURL)
	}
	session := created.Trigger.SessionID

	// Live: the relay has the hash once the desktop registered it.
	deadline := time.Now().Add(waittest.Patience)
	for post(t, created.PublicURL, `{"n":0}`) != 202 {
		if time.Now().After(deadline) {
			t.Fatal("the public URL never answered 202")
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitCount(t, dbPath, session, 1, "live webhook")

	// Desktop stopped
	{
		d.kill()
		if got := post(t, created.PublicURL, `{"n":1}`); got != 202 {
			t.Fatalf("webhook while the desktop is off: %d, want 202", got)
		}
		time.Sleep(300 * time.Millisecond)
		if n := runCount(t, dbPath, session); n != 1 {
			t.Fatalf("%d runs before the desktop is back, want 1", n)
		}
		d = procDesktop(t, rerunBin, data)
		waitCount(t, dbPath, session, 2, "after the restart")
	}

	// Desktop killed before its ack
	{
		px.dropUp.Store(true) // the acks never reach the relay
		if got := post(t, created.PublicURL, `{"n":2}`); got != 202 {
			t.Fatalf("webhook: %d", got)
		}
		waitCount(t, dbPath, session, 3, "delivered, not acked")
		d.kill()
		px.cut()
		px.dropUp.Store(false)
		if q := queueDepth(t, relayURL); q != "1" {
			t.Fatalf("relay queue depth %s after the kill, want 1 (the delivery not acked)", q)
		}
		d = procDesktop(t, rerunBin, data)
		for deadline := time.Now().Add(waittest.Patience); queueDepth(t, relayURL) != "0"; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("relay queue depth %s after the restart, want 0 (redelivered and acked)", queueDepth(t, relayURL))
			}
		}
		waitCount(t, dbPath, session, 3, "redelivered")
	}

	// Relay killed before delivering
	{
		px.dropDown.Store(true) // the delivery never reaches the desktop
		if got := post(t, created.PublicURL, `{"n":3}`); got != 202 {
			t.Fatalf("webhook: %d", got)
		}
		time.Sleep(200 * time.Millisecond)
		relayProc.kill()
		px.cut()
		px.dropDown.Store(false)
		if n := runCount(t, dbPath, session); n != 3 {
			t.Fatalf("%d runs while the relay is down, want 3", n)
		}
		relayProc, _ = procRelay(t, relayBin, relayDB, strings.TrimPrefix(relayURL, "http://"))
		waitCount(t, dbPath, session, 4, "after the relay's restart")
	}
}
