package rerunagent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// The Rerun agent's model calls are held to the workspace's budget like any
// agent's (wired by the workspace): a run stays within it, and at the limit
// the next one stops on a budget card before calling the model. (The cap
// itself is tested in package run, where the prompt is small enough to make
// it bind.)
func TestRerunAgentIsHeldToTheWorkspaceBudget(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	a := rerunOf(t, w)
	// Its prompt and the API tools are large: leave room for one capped answer.
	var limit int64 = 60000
	if _, err := w.Budgets.SetWorkspace(ctx, budget.Update{DayTokens: &limit}); err != nil {
		t.Fatal(err)
	}
	fake.Script(llmtest.Reply{Text: strings.Repeat("plan ", 40000), Usage: llmtest.Usage{Input: 500, Output: 1 << 20}})
	r := ask(t, w, a, "write me a long plan")
	if r.Status != run.Done {
		t.Fatalf("first run %s: %s", r.Status, r.Error)
	}
	got := fake.Requests()[0].MaxTokens
	if got <= 0 || got > 4096 || r.InputTokens+r.OutputTokens > int(limit) {
		t.Fatalf("max_tokens %d, used %d of %d", got, r.InputTokens+r.OutputTokens, limit)
	}
	// Spend the rest of the day's budget from outside, then ask again.
	limit = int64(r.InputTokens + r.OutputTokens + 10)
	if _, err := w.Budgets.SetWorkspace(ctx, budget.Update{DayTokens: &limit}); err != nil {
		t.Fatal(err)
	}
	r = ask(t, w, a, "and another")
	if r.Status != run.Paused {
		t.Fatalf("second run %s, want paused on the budget card", r.Status)
	}
	ps, err := w.Runs.Pauses(ctx, run.PauseFilter{RunID: r.ID, Status: pause.Open})
	if err != nil || len(ps) != 1 || ps[0].Kind != pause.Budget {
		t.Fatalf("cards = %+v (%v), want one budget card", ps, err)
	}
	if len(fake.Requests()) != 1 {
		t.Errorf("%d model calls, want none past the limit", len(fake.Requests())-1)
	}
}
