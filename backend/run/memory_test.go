package run_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// withStores is setup with real memory and skill services.
func withStores(t *testing.T) *fixture {
	t.Helper()
	f := base(t)
	mem, err := memory.New(f.db, memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	f.memory, f.skills = mem, skill.New(f.db, skill.Config{AgentsDir: filepath.Join(f.dir, "agents")})
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{})
	return f
}

// sayInNewSession starts a chat run in a fresh session and waits for its end.
func (f *fixture) sayInNewSession(a agent.Agent, text string) run.Run {
	f.t.Helper()
	ctx := context.Background()
	sess, err := f.svc.NewSession(ctx, a.ID, run.SourceChat, "")
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceChat, text, run.StartOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return f.wait(r.ID)
}

func args(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// toolResult is the content of the result of call id in request req.
func toolResult(req llmtest.Request, id string) string {
	for _, m := range req.Messages {
		for _, r := range m.ToolResults {
			if r.ToolCallID == id {
				return r.Content
			}
		}
	}
	return ""
}

const fact = "The quarterly report is due on the 5th of each quarter."

// A fact remembered in one run is in the prompt of a later run about it;
// being shown there does not reinforce it, the run citing its id does.
func TestRememberedFactIsRecalledIntoALaterRun(t *testing.T) {
	f := withStores(t)
	a := f.agent("Clerk", "memory")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "remember", Args: args(map[string]string{"text": fact})}),
		llmtest.Text("Noted."),
	)
	r1 := f.say(a, "Remember: the quarterly report is due on the 5th.")
	if r1.Status != run.Done {
		t.Fatalf("run 1: %s (%s)", r1.Status, r1.Error)
	}
	reqs := f.fake.Requests()
	if got := toolResult(reqs[1], "c1"); !strings.HasPrefix(got, "remembered [mem_") {
		t.Errorf("remember answered %q, want it to say what was stored", got)
	}
	if strings.Contains(reqs[0].System, fact) {
		t.Errorf("run 1's prompt holds the fact before it was remembered")
	}

	stored, _ := f.memory.List(context.Background(), a.ID, memory.ListOptions{})
	if len(stored) != 1 {
		t.Fatalf("after run 1: %d memories", len(stored))
	}
	// Shown, not used: no reinforcement.
	f.fake.Script(llmtest.Text("I will check."))
	f.sayInNewSession(a, "Is the quarterly report on track?")
	if m, _ := f.memory.Get(context.Background(), stored[0].ID); m.Recalls != 0 {
		t.Fatalf("a memory only shown in a prompt has %d recalls, want 0", m.Recalls)
	}
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c2", Name: "recall", Args: `{"query":"budget"}`}),
		llmtest.Text("The 5th (["+stored[0].ID+"]); as ["+stored[0].ID+"] says."))
	r2 := f.sayInNewSession(a, "When is the quarterly report due?")
	if r2.Status != run.Done {
		t.Fatalf("run 2: %s (%s)", r2.Status, r2.Error)
	}
	reqs = f.fake.Requests()
	first, second := reqs[3].System, reqs[4].System
	if !strings.Contains(first, "## What you remember") || !strings.Contains(first, "] "+fact) {
		t.Errorf("run 2's prompt lacks the remembered fact:\n%s", first)
	}
	if second != first {
		t.Errorf("run 2's later turn got another prompt; want the one recalled before its first turn")
	}

	list, err := f.memory.List(context.Background(), a.ID, memory.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("memories = %+v, %v; want one", list, err)
	}
	if m := list[0]; m.Source.RunID != r1.ID || m.Source.Step != 3 || m.Recalls != 1 {
		t.Errorf("got memory source %v, %d recalls; want %s#3 (input, model, tool call) and 1 use (run 2 cited it, twice in one answer)", m.Source, m.Recalls, r1.ID)
	}

	// Without the capability nothing is recalled.
	if _, err := f.agents.Update(context.Background(), a.ID, agent.Update{Capabilities: &[]string{}}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(llmtest.Text("No idea."))
	f.sayInNewSession(a, "When is the quarterly report due?")
	if sys := f.fake.Requests()[5].System; strings.Contains(sys, fact) {
		t.Errorf("an agent without the memory capability got memories in its prompt")
	}
}

// A skill the agent wrote in one run is in the next run's skill index, and
// load_skill returns its body.
func TestUpsertedSkillIsIndexedAndLoadedInALaterRun(t *testing.T) {
	f := withStores(t)
	a := f.agent("Clerk", "skills")
	md := "---\nname: quarterly-report\ndescription: Write the quarterly report. Use when a quarter closes.\n---\n# Steps\n1. Pull the numbers from shared/q.csv.\n"
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "upsert_skill", Args: args(map[string]string{"name": "quarterly-report", "skill_md": md})}),
		llmtest.Text("Saved the procedure."),
	)
	if r := f.say(a, "Write down how you did the report."); r.Status != run.Done {
		t.Fatalf("run 1: %s (%s)", r.Status, r.Error)
	}
	if strings.Contains(f.fake.Requests()[0].System, "## Your skills") {
		t.Errorf("run 1's prompt has a skill index before any skill exists")
	}

	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c2", Name: "load_skill", Args: `{"name":"quarterly-report"}`}),
		llmtest.Text("Done."),
	)
	if r := f.sayInNewSession(a, "The quarter closed, do the report."); r.Status != run.Done {
		t.Fatalf("run 2: %s (%s)", r.Status, r.Error)
	}
	reqs := f.fake.Requests()
	if sys := reqs[2].System; !strings.Contains(sys, "## Your skills") || !strings.Contains(sys, "- quarterly-report: Write the quarterly report. Use when a quarter closes.") {
		t.Errorf("run 2's prompt lacks the skill in its index:\n%s", sys)
	}
	if got := toolResult(reqs[3], "c2"); !strings.Contains(got, "1. Pull the numbers from shared/q.csv.") {
		t.Errorf("load_skill answered %q, want the skill's body", got)
	}
	if vs, _ := f.skills.Versions(context.Background(), a.ID, "quarterly-report"); len(vs) != 1 {
		t.Errorf("got %d versions, want 1", len(vs))
	}
}
