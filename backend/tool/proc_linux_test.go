//go:build linux

package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !zombie(b)
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waittest.Until(t, "the command to write "+filepath.Base(path), func() bool {
		b, _ := os.ReadFile(path)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

// recorder keeps what a command reported of its process.
type recorder struct {
	mu           sync.Mutex
	started      []Process
	ended        []Process
	startedToDir string // when set, each started process is written here as JSON
}

func (r *recorder) Started(p Process) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, p)
	if r.startedToDir != "" {
		// Written whole under another name and renamed, so a reader never
		// sees half of it.
		b, _ := json.Marshal(p)
		tmp := filepath.Join(r.startedToDir, "process.json.tmp")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(r.startedToDir, "process.json"))
	}
	return nil
}

func (r *recorder) Ended(p Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, p)
}

// A timeout kills the whole group: the shell and what it started in the
// background, and the run hears the group's start and end.
func TestTimeoutKillsTheGroup(t *testing.T) {
	env := testEnv(t)
	rec := &recorder{}
	env.Processes = rec
	// In the shared folder: a sandboxed command writes nowhere else outside its own.
	pidFile := filepath.Join(env.SharedDir, "bg.pid")
	began := time.Now()
	res := runShell(t, env, map[string]any{"command": "sleep 97 & echo $! > " + pidFile + "; sleep 97", "timeout_seconds": 5})
	if !res.TimedOut || time.Since(began) > 30*time.Second {
		t.Fatalf("result %+v after %v, want a timeout after 5s", res, time.Since(began))
	}
	bg := readPID(t, pidFile)
	waittest.Until(t, "the background sleep to die", func() bool { return !alive(bg) })
	if len(rec.started) != 1 || len(rec.ended) != 1 || rec.started[0] != rec.ended[0] || !strings.Contains(rec.started[0].Start, ":") {
		t.Fatalf("recorded started %+v ended %+v, want the one group, with its identity", rec.started, rec.ended)
	}
}

// TestShellCrashChild is the app TestCrashEndsTheGroup kills mid-command.
func TestShellCrashChild(t *testing.T) {
	dir := os.Getenv("RERUN_SHELL_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestCrashEndsTheGroup")
	}
	cmd := "sleep 300 & echo $! > " + filepath.Join(dir, "bg.pid") + "; echo $$ > " + filepath.Join(dir, "sh.pid") + "; wait"
	execute(context.Background(), dir, commandEnv(&Env{FilesDir: dir}), cmd, time.Minute, nil, nil, &recorder{startedToDir: dir})
	t.Fatal("the command ended before the kill")
}

// When the app dies, the kernel kills the shell (Pdeathsig); what the shell
// started survives that, and EndProcessGroup, given the recorded process,
// ends it at the next start. A process of the same id that is not the
// recorded one is left alone.
func TestCrashEndsTheGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	child := exec.Command(os.Args[0], "-test.run=^TestShellCrashChild$")
	child.Env = append(os.Environ(), "RERUN_SHELL_CRASH_DIR="+dir)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	sh, bg := readPID(t, filepath.Join(dir, "sh.pid")), readPID(t, filepath.Join(dir, "bg.pid"))
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	// The shell can write its pid before the app has recorded it started.
	var p Process
	var b []byte
	waittest.Until(t, "the app to record the shell", func() bool {
		b, _ = os.ReadFile(filepath.Join(dir, "process.json"))
		return b != nil
	})
	if err := json.Unmarshal(b, &p); err != nil || p.PID != sh {
		t.Fatalf("recorded process %s (%v), want the shell %d", b, err, sh)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	waittest.Until(t, "the shell to die with the app", func() bool { return !alive(sh) })
	if !alive(bg) {
		t.Fatal("the background sleep died with the app; this test needs it alive to check the restart")
	}

	// Not ours: the same group id under another start time.
	stranger := p
	stranger.Start = bootID() + ":" + "999999999999"
	if n, err := EndProcessGroup(stranger); err != nil || n != 0 || !alive(bg) {
		t.Fatalf("ending a group recorded later than its members killed %d (%v); alive %v", n, err, alive(bg))
	}
	other := p
	other.Start = "another-boot:1"
	if n, _ := EndProcessGroup(other); n != 0 || !alive(bg) {
		t.Fatal("a group of another boot was ended")
	}

	n, err := EndProcessGroup(p)
	if err != nil || n != 1 {
		t.Fatalf("EndProcessGroup = %d, %v; want the one sleep left", n, err)
	}
	waittest.Until(t, "the background sleep to die", func() bool { return !alive(bg) })
}

// A live process whose pid is the recorded group id but started later is a
// stranger: its group is never killed.
func TestEndProcessGroupSparesAReusedPID(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	id := procIdentity(cmd.Process.Pid)
	boot, ticks, _ := strings.Cut(id, ":")
	n, _ := strconv.ParseUint(ticks, 10, 64)
	earlier := Process{PID: cmd.Process.Pid, Start: boot + ":" + strconv.FormatUint(n-1, 10)}
	if k, err := EndProcessGroup(earlier); err != nil || k != 0 || !alive(cmd.Process.Pid) {
		t.Fatalf("a reused pid's group was ended (%d, %v)", k, err)
	}
	if k, err := EndProcessGroup(Process{PID: cmd.Process.Pid, Start: id}); err != nil || k != 1 {
		t.Fatalf("the recorded group was not ended (%d, %v)", k, err)
	}
	waittest.Until(t, "the sleep to die", func() bool { return !alive(cmd.Process.Pid) })
	if _, err := EndProcessGroup(Process{PID: 1234, Start: "garbage"}); err == nil {
		t.Error("a malformed identity was accepted")
	}
}

func TestParseStat(t *testing.T) {
	line := "4242 (a) b (c)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0"
	st, err := parseStat([]byte(line))
	if err != nil || st.pgrp != 4240 || st.start != 987654 {
		t.Fatalf("parseStat = %+v, %v", st, err)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 notanumber 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 5", "1 (x) S 1 2 3"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted it", bad)
		}
	}
	if own, err := readStat(os.Getpid()); err != nil || own.pgrp != syscall.Getpgrp() {
		t.Errorf("own stat = %+v, %v; want process group %d", own, err, syscall.Getpgrp())
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a) b (c)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 0"))
	f.Add([]byte("1 ()"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseStat(b)
		if err == nil && st.start == 0 && !strings.Contains(string(b), "0") {
			t.Fatalf("start 0 read from %q", b)
		}
		zombie(append([]byte(")"), b...))
	})
}
