//go:build unix

package tool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunCommand(t *testing.T) {
	t.Setenv("RERUN_TEST_API_KEY", "sk-secret")
	env := testEnv(t)
	realFiles := func() string {
		os.MkdirAll(env.FilesDir, 0o755)
		p, _ := filepath.EvalSymlinks(env.FilesDir)
		return p
	}()
	tests := []struct {
		name     string
		command  string
		exitCode int
		output   string
	}{
		{"stdout", "echo hello", 0, "hello\n"},
		{"exit code", "echo bye; exit 3", 3, "bye\n"},
		{"stderr combined in order", "echo out; echo err 1>&2; echo out2", 0, "out\nerr\nout2\n"},
		{"working directory is the own folder", "pwd -P", 0, realFiles + "\n"},
		{"HOME is the own folder", `echo "$HOME"`, 0, env.FilesDir + "\n"},
		{"shared folder variable", `echo "$SHARED_DIR"`, 0, env.SharedDir + "\n"},
		{"app environment not passed", `echo "key=$${RERUN_TEST_API_KEY:-none}"`, 0, "key=none\n"},
		{"no stdin", "cat; echo done", 0, "done\n"},
		{"killed by a signal", "kill -9 $$", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runShell(t, env, map[string]any{"command": tt.command})
			if res.ExitCode != tt.exitCode {
				t.Errorf("got exit code %d, want %d", res.ExitCode, tt.exitCode)
			}
			if res.Output != tt.output {
				t.Errorf("got output %q, want %q", res.Output, tt.output)
			}
			if res.TimedOut {
				t.Errorf("got timed_out true, want false")
			}
		})
	}

	t.Run("only the minimal environment", func(t *testing.T) {
		res := runShell(t, env, map[string]any{"command": "env"})
		// The shell itself may add PWD, SHLVL, OLDPWD and _.
		allowed := map[string]bool{"HOME": true, "LANG": true, "PATH": true, "SHARED_DIR": true, "TMPDIR": true, "PWD": true, "SHLVL": true, "OLDPWD": true, "_": true}
		for _, line := range strings.Split(strings.TrimSpace(res.Output), "\n") {
			if name, _, _ := strings.Cut(line, "="); !allowed[name] {
				t.Errorf("the command saw %q, which is not in the minimal environment", line)
			}
		}
		for _, want := range []string{"HOME=" + env.FilesDir, "LANG=", "PATH=/"} {
			if !strings.Contains(res.Output, want) {
				t.Errorf("got environment %q, want it to hold %q", res.Output, want)
			}
		}
	})

	refusals := []struct {
		name  string
		input map[string]any
		err   string
	}{
		{"empty", map[string]any{"command": "  "}, "command is empty"},
		{"timeout too long", map[string]any{"command": "true", "timeout_seconds": 601}, "timeout_seconds 601 is out of range; use 1 to 600"},
		{"timeout negative", map[string]any{"command": "true", "timeout_seconds": -1}, "timeout_seconds -1 is out of range"},
		{"NUL", map[string]any{"command": "echo \x00"}, "NUL byte"},
		{"unknown argument", map[string]any{"command": "true", "cwd": "/"}, `unknown field "cwd"`},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, env, "run_command", tt.input)
			wantErr(t, err, invalid, tt.err)
		})
	}
}

func TestRunCommandTimeout(t *testing.T) {
	env := testEnv(t)
	res := runShell(t, env, map[string]any{"command": "echo started; sleep 30", "timeout_seconds": 1})
	if !res.TimedOut {
		t.Errorf("got timed_out false, want true")
	}
	if res.ExitCode != -1 {
		t.Errorf("got exit code %d, want -1", res.ExitCode)
	}
	if want := "started\n\n[timed out after 1s; the command and everything it started were killed]"; res.Output != want {
		t.Errorf("got output %q, want %q", res.Output, want)
	}
	if res.DurationMS < 1000 || res.DurationMS > 10000 {
		t.Errorf("got duration %d ms, want about 1000", res.DurationMS)
	}
}

// The user presses Stop: the command and its children die at once.
func TestRunCommandCancel(t *testing.T) {
	env := testEnv(t)
	tl, _ := Find(Catalog(), "run_command")
	ctx, cancel := context.WithCancel(context.Background())
	pidFile := filepath.Join(env.FilesDir, "child.pid")
	go func() {
		// Cancel once the background child has written its pid.
		for range 200 {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	_, err := tl.Run(ctx, env, json.RawMessage(`{"command":"sleep 30 & echo $! > child.pid; sleep 30"}`))
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got error %v, want context.Canceled", err)
	}
	if elapsed > 3*time.Second {
		t.Errorf("the command took %s to stop, want about 1 s at most", elapsed)
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("child pid %q: %v", b, err)
	}
	assertDead(t, pid)
}

// Background processes do not outlive a command that finished normally.
func TestRunCommandReapsBackground(t *testing.T) {
	env := testEnv(t)
	start := time.Now()
	res := runShell(t, env, map[string]any{"command": "sleep 30 & echo $!"})
	if time.Since(start) > 5*time.Second {
		t.Errorf("the command waited for its background child (%s)", time.Since(start))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	assertDead(t, pid)
}

// assertDead waits up to a second for pid to be gone. A zombie counts as
// gone: in a container without an init, nobody reaps orphans.
func assertDead(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d is still running", pid)
}

func TestRunCommandOutputCap(t *testing.T) {
	env := testEnv(t)
	// 100000 bytes: "a"×60000 then "z"×40000.
	res := runShell(t, env, map[string]any{"command": `head -c 60000 /dev/zero | tr '\0' a; head -c 40000 /dev/zero | tr '\0' z`})
	half := MaxCommandOutput / 2
	want := strings.Repeat("a", half) + "\n[truncated: 34464 more bytes]\n" + strings.Repeat("z", half)
	if res.Output != want {
		t.Errorf("got %d bytes of output, want %d (head, note, tail)", len(res.Output), len(want))
	}
}

func TestHeadTail(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "de"}, "abcde"},
		{"exactly full", 4, []string{"ab", "cd"}, "abcd"},
		{"one write over", 4, []string{"abcdefg"}, "ab\n[truncated: 3 more bytes]\nfg"},
		{"many small writes", 4, []string{"a", "b", "c", "d", "e", "f", "g", "h"}, "ab\n[truncated: 4 more bytes]\ngh"},
		{"wraps the ring several times", 6, []string{"123", "abcdefghij", "XY"}, "123\n[truncated: 9 more bytes]\njXY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHeadTail(tt.max)
			for _, w := range tt.writes {
				h.Write([]byte(w))
			}
			if got := h.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
