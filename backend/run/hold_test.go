package run_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// Pause all stops a run at its next model turn with its steps kept, keeps
// new runs queued, survives a restart, and Resume finishes them all.
func TestHoldPausesAllCoworkers(t *testing.T) {
	ctx := context.Background()
	f := setup(t, "anthropic", run.Config{})
	a := f.agent("Writer", "files")
	var calls atomic.Int32
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		if calls.Add(1) == 1 {
			// Paused while the first turn is in flight: the turn and
			// its tool call finish, the next turn waits.
			if err := f.svc.Hold(ctx, true); err != nil {
				t.Error(err)
			}
			return llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "write_file", Args: `{"path":"a.txt","content":"x"}`})
		}
		return llmtest.Text("done")
	})
	r := f.start(a, "write a file")
	waittest.Until(t, "the run goes back to the queue", func() bool {
		got, _ := f.svc.Get(ctx, r.ID)
		return got.Status == run.Queued && got.Steps == 4
	})
	if got := f.kinds(r.ID); got != "input,model,tool_call,tool_result" {
		t.Errorf("steps while held = %s, want input,model,tool_call,tool_result", got)
	}
	if !f.svc.Held() {
		t.Fatal("Held() = false after Hold(true)")
	}
	// A run started while held waits too; a second service on the same
	// database (a restart) reads the switch.
	later := f.start(f.agent("Reader"), "hello")
	if again := run.NewService(run.Deps{DB: f.db, Workspace: "ws", Agents: f.agents, Boxes: f.boxes}, run.Config{}); !again.Held() {
		t.Error("the pause-all switch did not survive a restart")
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("model calls while held = %d, want 1", n)
	}
	if got, _ := f.svc.Get(ctx, later.ID); got.Status != run.Queued {
		t.Errorf("run started while held: %s, want queued", got.Status)
	}

	if err := f.svc.Hold(ctx, false); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{r.ID, later.ID} {
		if got := f.wait(id); got.Status != run.Done || got.Output != "done" {
			t.Errorf("run %s after Resume = %s %q, want done", id, got.Status, got.Output)
		}
	}
	if got := f.kinds(r.ID); got != "input,model,tool_call,tool_result,model" {
		t.Errorf("steps after Resume = %s", got)
	}
}
