package run_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// services opens the run service over an existing workspace folder.
func services(t testing.TB, dir string, fake *llmtest.Server) (*run.Service, *agent.Service, *box.Service, func()) {
	return servicesAt(t, dir, fake.OpenAIURL())
}

func servicesAt(t testing.TB, dir, openaiURL string) (*run.Service, *agent.Service, *box.Service, func()) {
	db, err := store.Open(context.Background(), filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	bus := &event.Bus{}
	boxes := box.NewService(db, "ws", bus)
	agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", bus)
	svc := run.NewService(run.Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: boxes, Models: openaiModels(t, openaiURL), Bus: bus,
		SharedDir: filepath.Join(dir, "shared"), SharedDB: filepath.Join(dir, "shared.db")}, run.Config{})
	return svc, agents, boxes, func() { db.Close() }
}

// TestCrashChild is the process TestCrashResume kills: it starts a run and
// serves until it dies.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv("RERUN_CRASH_DIR")
	if dir == "" {
		t.Skip("run by TestCrashResume")
	}
	svc, _, _, _ := servicesAt(t, dir, os.Getenv("RERUN_CRASH_OPENAI"))
	ctx := context.Background()
	sess, err := svc.ChatSession(ctx, os.Getenv("RERUN_CRASH_AGENT"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Start(ctx, os.Getenv("RERUN_CRASH_AGENT"), sess.ID, run.SourceChat, "run the long job", run.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	svc.Serve(ctx) // until SIGKILL
}

// TestCrashResume kills a real process in the middle of a tool call, then
// restarts the runtime on the same database: the run resumes from its last
// committed step, the model hears the tool was interrupted, and the command
// is not run a second time.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	fake := llmtest.New(t)
	svc, agents, boxes, closeDB := services(t, dir, fake)
	_ = svc
	ctx := context.Background()
	b, _ := boxes.Create(ctx, "Main")
	marker := filepath.Join(dir, "shared", "ran.txt") // commands write only their agent's and the shared folder
	a, err := agents.Create(ctx, agent.NewAgent{Name: "Runner", BoxID: b.ID, Capabilities: []string{"shell"}, AskFirst: map[string]bool{"shell": false}})
	if err != nil {
		t.Fatal(err)
	}
	closeDB()

	shPID, bgPID := filepath.Join(dir, "shared", "sh.pid"), filepath.Join(dir, "shared", "bg.pid")
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "job", Name: "run_command",
		Args: `{"command":"echo $$ > ` + shPID + `; sleep 30 & echo $! > ` + bgPID + `; echo once >> ` + marker + `; wait"}`}))
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	child.Env = append(os.Environ(), "RERUN_CRASH_DIR="+dir, "RERUN_CRASH_OPENAI="+fake.OpenAIURL(), "RERUN_CRASH_AGENT="+a.ID)
	out, _ := os.Create(filepath.Join(dir, "child.log"))
	child.Stdout, child.Stderr = out, out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()

	// Wait until the tool call is committed and the command is running.
	deadline := time.Now().Add(waittest.Patience)
	for {
		if b, _ := os.ReadFile(marker); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "child.log"))
			t.Fatalf("the child never started the command:\n%s", log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	sh, bg := pidIn(t, shPID), pidIn(t, bgPID)
	t.Cleanup(func() {
		if p, err := os.FindProcess(bg); err == nil {
			p.Kill()
		}
	})
	if runtime.GOOS == "linux" {
		waittest.Until(t, "the shell to die with the app", func() bool { return !alive(sh) })
	}

	fake.Script(llmtest.Text("The job was interrupted; I did not rerun it."))
	svc, _, _, closeDB = services(t, dir, fake)
	defer closeDB()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { svc.Serve(serveCtx); close(done) }()
	defer func() { stop(); <-done }()

	if runtime.GOOS == "linux" {
		// What the shell started outlived the app; the restart ends it.
		waittest.Until(t, "the restart to end the command's background sleep", func() bool { return !alive(bg) })
	}
	runs, _ := svc.List(ctx, run.ListOptions{AgentID: a.ID})
	if len(runs) != 1 {
		t.Fatalf("runs after restart = %d, want 1", len(runs))
	}
	waitCtx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	r, err := svc.Wait(waitCtx, runs[0].ID)
	if err != nil || r.Status != run.Done {
		t.Fatalf("resumed run: %s %v %q", r.Status, err, r.Error)
	}
	steps, _ := svc.Steps(ctx, r.ID)
	var kinds []string
	for _, s := range steps {
		kinds = append(kinds, s.Kind)
	}
	if got := strings.Join(kinds, ","); got != "input,model,tool_call,tool_result,model" {
		t.Errorf("steps = %s", got)
	}
	var res run.ToolResultData
	json.Unmarshal(steps[3].Data, &res)
	if !res.IsError || !strings.Contains(res.Output, "interrupted") {
		t.Errorf("tool result after the crash = %+v, want interrupted", res)
	}
	if b, _ := os.ReadFile(marker); string(b) != "once\n" {
		t.Errorf("the command ran %q: it must not run again after the crash", b)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	found := false
	for _, m := range last.Messages {
		for _, tr := range m.ToolResults {
			found = found || (tr.ToolCallID == "job" && strings.Contains(tr.Content, "interrupted"))
		}
	}
	if !found {
		t.Error("the model was not told the tool call was interrupted")
	}
}

// pidIn reads the pid a command wrote to path.
func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, _ := os.ReadFile(path)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s holds %q, not a pid", path, b)
	}
	return pid
}

// alive reports whether pid is a live process (a zombie is not); Linux only.
func alive(pid int) bool {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		return len(f) > 0 && f[0] != "Z" && f[0] != "X"
	}
	return false
}

// A called agent's run that was queued when its caller's app died, and
// never began, ends at the restart instead of waiting forever: only its
// caller runs it (inline), and the resumed caller hears the call was
// interrupted. TestServeChaos found one still queued after every other run
// had ended.
func TestCalledRunThatNeverBeganEndsAtRestart(t *testing.T) {
	dir := t.TempDir()
	fake := llmtest.New(t)
	svc, agents, boxes, closeDB := services(t, dir, fake)
	defer closeDB()
	ctx := context.Background()
	b, _ := boxes.Create(ctx, "Main")
	caller, err := agents.Create(ctx, agent.NewAgent{Name: "Caller", BoxID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	callee, err := agents.Create(ctx, agent.NewAgent{Name: "Callee", BoxID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	// What the dead app left: the caller's run, and the run it had queued
	// for the callee just before it died.
	sess, _ := svc.ChatSession(ctx, caller.ID)
	parent, err := svc.Start(ctx, caller.ID, sess.ID, run.SourceChat, "ask the callee", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	childSess, err := svc.NewSession(ctx, callee.ID, run.SourceAgent, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	child, err := svc.Start(ctx, callee.ID, childSess.ID, run.SourceAgent, "job j003", run.StartOptions{From: "@caller", ParentRunID: parent.ID, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}

	fake.Script(llmtest.Text("Done without the callee."))
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { svc.Serve(serveCtx); close(done) }()
	defer func() { stop(); <-done }()
	waitCtx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	got, err := svc.Wait(waitCtx, child.ID)
	if err != nil {
		t.Fatalf("the called run never ended: %v", err)
	}
	if got.Status != run.Failed || !strings.Contains(got.Error, "before it began") {
		t.Errorf("called run = %s %q, want failed: its caller stopped before it began", got.Status, got.Error)
	}
	if p, err := svc.Wait(waitCtx, parent.ID); err != nil || p.Status != run.Done {
		t.Errorf("caller = %+v %v, want done", p.Status, err)
	}
}
