package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// withBudgets is a runtime with real budgets and recorded notifications.
func withBudgets(t *testing.T, cfg run.Config) (*fixture, *notes) {
	t.Helper()
	f := base(t)
	n := &notes{}
	f.notes = n
	f.budgets = budget.NewService(f.db, "ws", f.bus)
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), cfg)
	return f, n
}

func ptr[T any](v T) *T { return &v }

// long is a reply that would run far past any cap: the fake cuts it at the
// request's max_tokens.
func long(input int) llmtest.Reply {
	return llmtest.Reply{Text: strings.Repeat("spend ", 20000), Usage: llmtest.Usage{Input: input, Output: 100000}}
}

func (f *fixture) startIn(a agent.Agent, text string) run.Run {
	f.t.Helper()
	ctx := context.Background()
	sess, err := f.svc.NewSession(ctx, a.ID, run.SourceAPI, "")
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceAPI, text, run.StartOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) get(id string) run.Run {
	f.t.Helper()
	r, err := f.svc.Get(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func tokens(r run.Run) int {
	return r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheWriteTokens
}

// TestBudgetCapsTheReplyAtWhatIsLeft: a reply that would pass the run's
// token limit is cut at the cap the model received, and the run stays
// within its limit.
func TestBudgetCapsTheReplyAtWhatIsLeft(t *testing.T) {
	f, _ := withBudgets(t, run.Config{})
	a := f.agent("Thrifty")
	if _, err := f.budgets.SetAgent(context.Background(), a.ID, budget.Update{RunTokens: ptr[int64](3000)}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(long(400))
	r := f.say(a, "write a lot")
	if r.Status != run.Done {
		t.Fatalf("run %s: %s", r.Status, r.Error)
	}
	got := f.fake.Requests()[0].MaxTokens
	// The cap is the limit less the estimated input, which follows the
	// prompt's length (the date in it: a Friday is two letters shorter than
	// a Thursday); the reply's 400 input tokens must still fit.
	if got <= 256 || got > 3000-400 {
		t.Errorf("max_tokens received = %d; want it capped at most at what the limit leaves (3000 less the input)", got)
	}
	if r.OutputTokens != got {
		t.Errorf("output tokens = %d, want the cap %d", r.OutputTokens, got)
	}
	if tokens(r) > 3000 {
		t.Errorf("the run used %d tokens, past its limit of 3000", tokens(r))
	}
}

// TestBudgetMoneyLimitCapsTheReply: a limit in USD caps the answer by the
// model's output price; with no price known only token limits bind.
func TestBudgetMoneyLimitCapsTheReply(t *testing.T) {
	f, _ := withBudgets(t, run.Config{})
	a := f.agent("Careful")
	if _, err := f.budgets.SetAgent(context.Background(), a.ID, budget.Update{RunUSD: ptr(0.03)}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(long(300))
	r := f.say(a, "write a lot")
	if r.Status != run.Done || !r.CostKnown {
		t.Fatalf("run %s (cost known %v): %s", r.Status, r.CostKnown, r.Error)
	}
	if got := f.fake.Requests()[0].MaxTokens; got >= 4096 || got <= 256 {
		t.Errorf("max_tokens received = %d; want it capped by the $0.03 limit", got)
	}
	if r.CostUSD > 0.03 {
		t.Errorf("the run cost $%.5f, past its limit of $0.03", r.CostUSD)
	}

	// A model with no price: the money limit cannot price it, so the
	// answer is not capped by it.
	unknown, err := f.agents.Create(context.Background(), agent.NewAgent{Name: "Local", BoxID: f.box.ID, Model: "my-local-model", Capabilities: []string{}, AskFirst: noAskFirst})
	if err != nil {
		t.Fatal(err)
	}
	f.budgets.SetAgent(context.Background(), unknown.ID, budget.Update{RunUSD: ptr(0.0001), RunTokens: ptr[int64](2000)})
	f.fake.Script(long(100))
	r = f.say(unknown, "hi")
	if r.Status != run.Done || r.CostKnown {
		t.Fatalf("run %s (cost known %v): %s", r.Status, r.CostKnown, r.Error)
	}
	reqs := f.fake.Requests()
	if got := reqs[len(reqs)-1].MaxTokens; got <= 256 || got >= 2000 || tokens(r) > 2000 {
		t.Errorf("unknown price: max_tokens %d, used %d; want the token limit of 2000 to cap it", got, tokens(r))
	}
}

// TestBudgetCardAnsweredEachWay: at the agent's daily limit a run pauses on
// a budget card saying what was spent against what limit, a notification
// goes out, and each answer does what it says: more for this run resumes
// it, a higher daily limit resumes it, stop ends it.
func TestBudgetCardAnsweredEachWay(t *testing.T) {
	f, n := withBudgets(t, run.Config{})
	ctx := context.Background()
	a := f.agent("Daily")
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{DayTokens: ptr[int64](2000)}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(long(100))
	first := f.say(a, "spend the day")
	if first.Status != run.Done || tokens(first) > 2000 {
		t.Fatalf("first run %s, %d tokens: %s", first.Status, tokens(first), first.Error)
	}
	calls := len(f.fake.Requests())

	pauseOf := func(r run.Run) (run.Pause, pause.BudgetRequest) {
		t.Helper()
		if r.Status != run.Paused {
			t.Fatalf("run %s is %s, want paused on a budget card", r.ID, r.Status)
		}
		p := f.openPause(r.ID)
		if p.Kind != pause.Budget {
			t.Fatalf("card kind %q, want budget", p.Kind)
		}
		req, err := pause.Decode[pause.BudgetRequest](p.Request)
		if err != nil {
			t.Fatal(err)
		}
		return p, req
	}

	// Allow more for this run.
	second := f.say(a, "and more")
	p, req := pauseOf(second)
	if req.Scope != pause.ScopeAgent || req.Period != pause.PeriodDay || req.Unit != pause.UnitTokens || req.Limit != 2000 ||
		req.Spent != float64(tokens(first)) || req.Day == "" || req.SuggestMore <= 0 || req.SuggestLimit <= 2000 {
		t.Errorf("budget card = %+v; want the agent's daily 2000 tokens against %d spent", req, tokens(first))
	}
	if len(f.fake.Requests()) != calls {
		t.Errorf("the model was called at the limit")
	}
	if !waitNotice(n, p.ID) {
		t.Errorf("no notification for the budget card; got %+v", n.list())
	}
	f.fake.Script(llmtest.Text("done with the extra"))
	t.Logf("budget card: %s", req.Describe())
	second = f.answer(p, fmt.Sprintf(`{"choice": "allow", "amount": %v}`, req.SuggestMore))
	if second.Status != run.Done || second.Output != "done with the extra" {
		t.Fatalf("after allow: %s %q %s", second.Status, second.Output, second.Error)
	}
	reqs := f.fake.Requests()
	if got := reqs[len(reqs)-1].MaxTokens; float64(got) > req.SuggestMore {
		t.Errorf("after allowing %v more, max_tokens = %d", req.SuggestMore, got)
	}
	if second = f.get(second.ID); float64(tokens(second)) > 2000+req.SuggestMore-req.Spent {
		t.Errorf("the run used %d tokens, past what was allowed", tokens(second))
	}

	// The allowance was this run's only: the next run stops again; raise
	// the daily limit.
	third := f.say(a, "again")
	p, _ = pauseOf(third)
	f.fake.Script(llmtest.Text("done under the new limit"))
	third = f.answer(p, `{"choice": "raise", "amount": 100000}`)
	if third.Status != run.Done || third.Output != "done under the new limit" {
		t.Fatalf("after raise: %s %q %s", third.Status, third.Output, third.Error)
	}
	if l, _ := f.budgets.Agent(ctx, a.ID); l.DayTokens != 100000 {
		t.Errorf("daily limit = %d, want raised to 100000", l.DayTokens)
	}

	// Stop ends the run without another model call.
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{DayTokens: ptr[int64](10)}); err != nil {
		t.Fatal(err)
	}
	fourth := f.say(a, "one more")
	p, _ = pauseOf(fourth)
	calls = len(f.fake.Requests())
	fourth = f.answer(p, `{"choice": "stop"}`)
	if fourth.Status != run.Cancelled || len(f.fake.Requests()) != calls {
		t.Fatalf("after stop: %s, %d model calls (want cancelled, none)", fourth.Status, len(f.fake.Requests())-calls)
	}

	// A bad answer says what to fix.
	fifth := f.say(a, "last")
	p, _ = pauseOf(fifth)
	for body, want := range map[string]string{
		`{"choice": "raise", "amount": 5}`: "above what was already spent",
		`{"choice": "allow"}`:              "above 0",
		`{"choice": "maybe"}`:              "unknown",
	} {
		if _, err := f.svc.Answer(ctx, p.ID, json.RawMessage(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("answer %s: %v, want an error saying %q", body, err, want)
		}
	}
}

func waitNotice(n *notes, pauseID string) bool {
	for _, x := range n.list() {
		if x.PauseID == pauseID && x.Kind == pause.Budget {
			return true
		}
	}
	return false
}

// TestBudgetOtherRunsQueueBehindTheCard: while one run of an agent waits on
// its daily budget card, the agent's other runs wait in the queue, not
// lost, and run once the limit is raised.
func TestBudgetOtherRunsQueueBehindTheCard(t *testing.T) {
	f, _ := withBudgets(t, run.Config{})
	ctx := context.Background()
	a := f.agent("Queued")
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{DayTokens: ptr[int64](10)}); err != nil {
		t.Fatal(err)
	}
	var runs []run.Run
	for i := range 3 {
		runs = append(runs, f.startIn(a, fmt.Sprintf("job %d", i)))
	}
	var card run.Pause
	waittest.Until(t, "one run on a budget card, the others queued", func() bool {
		paused, queued := 0, 0
		for _, r := range runs {
			switch f.get(r.ID).Status {
			case run.Paused:
				paused++
			case run.Queued:
				queued++
			}
		}
		ps, _ := f.svc.Pauses(ctx, run.PauseFilter{AgentID: a.ID, Status: pause.Open})
		if len(ps) == 1 {
			card = ps[0]
		}
		return paused == 1 && queued == 2 && len(ps) == 1
	})
	if n := len(f.fake.Requests()); n != 0 {
		t.Errorf("%d model calls past the limit", n)
	}
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	if _, err := f.svc.Answer(ctx, card.ID, json.RawMessage(`{"choice": "raise", "amount": 1000000}`)); err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if got := f.wait(r.ID); got.Status != run.Done {
			t.Errorf("run %s: %s %s", r.ID, got.Status, got.Error)
		}
	}
}

// TestBudgetConcurrentRunsDoNotOverrun: many runs of one agent at once,
// each asking for far more than is left, never together pass its daily
// limit: each call reserves its worst case before it is sent.
func TestBudgetConcurrentRunsDoNotOverrun(t *testing.T) {
	f, _ := withBudgets(t, run.Config{Workers: 8})
	ctx := context.Background()
	a := f.agent("Busy")
	const limit = 12000
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{DayTokens: ptr[int64](limit)}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	inFlight, most := 0, 0
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(30 * time.Millisecond) // hold the call open so others overlap
		mu.Lock()
		inFlight--
		mu.Unlock()
		return long(200)
	})
	var runs []run.Run
	for i := range 8 {
		runs = append(runs, f.startIn(a, fmt.Sprintf("job %d", i)))
	}
	waittest.Until(t, "every run done, or waiting on the budget", func() bool {
		for _, r := range runs {
			if st := f.get(r.ID).Status; st == run.Running || (st == run.Queued && !hasOpenBudget(f, a.ID)) {
				return false
			}
		}
		return true
	})
	total, done := 0, 0
	for _, r := range runs {
		got := f.get(r.ID)
		total += tokens(got)
		if got.Status == run.Done {
			done++
		}
	}
	if total > limit {
		t.Errorf("runs together used %d tokens, past the daily limit of %d", total, limit)
	}
	if done == 0 || done == len(runs) {
		t.Errorf("%d of %d runs done; want some within the limit and the rest stopped at it", done, len(runs))
	}
	t.Logf("%d runs done, %d tokens of %d, at most %d calls at once", done, total, limit, most)
}

func hasOpenBudget(f *fixture, agentID string) bool {
	ps, _ := f.svc.Pauses(context.Background(), run.PauseFilter{AgentID: agentID, Status: pause.Open})
	return len(ps) > 0
}

// TestBudgetHoldsCompaction: the summary call that compacts a long session
// is a model call like a turn: its max_tokens is capped by the budget, and
// with nothing left the run pauses on the card before summarising.
func TestBudgetHoldsCompaction(t *testing.T) {
	f := base(t)
	f.notes = &notes{}
	f.budgets = budget.NewService(f.db, "ws", f.bus)
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{HistoryBudget: 50})
	ctx := context.Background()
	a := f.agent("Talker")
	words := strings.Repeat("words ", 60)
	f.fake.Script(llmtest.Text("answer one "+words), llmtest.Text("answer two "+words))
	f.say(a, "question one "+words)
	f.say(a, "question two "+words)
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{RunTokens: ptr[int64](1500)}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(llmtest.Text("SUMMARY: asked one and two"), llmtest.Text("answer three"))
	r := f.say(a, "question three")
	if r.Status != run.Done || f.kinds(r.ID) != "input,compact,model" {
		t.Fatalf("run %s with steps %s: %s", r.Status, f.kinds(r.ID), r.Error)
	}
	reqs := f.fake.Requests()
	compact := reqs[len(reqs)-2]
	if !strings.Contains(compact.System, "summaries") || compact.MaxTokens >= 2048 || compact.MaxTokens < 256 {
		t.Errorf("compaction call: system %q, max_tokens %d; want the summary capped below its 2048 by the budget", compact.System, compact.MaxTokens)
	}
	if tokens(r) > 1500 {
		t.Errorf("the run used %d tokens, past its limit of 1500", tokens(r))
	}

	// With too little left even to summarise, the card comes first.
	if _, err := f.budgets.SetAgent(ctx, a.ID, budget.Update{RunTokens: ptr[int64](100)}); err != nil {
		t.Fatal(err)
	}
	calls := len(f.fake.Requests())
	r = f.say(a, "question four "+words)
	if r.Status != run.Paused || len(f.fake.Requests()) != calls {
		t.Fatalf("run %s after %d calls; want paused on the budget card before any call", r.Status, len(f.fake.Requests())-calls)
	}
	if p := f.openPause(r.ID); p.Kind != pause.Budget {
		t.Errorf("card kind %q", p.Kind)
	}
}

// TestBudgetRaiseTellsTheLimitsOwner: raising the workspace's daily limit
// on a card publishes budget.updated for the workspace (what the
// workspace's budget form and chart listen to), not for the agent.
func TestBudgetRaiseTellsTheLimitsOwner(t *testing.T) {
	f, _ := withBudgets(t, run.Config{})
	ctx := context.Background()
	a := f.agent("Shared")
	if _, err := f.budgets.SetWorkspace(ctx, budget.Update{DayTokens: ptr[int64](10)}); err != nil {
		t.Fatal(err)
	}
	r := f.say(a, "spend")
	if r.Status != run.Paused {
		t.Fatalf("run is %s, want paused on the workspace's budget card", r.Status)
	}
	p := f.openPause(r.ID)
	changes, stop := f.bus.Subscribe()
	defer stop()
	f.fake.Script(llmtest.Text("done"))
	if r = f.answer(p, `{"choice": "raise", "amount": 100000}`); r.Status != run.Done {
		t.Fatalf("after raise: %s %s", r.Status, r.Error)
	}
	var scopes []string
	for done := false; !done; {
		select {
		case c := <-changes:
			if c.Kind == "budget.updated" {
				scopes = append(scopes, fmt.Sprintf("%q", c.ID))
			}
		default:
			done = true
		}
	}
	if strings.Join(scopes, ",") != `""` {
		t.Errorf("budget.updated for %v, want once for the workspace (\"\")", scopes)
	}
}
