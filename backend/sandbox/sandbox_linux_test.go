//go:build linux

package sandbox_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Main()
	os.Exit(m.Run())
}

// dataDir lays out a data directory as the app's: a secret.key, a
// workspace with its databases, shared folder, this agent, another agent
// and a browser profile.
type dataDir struct {
	root, ws, own, other, shared string
}

func layout(t *testing.T) dataDir {
	t.Helper()
	if ok, why := sandbox.Available(); !ok {
		t.Skip("no sandbox here: " + why)
	}
	root := t.TempDir()
	ws := filepath.Join(root, "workspaces", "w1")
	d := dataDir{root: root, ws: ws, own: filepath.Join(ws, "agents", "a1", "files"),
		other: filepath.Join(ws, "agents", "a2", "files"), shared: filepath.Join(ws, "shared")}
	for _, dir := range []string{d.own, d.other, d.shared, filepath.Join(ws, "agents", "a1", "browser", "Default")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(root, "secret.key"):                                  "SEALING-KEY-CANARY",
		filepath.Join(ws, "workspace.db"):                                  "DB-CANARY",
		filepath.Join(ws, "shared.db"):                                     "DB-CANARY",
		filepath.Join(ws, "agents", "a1", "agent.db"):                      "DB-CANARY",
		filepath.Join(ws, "agents", "a1", "browser", "Default", "Cookies"): "COOKIE-CANARY",
		filepath.Join(d.other, "notes.txt"):                                "OTHER-AGENT-CANARY",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func (d dataDir) policy(t *testing.T, network bool) sandbox.Policy {
	tmp := t.TempDir()
	return sandbox.Agent(d.root, d.own, d.shared, tmp, nil, network)
}

// sh runs script confined to p in the agent's folder, as run_command does.
func sh(t *testing.T, d dataDir, p sandbox.Policy, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = d.own
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.own, "TMPDIR=" + p.Tmp, "SHARED_DIR=" + d.shared, "LANG=C.UTF-8"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sandbox.Start(cmd, p); err != nil {
		t.Fatalf("start %q: %v", script, err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !asExit(err, &exit) {
		t.Fatalf("wait %q: %v", script, err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func asExit(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*target = e
	return ok
}

func TestSandboxEscapesFail(t *testing.T) {
	d := layout(t)
	p := d.policy(t, true)
	app := os.Getpid()
	if err := os.Link(filepath.Join(d.root, "secret.key"), filepath.Join(d.root, "key-link")); err != nil {
		t.Fatal(err)
	}
	escapes := []struct {
		name, script, want string
	}{
		{"app environ via $PPID", `tr '\0' '\n' < /proc/$PPID/environ`, "Permission denied"},
		{"app environ by pid", fmt.Sprintf("cat /proc/%d/environ", app), "Permission denied"},
		{"app memory", fmt.Sprintf("head -c 16 /proc/%d/mem", app), "Permission denied"},
		{"own environ", "cat /proc/self/environ", "Permission denied"},
		{"secret.key relative", "cat ../../../../../secret.key", "Permission denied"},
		{"secret.key absolute", "cat " + filepath.Join(d.root, "secret.key"), "Permission denied"},
		{"other agent relative", "cat ../../a2/files/notes.txt", "Permission denied"},
		{"other agent listing", "ls ../../a2/files", "Permission denied"},
		{"workspace database", "cat " + filepath.Join(d.ws, "workspace.db"), "Permission denied"},
		{"own agent database", "cat ../agent.db", "Permission denied"},
		{"shared database", "cat " + filepath.Join(d.ws, "shared.db"), "Permission denied"},
		{"sqlite write into a db", "echo x >> " + filepath.Join(d.ws, "shared.db"), "Permission denied"},
		{"browser profile", "cat ../browser/Default/Cookies", "Permission denied"},
		{"symlink out", "ln -s ../../../../../secret.key k && cat k", "Permission denied"},
		{"hard link out", "ln " + filepath.Join(d.root, "secret.key") + " k2", "Invalid cross-device link"},
		{"existing hard link elsewhere", "cat " + filepath.Join(d.root, "key-link"), "Permission denied"},
		{"write outside", "echo x > " + filepath.Join(d.root, "planted"), "Permission denied"},
		{"write in workspace", "echo x > ../../../planted", "Permission denied"},
		{"write in /tmp", "echo x > /tmp/rerun-sandbox-planted-$$", "Permission denied"},
		{"home of the user", "ls /root", "Permission denied"},
		{"signal the app", fmt.Sprintf("kill -0 %d", app), "Operation not permitted"},
	}
	// Unconfined, the same paths reach the secrets: the test aims right.
	for _, script := range []string{"cat ../../../../../secret.key", "cat ../../a2/files/notes.txt", "cat ../browser/Default/Cookies"} {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Dir = d.own
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "CANARY") {
			t.Fatalf("unconfined %s: %v %q; the layout is wrong", script, err, out)
		}
	}
	for _, e := range escapes {
		t.Run(e.name, func(t *testing.T) {
			out, code := sh(t, d, p, e.script)
			t.Logf("%s → exit %d: %s", e.script, code, strings.TrimSpace(out))
			if code == 0 {
				t.Fatalf("%s: exit 0, the escape worked; output %q", e.script, out)
			}
			if !strings.Contains(out, e.want) {
				t.Fatalf("%s: exit %d with %q, want an error saying %q", e.script, code, out, e.want)
			}
			for _, canary := range []string{"SEALING-KEY-CANARY", "DB-CANARY", "COOKIE-CANARY", "OTHER-AGENT-CANARY", "PATH="} {
				if strings.Contains(out, canary) {
					t.Fatalf("%s leaked %s: %q", e.script, canary, out)
				}
			}
		})
	}
	for _, f := range []string{filepath.Join(d.root, "planted"), filepath.Join(d.ws, "planted")} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

func TestSandboxNetworkOff(t *testing.T) {
	d := layout(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "REACHED") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	off := d.policy(t, false)
	for name, script := range map[string]string{
		"curl":   "curl -sS --max-time 20 " + srv.URL,
		"python": "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + port + "), 20)'",
		"listen": "python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); s.listen()'",
	} {
		t.Run(name, func(t *testing.T) {
			out, code := sh(t, d, off, script)
			if code == 0 || strings.Contains(out, "REACHED") {
				t.Fatalf("%s with the network off: exit %d, %q", script, code, out)
			}
			if !strings.Contains(out, "Permission denied") && !strings.Contains(out, "Couldn't connect") {
				t.Fatalf("%s: %q, want a refused connection", script, out)
			}
		})
	}
}

func TestSandboxOrdinaryWork(t *testing.T) {
	d := layout(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from the test server") }))
	defer srv.Close()
	p := d.policy(t, true)
	work := []struct{ name, script, want string }{
		{"python3 script", `printf 'import sys\nprint(sum(range(10)), sys.version_info[0])\n' > s.py && python3 s.py`, "45 3"},
		{"git init and commit", `git init -q repo && cd repo && echo hi > a.txt && git add a.txt && ` +
			`git -c user.name=A -c user.email=a@example.com commit -qm first && git log --oneline | wc -l`, "1"},
		{"node", `node -e 'console.log(require("os").tmpdir().length > 0, 6*7)'`, "true 42"},
		{"curl to 127.0.0.1", "curl -sS " + srv.URL, "hello from the test server"},
		{"pipes", "printf 'b\\na\\nc\\n' | sort | tr a-z A-Z | head -2 | tr '\\n' ,", "A,B,"},
		{"HOME writable", `echo note > "$HOME/.note" && cat ~/.note`, "note"},
		{"TMPDIR", `f=$(mktemp) && echo tmp-ok > "$f" && cat "$f" && case "$f" in "$TMPDIR"/*) echo inside;; esac`, "tmp-ok\ninside"},
		{"shared folder", `echo shared > "$SHARED_DIR/s.txt" && cat "$SHARED_DIR/s.txt"`, "shared"},
		{"dev null", "echo gone > /dev/null && echo kept", "kept"},
	}
	for _, w := range work {
		t.Run(w.name, func(t *testing.T) {
			out, code := sh(t, d, p, w.script)
			if code != 0 || !strings.Contains(out, w.want) {
				t.Fatalf("%s: exit %d, %q; want %q", w.script, code, out, w.want)
			}
		})
	}
}

// The app itself stays unconfined after starting confined commands.
func TestSandboxLeavesAppFree(t *testing.T) {
	d := layout(t)
	p := d.policy(t, false)
	for range 20 {
		if _, code := sh(t, d, p, "true"); code != 0 {
			t.Fatal("true failed")
		}
	}
	if _, err := os.ReadFile(filepath.Join(d.root, "secret.key")); err != nil {
		t.Fatalf("the app cannot read its own data any more: %v", err)
	}
	if _, err := os.ReadFile("/proc/self/status"); err != nil {
		t.Fatalf("the app cannot read /proc any more: %v", err)
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("the app cannot listen any more: %v", err)
	}
	l.Close()
}

// Command confines through the re-exec of this binary.
func TestSandboxCommand(t *testing.T) {
	d := layout(t)
	p := d.policy(t, true)
	cmd, err := sandbox.Command(p, "/bin/sh", "-c", "cat ../../../../../secret.key; echo ok > mine.txt && cat mine.txt")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = d.own
	out, _ := cmd.CombinedOutput()
	if !strings.Contains(string(out), "Permission denied") || strings.Contains(string(out), "CANARY") || !strings.Contains(string(out), "ok") {
		t.Fatalf("confined through Command: %q", out)
	}
}

func TestSandboxOff(t *testing.T) {
	t.Setenv("RERUN_SANDBOX", "off")
	if ok, why := sandbox.Available(); ok || !strings.Contains(why, "off") {
		t.Fatalf("Available with RERUN_SANDBOX=off = %v, %q", ok, why)
	}
	err := sandbox.Start(exec.Command("true"), sandbox.Policy{})
	if err == nil || !strings.Contains(err.Error(), "not sandboxed") {
		t.Fatalf("Start with the sandbox off: %v, want an error", err)
	}
}

func BenchmarkPlainStart(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSandboxStart(b *testing.B) {
	if ok, why := sandbox.Available(); !ok {
		b.Skip("no sandbox here: " + why)
	}
	own, tmp := b.TempDir(), b.TempDir()
	p := sandbox.Agent(b.TempDir(), own, own, tmp, nil, false)
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		if err := sandbox.Start(cmd, p); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSandboxOverhead starts the same trivial command plain and
// sandboxed in turn, so both see the same load, and reports the medians
// and what the sandbox adds (make bench prints it).
func BenchmarkSandboxOverhead(b *testing.B) {
	if ok, why := sandbox.Available(); !ok {
		b.Skip("no sandbox here: " + why)
	}
	own, tmp := b.TempDir(), b.TempDir()
	p := sandbox.Agent(b.TempDir(), own, own, tmp, nil, false)
	var plain, boxed []time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		cmd := exec.Command("/bin/true")
		if err := sandbox.Start(cmd, p); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		plain, boxed = append(plain, t1.Sub(t0)), append(boxed, time.Since(t1))
	}
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / float64(time.Millisecond)
	}
	mp, mb := med(plain), med(boxed)
	b.ReportMetric(mp, "ms-plain")
	b.ReportMetric(mb, "ms-sandboxed")
	b.ReportMetric(mb-mp, "ms-added")
}

// Start keeps the caller's process attributes: a process group of its own
// and a parent-death signal, which must not fire when the confined thread
// that started the command ends.
func TestSandboxKeepsProcessAttributes(t *testing.T) {
	d := layout(t)
	p := d.policy(t, true)
	for range 3 { // the first may start on the main thread, which lives on
		keepsProcessAttributes(t, d, p)
	}
}

func keepsProcessAttributes(t *testing.T, d dataDir, p sandbox.Policy) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 0.3; echo alive; ps -o pgid= -p $$ 2>/dev/null || cut -d' ' -f5 /proc/$$/stat 2>/dev/null; echo pid=$$")
	cmd.Dir = d.own
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sandbox.Start(cmd, p); err != nil {
		t.Fatal(err)
	}
	if !cmd.SysProcAttr.Setpgid || cmd.SysProcAttr.Pdeathsig != syscall.SIGKILL {
		t.Fatalf("SysProcAttr changed: %+v", cmd.SysProcAttr)
	}
	pgid, err := syscall.Getpgid(cmd.Process.Pid)
	if err != nil || pgid != cmd.Process.Pid {
		t.Errorf("the command's process group is %d (%v), want its own, %d", pgid, err, cmd.Process.Pid)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "alive") {
		t.Fatalf("with Pdeathsig the command ended early: %v, %q", err, out.String())
	}
}
