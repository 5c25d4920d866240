package run_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// models is the run.Models of the tests: a real registry (real SDKs) pointed
// at the fake model server, retrying without waiting.
type models struct {
	reg    *llm.Registry
	prices *llm.Prices
	prefer string
}

func (m *models) Pick(provider, model string) (llm.Provider, string, string, error) {
	if provider == "" {
		provider = m.prefer
	}
	p, err := m.reg.Get(provider)
	if err != nil {
		return nil, "", "", err
	}
	if model == "" {
		model = llm.DefaultModel(provider)
	}
	return p, provider, model, nil
}

func (m *models) Cost(model string, u llm.Usage) (float64, bool) { return m.prices.Cost(model, u) }

func noWait(ctx context.Context, d time.Duration) error { return ctx.Err() }

func newModels(t testing.TB, fake *llmtest.Server, provider string) *models {
	prices, err := llm.LoadPrices("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{Retry: llm.Retry{Max: 2, Sleep: noWait}}
	if fake != nil {
		cfg.AnthropicKey, cfg.AnthropicBaseURL = "test-key", fake.AnthropicURL()
		cfg.OpenAIKey, cfg.OpenAIBaseURL = "test-key", fake.OpenAIURL()
	}
	return &models{reg: llm.NewRegistry(cfg, nil), prices: prices, prefer: provider}
}

func openaiModels(t testing.TB, url string) *models {
	prices, err := llm.LoadPrices("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.Config{OpenAIKey: "test-key", OpenAIBaseURL: url, Retry: llm.Retry{Max: 2, Sleep: noWait}}
	return &models{reg: llm.NewRegistry(cfg, nil), prices: prices, prefer: "openai"}
}

type fixture struct {
	t      testing.TB
	db     *store.DB
	svc    *run.Service
	agents *agent.Service
	boxes  *box.Service
	box    box.Box
	fake   *llmtest.Server
	bus    *event.Bus
	dir    string
	// memory and skills, when set before serve, back those capabilities.
	memory *memory.Service
	skills *skill.Service
	// vars and notes, when set before serve, are the workspace's variables
	// and notifications.
	vars  run.Variables
	notes run.Notifier
	// apps, when set before serve, are the apps installed on the agents.
	apps *connector.Service
	// brain, when set before serve, is the workspace's Brain.
	brain *brain.Service
	// budgets, when set before serve, are the workspace's spend limits.
	budgets *budget.Service
}

func setup(t testing.TB, provider string, cfg run.Config) *fixture {
	t.Helper()
	f := base(t)
	var m run.Models = newModels(t, f.fake, provider)
	if provider == "none" {
		m = newModels(t, nil, "")
	}
	f.svc = f.serve(m, cfg)
	return f
}

// base is a workspace database with one box and a fake model server, and no
// run service yet.
func base(t testing.TB) *fixture {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(context.Background(), filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{t: t, db: db, bus: &event.Bus{}, dir: dir, fake: llmtest.New(t)}
	f.boxes = box.NewService(db, "ws", f.bus)
	f.agents = agent.NewService(db, filepath.Join(dir, "agents"), "ws", f.bus)
	os.MkdirAll(filepath.Join(dir, "shared"), 0o700)
	f.box, _ = f.boxes.Create(context.Background(), "Main")
	return f
}

// serve starts a run service with models until the test ends.
func (f *fixture) serve(m run.Models, cfg run.Config) *run.Service {
	svc := run.NewService(run.Deps{DB: f.db, Workspace: "ws", Agents: f.agents, Boxes: f.boxes, Models: m, Bus: f.bus,
		SharedDir: filepath.Join(f.dir, "shared"), SharedDB: filepath.Join(f.dir, "shared.db"),
		Memory: f.memory, Skills: f.skills, Vars: f.vars, Notifier: f.notes, Apps: f.apps, Brain: f.brain, Budgets: f.budgets}, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Serve(ctx); close(done) }()
	f.t.Cleanup(func() { cancel(); <-done })
	return svc
}

func (f *fixture) agent(name string, caps ...string) agent.Agent {
	f.t.Helper()
	if caps == nil {
		caps = []string{}
	}
	// Ask-first is off here: these tests are about running tools; the
	// approval cards have their own (human_test.go).
	a, err := f.agents.Create(context.Background(), agent.NewAgent{Name: name, BoxID: f.box.ID, Soul: "You are " + name + ".", Capabilities: caps,
		AskFirst: noAskFirst})
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

var noAskFirst = map[string]bool{"shell": false, "database": false, "web": false}

// say sends a chat message and waits for the run to end.
func (f *fixture) say(a agent.Agent, text string) run.Run {
	f.t.Helper()
	r := f.start(a, text)
	return f.wait(r.ID)
}

func (f *fixture) start(a agent.Agent, text string) run.Run {
	f.t.Helper()
	ctx := context.Background()
	sess, err := f.svc.ChatSession(ctx, a.ID)
	if err != nil {
		f.t.Fatal(err)
	}
	r, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceChat, text, run.StartOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) wait(id string) run.Run {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	r, err := f.svc.Wait(ctx, id)
	if err != nil {
		f.t.Fatalf("wait for run %s: %v (status %s)", id, err, r.Status)
	}
	return r
}

func (f *fixture) kinds(id string) string {
	steps, err := f.svc.Steps(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	var k []string
	for _, s := range steps {
		k = append(k, s.Kind)
	}
	return strings.Join(k, ",")
}

func TestTextAnswerBothProviders(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			f := setup(t, provider, run.Config{})
			a := f.agent("Helper")
			events, stop := f.bus.Subscribe()
			defer stop()
			f.fake.Script(llmtest.Reply{Chunks: []string{"Hel", "lo ", "there"}, Usage: llmtest.Usage{Input: 1000, Output: 200}})
			r := f.say(a, "hi")
			if r.Status != run.Done || r.Output != "Hello there" {
				t.Fatalf("run = %s %q (%s), want done with the streamed text", r.Status, r.Output, r.Error)
			}
			if got := f.kinds(r.ID); got != "input,model" {
				t.Errorf("steps = %s, want input,model", got)
			}
			if r.InputTokens != 1000 || r.OutputTokens != 200 || r.Provider != provider || r.Model != llm.DefaultModel(provider) {
				t.Errorf("usage %d/%d provider %s model %s", r.InputTokens, r.OutputTokens, r.Provider, r.Model)
			}
			if r.CostUSD <= 0 || !r.CostKnown {
				t.Errorf("cost = %v known=%v, want a price for %s", r.CostUSD, r.CostKnown, r.Model)
			}
			req := f.fake.Requests()[0]
			if !req.Stream || !strings.Contains(req.System, "You are Helper.") || !strings.Contains(req.System, "@helper") {
				t.Errorf("request: stream=%v system=%q; want streaming with the soul and handle", req.Stream, req.System)
			}
			var deltas []string
			timeout := time.After(waittest.Patience)
		collect:
			for {
				select {
				case c := <-events:
					if c.Kind == event.KindDelta && c.ID == r.ID {
						deltas = append(deltas, c.Text)
					}
					if c.Kind == "run.updated" && c.ID == r.ID && strings.Join(deltas, "") != "" {
						break collect
					}
				case <-timeout:
					break collect
				}
			}
			if strings.Join(deltas, "") != "Hello there" {
				t.Errorf("deltas = %q, want the text in pieces", deltas)
			}
		})
	}
}

func TestToolCallThenAnswer(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			f := setup(t, provider, run.Config{})
			a := f.agent("Writer", "files")
			f.fake.Script(
				llmtest.Tools(
					llmtest.ToolCall{ID: "c1", Name: "write_file", Args: `{"path":"notes.txt","content":"first"}`},
					llmtest.ToolCall{ID: "c2", Name: "write_file", Args: `{"path":"shared/team.txt","content":"second"}`},
				),
				llmtest.Text("Wrote both files."),
			)
			r := f.say(a, "write two files")
			if r.Status != run.Done || r.Output != "Wrote both files." {
				t.Fatalf("run = %s %q %q", r.Status, r.Output, r.Error)
			}
			if got := f.kinds(r.ID); got != "input,model,tool_call,tool_result,tool_call,tool_result,model" {
				t.Errorf("steps = %s", got)
			}
			if b, _ := os.ReadFile(filepath.Join(f.dir, "agents", a.ID, "files", "notes.txt")); string(b) != "first" {
				t.Errorf("own file = %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(f.dir, "shared", "team.txt")); string(b) != "second" {
				t.Errorf("shared file = %q", b)
			}
			reqs := f.fake.Requests()
			if len(reqs) != 2 || len(reqs[0].Tools) == 0 {
				t.Fatalf("requests = %d, tools offered = %d", len(reqs), len(reqs[0].Tools))
			}
			var results []llmtest.ToolResult
			for _, m := range reqs[1].Messages {
				results = append(results, m.ToolResults...)
			}
			if len(results) != 2 || results[0].ToolCallID != "c1" || results[1].ToolCallID != "c2" || results[0].IsError {
				t.Errorf("tool results sent back = %+v, want c1 and c2, not errors", results)
			}
		})
	}
}

func TestToolErrorsGoBackToTheModel(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	a := f.agent("Jailed", "files")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "read_file", Args: `{"path":"../../etc/passwd"}`},
			llmtest.ToolCall{ID: "c2", Name: "run_command", Args: `{"command":"id"}`}),
		llmtest.Text("Could not."),
	)
	r := f.say(a, "read it")
	if r.Status != run.Done {
		t.Fatalf("run = %s %q", r.Status, r.Error)
	}
	var results []llmtest.ToolResult
	for _, m := range f.fake.Requests()[1].Messages {
		results = append(results, m.ToolResults...)
	}
	// (OpenAI's wire format has no error flag on tool results; the text says it.)
	if len(results) != 2 || !strings.Contains(results[0].Content, "climbs out of its folder") || !strings.Contains(results[1].Content, "no tool named") {
		t.Errorf("results = %+v; want the jail refusal and an unknown-tool error (shell is off)", results)
	}
}

func TestProviderErrors(t *testing.T) {
	f := setup(t, "anthropic", run.Config{})
	a := f.agent("Flaky")
	f.fake.Script(llmtest.Error(429, "slow down"), llmtest.Text("ok after retry"))
	if r := f.say(a, "one"); r.Status != run.Done || r.Output != "ok after retry" {
		t.Errorf("429 then success: %s %q %q", r.Status, r.Output, r.Error)
	}
	f.fake.Script(llmtest.Error(500, "overloaded today"), llmtest.Error(500, "overloaded today"), llmtest.Error(500, "overloaded today"))
	r := f.say(a, "two")
	if r.Status != run.Failed || !strings.Contains(r.Error, "overloaded today") {
		t.Errorf("500 until failure: %s %q, want failed with the provider's message", r.Status, r.Error)
	}
	if got := f.kinds(r.ID); got != "input,error" {
		t.Errorf("steps = %s, want input,error", got)
	}
	if n := len(f.fake.Requests()); n != 5 {
		t.Errorf("requests = %d, want 2 + 3 (first try and 2 retries)", n)
	}
}

func TestNoProviderConfigured(t *testing.T) {
	f := setup(t, "none", run.Config{})
	a := f.agent("Lonely")
	r := f.say(a, "hello?")
	if r.Status != run.Failed || !strings.Contains(r.Error, "Settings → Models") || !strings.Contains(r.Error, "OLLAMA_HOST") {
		t.Errorf("no provider: %s %q, want failed saying how to add a key or start Ollama", r.Status, r.Error)
	}
}

func TestCancelStopsModelAndShell(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	a := f.agent("Slow", "shell")
	f.fake.Script(llmtest.Reply{Text: "never", Delay: 30 * time.Second})
	r := f.start(a, "think long")
	for len(f.fake.Requests()) == 0 { // the model call is under way
		time.Sleep(5 * time.Millisecond)
	}
	// The model would answer after 30 s and the command sleeps 30 s: a
	// cancel well before that (15 s, room for a busy machine) did not wait
	// for them.
	const promptly = 15 * time.Second
	began := time.Now()
	got, err := f.svc.Cancel(context.Background(), r.ID)
	if err != nil || got.Status != run.Cancelled || time.Since(began) > promptly {
		t.Errorf("cancel during model call: %s %v after %v", got.Status, err, time.Since(began))
	}

	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "s", Name: "run_command", Args: `{"command":"sleep 30"}`}))
	r = f.start(a, "sleep")
	waitStep(t, f, r.ID, run.StepToolCall)
	time.Sleep(100 * time.Millisecond)
	began = time.Now()
	got, _ = f.svc.Cancel(context.Background(), r.ID)
	if got.Status != run.Cancelled || time.Since(began) > promptly {
		t.Errorf("cancel during shell: %s after %v, want cancelled before the command ends", got.Status, time.Since(began))
	}
	if k := f.kinds(r.ID); !strings.HasSuffix(k, "tool_call,tool_result,cancel") {
		t.Errorf("steps = %s, want the interrupted tool result then cancel", k)
	}
}

func TestStepLimit(t *testing.T) {
	f := setup(t, "openai", run.Config{MaxSteps: 6})
	a := f.agent("Looper", "files")
	var replies []llmtest.Reply
	for i := 0; i < 10; i++ {
		replies = append(replies, llmtest.Tools(llmtest.ToolCall{Name: "list_files", Args: `{}`}))
	}
	f.fake.Script(replies...)
	r := f.say(a, "loop")
	if r.Status != run.Failed || !strings.Contains(r.Error, "limit of 6 steps") {
		t.Errorf("step limit: %s %q", r.Status, r.Error)
	}
}

func TestTimeLimit(t *testing.T) {
	f := setup(t, "openai", run.Config{MaxDuration: 300 * time.Millisecond})
	a := f.agent("Late")
	f.fake.Script(llmtest.Reply{Text: "late", Delay: 10 * time.Second})
	r := f.say(a, "hurry")
	if r.Status != run.Failed || !strings.Contains(r.Error, "time limit") {
		t.Errorf("time limit: %s %q", r.Status, r.Error)
	}
}

func TestSessionRunsInOrderAndHistory(t *testing.T) {
	f := setup(t, "anthropic", run.Config{})
	a := f.agent("Memo")
	f.fake.Script(llmtest.Reply{Text: "first answer", Delay: 200 * time.Millisecond}, llmtest.Text("second answer"))
	r1 := f.start(a, "first question")
	r2 := f.start(a, "second question")
	d1, d2 := f.wait(r1.ID), f.wait(r2.ID)
	if d1.Output != "first answer" || d2.Output != "second answer" || d2.StartedAt.Before(*d1.EndedAt) {
		t.Errorf("runs of one session overlapped or misordered: %+v %+v", d1, d2)
	}
	msgs := f.fake.Requests()[1].Messages
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Role+":"+m.Text)
	}
	if got := strings.Join(texts, "|"); got != "user:first question|assistant:first answer|user:second question" {
		t.Errorf("history sent = %s", got)
	}
}

func TestSessionsRunConcurrently(t *testing.T) {
	f := setup(t, "openai", run.Config{Workers: 4})
	// Each model call waits until all four runs are at the model at once
	// (or a minute passes, which the check below then reports): overlap is
	// seen, not inferred from timings a busy machine stretches.
	var mu sync.Mutex
	inFlight, most := 0, 0
	all := make(chan struct{})
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight == 4 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(time.Minute):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
		return llmtest.Text("done")
	})
	var runs []run.Run
	for i := 0; i < 4; i++ {
		runs = append(runs, f.start(f.agent("Worker "+string(rune('A'+i))), "go"))
	}
	for _, r := range runs {
		if got := f.wait(r.ID); got.Status != run.Done {
			t.Errorf("run %s: %s %s", r.ID, got.Status, got.Error)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if most != 4 {
		t.Errorf("at most %d of 4 sessions' runs were at the model at once, want 4: they did not run concurrently", most)
	}
}

func TestCallAgent(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	boss := f.agent("Boss", "agents")
	f.agent("Clerk", "agents")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "k", Name: "call_agent", Args: `{"handle":"@clerk","message":"count the boxes"}`}),
		// the clerk tries to call the boss back: a cycle, refused
		llmtest.Tools(llmtest.ToolCall{ID: "back", Name: "call_agent", Args: `{"handle":"boss","message":"why?"}`}),
		llmtest.Text("There are 3 boxes."),
		llmtest.Text("The clerk says 3."),
	)
	r := f.say(boss, "ask the clerk")
	if r.Status != run.Done || r.Output != "The clerk says 3." {
		t.Fatalf("boss run: %s %q %q", r.Status, r.Output, r.Error)
	}
	children, _ := f.svc.Children(context.Background(), r.ID)
	if len(children) != 1 || children[0].Output != "There are 3 boxes." || children[0].Source != run.SourceAgent || children[0].Depth != 1 {
		t.Fatalf("children = %+v", children)
	}
	steps, _ := f.svc.Steps(context.Background(), r.ID)
	var res run.ToolResultData
	for _, s := range steps {
		if s.Kind == run.StepToolResult {
			json.Unmarshal(s.Data, &res)
		}
	}
	if res.ChildRunID != children[0].ID || res.Output != "There are 3 boxes." {
		t.Errorf("tool result = %+v, want the clerk's answer linked to its run", res)
	}
	childSteps, _ := f.svc.Steps(context.Background(), children[0].ID)
	var back run.ToolResultData
	for _, s := range childSteps {
		if s.Kind == run.StepToolResult {
			json.Unmarshal(s.Data, &back)
		}
	}
	if !back.IsError || !strings.Contains(back.Output, "cycle") {
		t.Errorf("call back to the boss = %+v, want a cycle refusal", back)
	}
	var input run.InputData
	json.Unmarshal(childSteps[0].Data, &input)
	if input.From != "@boss" {
		t.Errorf("child input from %q, want @boss", input.From)
	}
}

func TestCompaction(t *testing.T) {
	f := setup(t, "anthropic", run.Config{HistoryBudget: 50})
	a := f.agent("Talker")
	long := strings.Repeat("words ", 60)
	f.fake.Script(llmtest.Text("answer one "+long), llmtest.Text("answer two "+long))
	f.say(a, "question one "+long)
	f.say(a, "question two "+long)
	f.fake.Script(llmtest.Text("SUMMARY: asked one and two"), llmtest.Text("answer three"))
	r := f.say(a, "question three")
	if r.Status != run.Done || r.Output != "answer three" {
		t.Fatalf("run: %s %q %q", r.Status, r.Output, r.Error)
	}
	if k := f.kinds(r.ID); k != "input,compact,model" {
		t.Errorf("steps = %s, want a compaction before the model turn", k)
	}
	reqs := f.fake.Requests()
	last := reqs[len(reqs)-1]
	var texts []string
	for _, m := range last.Messages {
		texts = append(texts, m.Text)
	}
	joined := strings.Join(texts, "|")
	if !strings.Contains(joined, "SUMMARY: asked one and two") || strings.Contains(joined, "question one") || !strings.Contains(joined, "question two") {
		t.Errorf("after compaction the model saw %q; want the summary, run two verbatim, not run one", joined)
	}
}

func TestStartRejects(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	a := f.agent("Picky")
	b := f.agent("Other")
	sess, _ := f.svc.ChatSession(context.Background(), a.ID)
	ctx := context.Background()
	if _, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceChat, "   ", run.StartOptions{}); err == nil {
		t.Error("empty message accepted")
	}
	if _, err := f.svc.Start(ctx, b.ID, sess.ID, run.SourceChat, "hi", run.StartOptions{}); err == nil {
		t.Error("message to another agent's session accepted")
	}
	if _, err := f.svc.Start(ctx, a.ID, "ses_nope", run.SourceChat, "hi", run.StartOptions{}); err == nil {
		t.Error("unknown session accepted")
	}
}

func waitStep(t *testing.T, f *fixture, id, kind string) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if strings.Contains(f.kinds(id), kind) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	r, _ := f.svc.Get(context.Background(), id)
	t.Fatalf("run %s never recorded a %s step (has %s; status %s; %d model requests, %d scripted left)", id, kind, f.kinds(id), r.Status, len(f.fake.Requests()), f.fake.Remaining())
}

func TestCutStreamFailsTheRun(t *testing.T) {
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			f := setup(t, provider, run.Config{})
			a := f.agent("Cut")
			f.fake.Script(llmtest.Reply{Chunks: []string{"partial ", "answer ", "never ", "ends"}, Cut: true, CutAfter: 2})
			r := f.say(a, "talk")
			if r.Status != run.Failed || !strings.Contains(r.Error, "cut") {
				t.Errorf("cut stream: %s %q, want failed saying the stream was cut", r.Status, r.Error)
			}
			if n := len(f.fake.Requests()); n != 1 {
				t.Errorf("requests = %d: a stream cut after output must not be retried", n)
			}
		})
	}
}
