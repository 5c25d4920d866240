package client_test

// End-to-end tests: the relay (the rerun-relay binary, built here) and the
// desktop (this test binary run as TestChildDesktop) are real processes on
// loopback, killed with SIGKILL at the moments that matter.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

var (
	buildOnce sync.Once
	binDir    string
	relayBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// relayBinary builds cmd/rerun-relay once per test run.
func relayBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs processes")
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "rerun-relay-test")
		if buildErr != nil {
			return
		}
		relayBin = filepath.Join(binDir, "rerun-relay")
		out, err := exec.Command("go", "build", "-o", relayBin, "../cmd/rerun-relay").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return relayBin
}

// proc is a child process whose stdout lines are read as they come.
type proc struct {
	t     *testing.T
	name  string
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
}

func start(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, name: name, cmd: cmd, lines: make(chan string, 100), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody waits for it
			}
		}
		cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("%s log:\n%s", name, b[max(0, len(b)-4000):])
		}
	})
	return p
}

// waitFor returns the rest of the first line starting with prefix; the
// process has waittest.Patience to print it.
func (p *proc) waitFor(prefix string) string {
	p.t.Helper()
	timeout := time.After(waittest.Patience)
	for {
		select {
		case l := <-p.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return strings.TrimSpace(rest)
			}
		case <-p.done:
			p.t.Fatalf("%s exited before printing %q", p.name, prefix)
		case <-timeout:
			p.t.Fatalf("%s did not print %q in %s", p.name, prefix, waittest.Patience)
		}
	}
}

// kill ends the process with SIGKILL: no cleanup of any kind.
func (p *proc) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

// relayProc is a rerun-relay process on a SQLite file; a restart keeps
// its address.
type relayProc struct {
	*proc
	db, addr, URL string
}

func startRelay(t *testing.T, db, addr string) *relayProc {
	t.Helper()
	p := start(t, "relay", exec.Command(relayBinary(t), "-db", db, "-listen", addr, "-v"))
	url, _, _ := strings.Cut(p.waitFor("rerun-relay listening on"), " ")
	return &relayProc{proc: p, db: db, addr: strings.TrimPrefix(url, "http://"), URL: url}
}

func (r *relayProc) restart(t *testing.T) *relayProc {
	t.Helper()
	return startRelay(t, r.db, r.addr)
}

// newWorkspace links a workspace with the operator's flag.
func newWorkspace(t *testing.T, db string) protocol.Link {
	t.Helper()
	out, err := exec.Command(relayBinary(t), "-db", db, "-new-workspace").Output()
	if err != nil {
		t.Fatalf("rerun-relay -new-workspace: %v", err)
	}
	var l protocol.Link
	if _, err := fmt.Sscanf(string(out), "workspace %s\nsecret %s\n", &l.WorkspaceID, &l.Secret); err != nil {
		t.Fatalf("rerun-relay -new-workspace printed %q: %v", out, err)
	}
	return l
}

// startDesktopProc runs a desktop process on dir; stopAt names the hook at
// which it stops, prints "STOPPED <hook> <id>", and waits to be killed.
func startDesktopProc(t *testing.T, relayURL string, l protocol.Link, dir, stopAt string, tokens ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildDesktop$")
	cmd.Env = append(os.Environ(), "RERUN_SYNC_CHILD=1", "RELAY_URL="+relayURL, "WORKSPACE="+l.WorkspaceID,
		"SECRET="+l.Secret, "DIR="+dir, "STOP_AT="+stopAt, "TOKENS="+strings.Join(hashes(tokens), ","))
	return start(t, "desktop", cmd)
}

// TestChildDesktop is the desktop process of the tests above: a client on
// the stand-in intake, with hooks that report and stop.
func TestChildDesktop(t *testing.T) {
	if os.Getenv("RERUN_SYNC_CHILD") == "" {
		t.Skip("the desktop process that the end-to-end tests start")
	}
	dir := os.Getenv("DIR")
	in := openIntake(t, dir)
	c, err := client.New(client.Config{RelayURL: os.Getenv("RELAY_URL"), WorkspaceID: os.Getenv("WORKSPACE"),
		Secret: os.Getenv("SECRET"), Dir: dir, Deliver: in.deliver(), MinBackoff: 20 * time.Millisecond, MaxBackoff: 500 * time.Millisecond,
		TokenHashes: func(context.Context) ([]string, error) { return strings.Split(os.Getenv("TOKENS"), ","), nil }})
	if err != nil {
		t.Fatal(err)
	}
	stopAt := os.Getenv("STOP_AT")
	stop := func(hook, id string) {
		if hook == stopAt {
			fmt.Println("STOPPED", hook, id)
			time.Sleep(time.Hour) // until killed
		}
	}
	client.SetHooks(c, client.Hooks{
		Received:  func(id string) { stop("received", id) },
		Delivered: func(id string) { stop("delivered", id) },
		Recorded:  func(ids []string) { stop("recorded", ids[0]) },
		Tokens:    func(n int) { fmt.Println("TOKENS", n) },
	})
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer cancel()
	c.Serve(ctx)
}

// settled waits until the relay holds no delivery.
func settled(t *testing.T, relayURL string) {
	t.Helper()
	waittest.Progress(t, "the relay's queue drains", 30*time.Second, func() (int, bool) {
		depth := metric(t, relayURL, "rerun_relay_queue_depth")
		return depth, depth == 0
	})
}

func want(t *testing.T, got, want counts) {
	t.Helper()
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// linked starts a relay with a linked workspace and a desktop process that
// has registered the token "tok" with it; stopAt is the desktop's.
func linked(t *testing.T, stopAt string) (dir string, l protocol.Link, r *relayProc, desk *proc) {
	t.Helper()
	dir = t.TempDir()
	db := filepath.Join(dir, "relay.db")
	l = newWorkspace(t, db)
	r = startRelay(t, db, "127.0.0.1:0")
	desk = startDesktopProc(t, r.URL, l, dir, stopAt, "tok")
	desk.waitFor("TOKENS 1")
	return dir, l, r, desk
}

func accept(t *testing.T, r *relayProc, body string) {
	t.Helper()
	if got := post(t, r.URL+"/h/tok", body, nil); got != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got)
	}
}

// deliveredOnce waits for the relay to be empty and checks that the
// desktop in dir queued one run, from calls Deliver calls.
func deliveredOnce(t *testing.T, r *relayProc, dir string, calls int) *intake {
	t.Helper()
	in := openIntake(t, dir)
	waittest.Until(t, "not delivered", func() bool { return in.counts(t).Runs == 1 })
	settled(t, r.URL)
	want(t, in.counts(t), counts{Runs: 1, Calls: calls, CalledDeliveries: 1})
	return in
}

// TestOfflineDesktop: a webhook while the desktop is off is delivered when
// it comes back, once; an unknown token is 404 and stores nothing.
func TestOfflineDesktop(t *testing.T) {
	dir, l, r, desk := linked(t, "")
	desk.kill()
	accept(t, r, `{"event":"offline"}`)
	if got := post(t, r.URL+"/h/nope", `{}`, nil); got != http.StatusNotFound {
		t.Fatalf("unknown token: got %d, want 404", got)
	}
	if n := metric(t, r.URL, "rerun_relay_queue_depth"); n != 1 {
		t.Fatalf("queue depth %d, want 1 (the 404 stores nothing)", n)
	}
	want(t, openIntake(t, dir).counts(t), counts{})

	startDesktopProc(t, r.URL, l, dir, "", "tok")
	deliveredOnce(t, r, dir, 1)
}

// TestRelayRestart: the relay is killed after its 202 and before it could
// deliver; the delivery is on its disk and arrives after the restart (the
// desktop, started while the relay was down, reconnects by itself).
func TestRelayRestart(t *testing.T) {
	dir, l, r, desk := linked(t, "")
	desk.kill()
	accept(t, r, `{"event":"before the crash"}`)
	r.kill()

	startDesktopProc(t, r.URL, l, dir, "", "tok") // finds no relay, retries
	time.Sleep(300 * time.Millisecond)
	deliveredOnce(t, r.restart(t), dir, 1)
}

// TestDesktopKilledBeforeAck: the desktop dies after receiving a delivery
// and before acking it, at each point where it can; the relay sends it
// again and one run results. Killed after Deliver and before the id was
// recorded, Deliver runs twice and the intake's idempotency key (the
// delivery id) keeps one run; killed after the id was recorded, the
// seen-set answers and Deliver runs once.
func TestDesktopKilledBeforeAck(t *testing.T) {
	for _, tc := range []struct {
		stopAt string
		calls  int
	}{
		{"received", 1},
		{"delivered", 2},
		{"recorded", 1},
	} {
		t.Run(tc.stopAt, func(t *testing.T) {
			dir, l, r, desk := linked(t, tc.stopAt)
			accept(t, r, `{}`)
			id := desk.waitFor("STOPPED " + tc.stopAt)
			desk.kill()

			startDesktopProc(t, r.URL, l, dir, "", "tok")
			in := deliveredOnce(t, r, dir, tc.calls)
			var delivery string
			in.db.QueryRow(`SELECT delivery FROM runs`).Scan(&delivery)
			if delivery != id {
				t.Errorf("the run is for %s, want %s", delivery, id)
			}
		})
	}
}

// TestThousandWithDisconnects: 1,000 webhooks while a proxy between the
// desktop and the relay cuts the connection every few dozen milliseconds,
// and the relay is killed and restarted once; 1,000 runs, each from one
// Deliver call.
func TestThousandWithDisconnects(t *testing.T) {
	const n = 1000
	dir := t.TempDir()
	db := filepath.Join(dir, "relay.db")
	l := newWorkspace(t, db)
	r := startRelay(t, db, "127.0.0.1:0")
	px := startProxy(t, r.addr)
	startDesktopProc(t, "http://"+px.addr(), l, dir, "", "tok").waitFor("TOKENS 1")

	chaos, stopChaos := context.WithCancel(context.Background())
	defer stopChaos()
	go func() {
		for chaos.Err() == nil {
			time.Sleep(time.Duration(20+rand.IntN(130)) * time.Millisecond)
			px.cut()
		}
	}()

	var wg sync.WaitGroup
	jobs := make(chan int)
	var mu sync.Mutex
	refused := 0
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				if got := post(t, r.URL+"/h/tok", fmt.Sprintf(`{"n":%d}`, i), nil); got != http.StatusAccepted {
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if refused > 0 {
		t.Fatalf("%d webhooks not accepted", refused)
	}
	in := openIntake(t, dir)
	// Kill the relay with part of the queue undelivered.
	r.kill()
	mid := in.counts(t).Runs
	r = r.restart(t)

	waittest.Progress(t, "deliveries", 30*time.Second, func() (int, bool) { runs := in.counts(t).Runs; return runs, runs >= n })
	stopChaos()
	settled(t, r.URL)
	want(t, in.counts(t), counts{Runs: n, Calls: n, CalledDeliveries: n})
	t.Logf("%d connection cuts; %d of %d delivered when the relay was killed", px.cuts(), mid, n)
}

// proxy forwards TCP connections to a target and cuts them all on demand:
// a network that changes under the desktop.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	n      int
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.pipe(c)
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) pipe(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
	c.Close()
	u.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	p.n++
}

func (p *proxy) cuts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}
