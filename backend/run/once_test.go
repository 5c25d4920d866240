package run_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// stoppable starts a run service like serve, but returns its stop: stopping
// it mid-call is how a crash looks to the database (the call's result is
// never recorded and the run stays running).
func (f *fixture) stoppable() (*run.Service, func()) {
	svc := run.NewService(run.Deps{DB: f.db, Workspace: "ws", Agents: f.agents, Boxes: f.boxes, Models: newModels(f.t, f.fake, "anthropic"), Bus: f.bus,
		SharedDir: filepath.Join(f.dir, "shared"), SharedDB: filepath.Join(f.dir, "shared.db"), Vars: f.vars, Notifier: f.notes}, run.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Serve(ctx); close(done) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	f.t.Cleanup(stop)
	return svc, stop
}

func lines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// An approved held call that was running when the app stopped is not run
// again by the next start: the model hears it was interrupted.
func TestApprovedHeldCallRunsOnceAcrossARestart(t *testing.T) {
	f := base(t)
	f.vars, f.notes = f.variables(), &notes{}
	svc, stop := f.stoppable()
	f.svc = svc
	a := f.careful("Operator", "shell")                 // ask first is on for the shell
	marker := filepath.Join(f.dir, "shared", "ran.txt") // commands write only their agent's and the shared folder
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "run_command",
		Args: `{"command":"echo once >> ` + marker + ` && sleep 30"}`}))
	r := f.say(a, "do the thing")
	if r.Status != run.Paused {
		t.Fatalf("run = %s (%s), want paused for approval", r.Status, r.Error)
	}
	p := f.openPause(r.ID)
	if _, err := svc.Answer(context.Background(), p.ID, json.RawMessage(`{"decisions":[{"id":"c1","approved":true}]}`)); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the approved command to start", func() bool { return lines(marker) == 1 })
	stop() // mid-call: the command is killed, its result never recorded

	f.fake.Script(llmtest.Text("It was interrupted; I will check before redoing it."))
	f.svc, _ = f.stoppable()
	done := f.wait(r.ID)
	if done.Status != run.Done {
		t.Fatalf("after the restart the run is %s (%s)", done.Status, done.Error)
	}
	if n := lines(marker); n != 1 {
		t.Fatalf("the approved command ran %d times, want once", n)
	}
	got, isErr := lastToolResult(f.fake, "c1")
	if !isErr || !strings.Contains(got, "interrupted") {
		t.Fatalf("the model got %q (error %v), want interrupted", got, isErr)
	}
	if k := f.kinds(r.ID); k != "input,model,tool_call,pause,tool_call,tool_result,resume,model" {
		t.Errorf("steps = %s", k)
	}
}

// The same for an item of the agent's own request_approval card.
func TestApprovedItemRunsOnceAcrossARestart(t *testing.T) {
	f := base(t)
	f.vars, f.notes = f.variables(), &notes{}
	svc, stop := f.stoppable()
	f.svc = svc
	a := f.careful("Cleaner", "human", "shell")
	marker := filepath.Join(f.dir, "shared", "ran.txt") // commands write only their agent's and the shared folder
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "ap", Name: "request_approval", Args: `{"title":"Jobs","items":[` +
		`{"title":"Quick","tool":"run_command","input":{"command":"echo quick >> ` + marker + `"}},` +
		`{"title":"Slow","tool":"run_command","input":{"command":"echo slow >> ` + marker + ` && sleep 30"}}]}`}))
	r := f.say(a, "run the jobs")
	p := f.openPause(r.ID)
	if _, err := svc.Answer(context.Background(), p.ID, json.RawMessage(`{"decisions":[{"id":"a1","approved":true},{"id":"a2","approved":true}]}`)); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the slow item to start", func() bool { return lines(marker) == 2 })
	stop()

	f.fake.Script(llmtest.Text("ok"))
	f.svc, _ = f.stoppable()
	if done := f.wait(r.ID); done.Status != run.Done {
		t.Fatalf("after the restart the run is %s (%s)", done.Status, done.Error)
	}
	if b, _ := os.ReadFile(marker); string(b) != "quick\nslow\n" {
		t.Fatalf("the items ran %q, want each once", b)
	}
	got, _ := lastToolResult(f.fake, "ap")
	for _, want := range []string{"a1 (Quick): approved; Rerun ran run_command for you (done)", "a2 (Slow): approved; Rerun ran run_command for you (interrupted)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model got %q, missing %q", got, want)
		}
	}
}
