package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Limits of the shell family.
const (
	DefaultCommandTimeout = 60 * time.Second
	MaxCommandTimeout     = 600 * time.Second
	MaxCommandOutput      = 64 << 10 // bytes of combined output kept: half head, half tail
	maxCommandBytes       = 64 << 10 // length of the command line itself

	// drainTimeout bounds how long we wait for the output pipe to close after
	// the process tree is gone (a daemon that left the group may hold it).
	drainTimeout = time.Second
)

func shellTools() []Tool {
	t := Tool{
		Name:   "run_command",
		Family: "shell",
		Description: "Run a shell command on this computer (" + shellName + ") in your own folder, which is also $HOME. " +
			"Returns JSON {exit_code, duration_ms, timed_out, output} with stdout and stderr combined; output over 64 KiB keeps its " +
			"beginning and end around a [truncated: N more bytes] note. The command gets a minimal environment: PATH, HOME, LANG, TMPDIR (a private temp folder) and SHARED_DIR, the " +
			"workspace's shared folder, plus the env you pass. It runs sandboxed: it reads and writes only your folder, the shared folder and TMPDIR, reads the system's programs, and reaches the network only if your settings allow it. ${NAME} in the command or an env value is replaced by the workspace variable NAME when the command runs (in the command it is quoted for where it stands, so it is always one piece of data: write \"${NAME}\" or ${NAME}, never \\${NAME}; in env it is passed as is; write $HOME, not ${HOME}, for the shell's own variables; $${X} is a literal ${X}); prefer env {\"TOKEN\": \"${API_TOKEN}\"} and \"$TOKEN\" in the command. It gets no input, and is stopped with everything it started when it times out or the run is stopped; background processes " +
			"do not outlive the command.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"The command line, run by ` + shellName + `."},` +
			`"timeout_seconds":{"type":"integer","minimum":1,"maximum":600,"description":"Kill the command after this many seconds (default 60)."},` +
			`"env":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra environment variables; values may reference workspace variables as ${NAME}."}` +
			`},"required":["command"],"additionalProperties":false}`),
		Run:     runCommand,
		Acts:    always,
		Preview: previewCommand,
	}
	if ok, _ := sandbox.Available(); !ok {
		// Nothing runs unconfined silently: every command waits for the
		// person, whatever the ask-first switch says.
		t.Approve = func(_ context.Context, input json.RawMessage) (string, string, error) {
			title, _, detail := previewCommand(nil, input)
			return title + " (not sandboxed on this computer)", detail, nil
		}
	}
	return []Tool{t}
}

// Sandboxed reports whether agents' commands run confined here, and if
// not, why: the agent's Settings say so and every command asks first.
func Sandboxed() (bool, string) { return sandbox.Available() }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// commandResult is what run_command returns.
type commandResult struct {
	ExitCode   int    `json:"exit_code"`
	DurationMS int64  `json:"duration_ms"`
	TimedOut   bool   `json:"timed_out"`
	Output     string `json:"output"`
}

func runCommand(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Command        string            `json:"command"`
		TimeoutSeconds int               `json:"timeout_seconds"`
		Env            map[string]string `json:"env"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if strings.TrimSpace(in.Command) == "" {
		return "", fault.Invalid("command is empty; give the command line to run")
	}
	if len(in.Command) > maxCommandBytes {
		return "", fault.Invalid("command is %d bytes; keep it under %d — write a script file with write_file and run that", len(in.Command), maxCommandBytes)
	}
	if strings.IndexByte(in.Command, 0) >= 0 {
		return "", fault.Invalid("command contains a NUL byte; remove it")
	}
	timeout := DefaultCommandTimeout
	if in.TimeoutSeconds != 0 {
		timeout = time.Duration(in.TimeoutSeconds) * time.Second
		if timeout < time.Second || timeout > MaxCommandTimeout {
			return "", fault.Invalid("timeout_seconds %d is out of range; use 1 to %d", in.TimeoutSeconds, int(MaxCommandTimeout/time.Second))
		}
	}
	if env.FilesDir == "" {
		return "", fault.Invalid("this agent has no folder configured to run commands in")
	}
	for _, dir := range []string{env.FilesDir, env.SharedDir} {
		if dir == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("create folder %s: %w", dir, err)
		}
	}
	tmp, err := os.MkdirTemp("", "rerun-cmd-")
	if err != nil {
		return "", fmt.Errorf("create the command's temp folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	environ := append(commandEnv(env), "TMPDIR="+tmp)
	envValues := map[string]string{} // filled in, for checkCommandHosts
	for _, k := range slices.Sorted(maps.Keys(in.Env)) {
		if !envName.MatchString(k) {
			return "", fault.Invalid("env name %q is not a valid environment variable name; use letters, digits and _", k)
		}
		v, err := env.resolve(in.Env[k])
		if err != nil {
			return "", fault.Invalid("env %s: %v", k, err)
		}
		environ = append(environ, k+"="+v)
		envValues[k] = v
	}
	command, err := env.resolveCommand(in.Command)
	if err != nil {
		return "", fault.Invalid("command: %v", err)
	}
	if err := env.checkCommandHosts(in.Command, in.Env, command, envValues); err != nil {
		return "", err
	}
	res, err := execute(ctx, env.FilesDir, environ, command, timeout, env.redactor(), commandPolicy(env, tmp), env.Processes)
	if err != nil {
		return "", err
	}
	return marshal(res), nil
}

// commandPolicy is what a command of env's agent may reach: its folder, the
// shared folder and tmp, read-only system paths, nothing else of the
// workspace; the network unless the agent's switch is off. Nil where
// commands are not sandboxed (each was approved by the person).
func commandPolicy(env *Env, tmp string) *sandbox.Policy {
	if ok, _ := sandbox.Available(); !ok {
		return nil
	}
	ws := ""
	if env.SharedDir != "" {
		ws = filepath.Dir(env.SharedDir)
	}
	p := sandbox.Agent(ws, env.FilesDir, env.SharedDir, tmp, nil, !env.NoNetwork)
	return &p
}

// execute runs command in dir under its own process group, confined to p
// (nil: unconfined), killing the whole group when ctx is done, the timeout
// passes, or the shell exits. The output is masked with r before it is cut
// to its head and tail. procs (nil: none) records the group while it runs.
func execute(ctx context.Context, dir string, environ []string, command string, timeout time.Duration, r *secret.Redactor, p *sandbox.Policy, procs ProcessRecorder) (commandResult, error) {
	cmd := exec.Command(shellPath, shellFlag, command)
	cmd.Dir = dir
	cmd.Env = environ
	setProcessGroup(cmd)

	// An *os.File as Stdout/Stderr goes to the child as is (no copying
	// goroutine inside exec), so Wait returns when the shell exits even if a
	// background child still holds the pipe; we then kill the group and
	// drain what is left ourselves.
	pr, pw, err := os.Pipe()
	if err != nil {
		return commandResult{}, fmt.Errorf("run command: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	var waited <-chan error
	if p != nil {
		// sandbox.Start keeps the starting thread while the child lives
		// (Pdeathsig), as startCommand does.
		if err = sandbox.Start(cmd, *p); err == nil {
			w := make(chan error, 1)
			go func() { w <- cmd.Wait() }()
			waited = w
		}
	} else {
		waited, err = startCommand(cmd)
	}
	if err != nil {
		pr.Close()
		pw.Close()
		return commandResult{}, fmt.Errorf("start %s: %w", shellPath, err)
	}
	pw.Close()
	if procs != nil {
		if p := (Process{PID: cmd.Process.Pid, Start: procIdentity(cmd.Process.Pid)}); p.Start != "" {
			if err := procs.Started(p); err != nil {
				killGroup(cmd)
				<-waited
				pr.Close()
				return commandResult{}, fmt.Errorf("run command: record its process: %w", err)
			}
			defer procs.Ended(p)
		}
	}
	out := newHeadTailOverlap(MaxCommandOutput, maskContext(r))
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := pr.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	timedOut, cancelled := false, false
	select {
	case waitErr = <-waited:
	case <-timer.C:
		timedOut = true
		killGroup(cmd)
		waitErr = <-waited
	case <-ctx.Done():
		cancelled = true
		killGroup(cmd)
		waitErr = <-waited
	}
	duration := time.Since(start)
	killGroup(cmd) // whatever the command left running in the background
	select {
	case <-drained:
	case <-time.After(drainTimeout):
	}
	pr.Close()
	<-drained

	if cancelled {
		return commandResult{}, fmt.Errorf("run command: stopped after %s: %w", duration.Round(time.Millisecond), ctx.Err())
	}
	code := cmd.ProcessState.ExitCode()
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return commandResult{}, fmt.Errorf("run command: %w", waitErr)
	}
	output := out.masked(r)
	if timedOut {
		output += fmt.Sprintf("\n[timed out after %s; the command and everything it started were killed]", timeout)
	}
	return commandResult{ExitCode: code, DurationMS: duration.Milliseconds(), TimedOut: timedOut, Output: output}, nil
}

// startCommand starts cmd and returns where its Wait's error comes. The
// start and the wait run on one goroutine locked to its OS thread: Linux
// sends the parent-death signal (setProcessGroup) when the thread that
// started the child exits, and a thread the runtime handed to another
// goroutine could exit with it (LockOSThread without unlock) while the
// command still runs.
func startCommand(cmd *exec.Cmd) (<-chan error, error) {
	started, waited := make(chan error, 1), make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waited, nil
}

// commandEnv is the whole environment a command gets: PATH, HOME (the
// agent's folder), LANG and SHARED_DIR (the shared folder). The app's own
// environment is never passed on: it may hold API keys.
func commandEnv(e *Env) []string {
	home := e.FilesDir
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	lang := os.Getenv("LANG")
	if lang == "" {
		lang = "C.UTF-8"
	}
	env := []string{"PATH=" + path, "HOME=" + home, "LANG=" + lang}
	if e.SharedDir != "" {
		env = append(env, "SHARED_DIR="+e.SharedDir)
	}
	return append(env, platformEnv(home)...)
}

// maskContext is how many bytes to keep past each cut of an output so
// that a value cut there is still whole for the redactor: its longest form,
// with room for line breaks inside it.
func maskContext(r *secret.Redactor) int { return min(3*r.Longest(), 1<<20) }

// headTail keeps the first and last half of max bytes written to it, and
// overlap bytes more on the side of each cut, and counts what fell between.
type headTail struct {
	mu      sync.Mutex
	half    int
	overlap int
	head    []byte // up to half+overlap bytes
	tail    []byte // the last half+overlap bytes; a ring buffer once full
	pos     int    // next write position in tail when full
	dropped int    // bytes overwritten in tail
}

func newHeadTail(max int) *headTail { return newHeadTailOverlap(max, 0) }

func newHeadTailOverlap(max, overlap int) *headTail {
	return &headTail{half: max / 2, overlap: overlap}
}

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	if room := h.half + h.overlap - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	size := h.half + h.overlap
	for len(p) > 0 {
		if len(h.tail) < size {
			k := min(size-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		// Full ring: overwrite the oldest bytes.
		k := min(size-h.pos, len(p))
		copy(h.tail[h.pos:], p[:k])
		h.dropped += k
		h.pos = (h.pos + k) % size
		p = p[k:]
	}
	return n, nil
}

// String is what was written, cut to its head and tail, unmasked.
func (h *headTail) String() string { return h.masked(nil) }

// masked is what was written, masked with r (nil: nothing to mask) and then
// cut to its head and tail around a note of what was left out. Each piece is
// masked with the overlap beyond its cut in view, so a value cut in two is
// masked on both sides.
func (h *headTail) masked(r *secret.Redactor) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := append(append([]byte{}, h.tail[h.pos:]...), h.tail[:h.pos]...)
	valid := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
	if h.dropped == 0 {
		// Every byte is still here, head and tail side by side.
		all := string(h.head) + string(tail)
		if len(all) <= 2*h.half {
			return valid(r.RedactRange(all, 0, len(all)))
		}
		return valid(r.RedactRange(all, 0, h.half)) + truncNote(len(all)-2*h.half) + "\n" +
			valid(r.RedactRange(all, len(all)-h.half, len(all)))
	}
	head, rest := string(h.head), string(tail)
	total := len(head) + h.dropped + len(rest)
	return valid(r.RedactRange(head, 0, h.half)) + truncNote(total-2*h.half) + "\n" +
		valid(r.RedactRange(rest, len(rest)-h.half, len(rest)))
}

// previewCommand shows the command line after the env it sets.
func previewCommand(_ *Env, input json.RawMessage) (string, string, string) {
	in := argsOf(input)
	var env strings.Builder
	for _, kv := range in.sortedPairs("env") {
		fmt.Fprintf(&env, "%s=%s ", kv[0], kv[1])
	}
	return "Run a command", "command", env.String() + in.str("command")
}
