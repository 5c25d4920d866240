package run_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// notes records the notices the runtime raises.
type notes struct {
	mu      sync.Mutex
	got     []run.Notice
	handled []string
}

func (n *notes) Notify(_ context.Context, x run.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.got = append(n.got, x)
	return nil
}

func (n *notes) HandlePause(_ context.Context, id string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handled = append(n.handled, id)
	return nil
}

func (n *notes) list() []run.Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]run.Notice(nil), n.got...)
}

// hitl is a runtime with real variables (sealed in the workspace database)
// and recorded notifications.
func hitl(t *testing.T) (*fixture, *secret.Variables, *notes) {
	t.Helper()
	f, vars, n := hitlFixture(t)
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{})
	return f, vars, n
}

// hitlFixture is hitl's fixture before any service serves it, for a test
// that serves its own (two services on one database would both take its
// runs).
func hitlFixture(t *testing.T) (*fixture, *secret.Variables, *notes) {
	t.Helper()
	f := base(t)
	vars := f.variables()
	n := &notes{}
	f.vars, f.notes = vars, n
	return f, vars, n
}

// variables are real variables sealed in the workspace database.
func (f *fixture) variables() *secret.Variables {
	f.t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secret.NewBox(key)
	if err != nil {
		f.t.Fatal(err)
	}
	vars, err := secret.NewVariables(f.db, box, "ws", f.bus)
	if err != nil {
		f.t.Fatal(err)
	}
	return vars
}

// careful makes an agent whose ask-first switches are the defaults.
func (f *fixture) careful(name string, caps ...string) agent.Agent {
	f.t.Helper()
	a, err := f.agents.Create(context.Background(), agent.NewAgent{Name: name, BoxID: f.box.ID, Capabilities: caps})
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// openPause returns the run's one open pause.
func (f *fixture) openPause(runID string) run.Pause {
	f.t.Helper()
	ps, err := f.svc.Pauses(context.Background(), run.PauseFilter{RunID: runID, Status: pause.Open})
	if err != nil || len(ps) != 1 {
		f.t.Fatalf("open pauses of %s = %d (%v), want 1", runID, len(ps), err)
	}
	return ps[0]
}

func (f *fixture) answer(p run.Pause, body string) run.Run {
	f.t.Helper()
	if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(body)); err != nil {
		f.t.Fatalf("answer %s: %v", p.ID, err)
	}
	return f.wait(p.RunID)
}

// lastToolResult is the content of the tool result the model got last.
func lastToolResult(fake *llmtest.Server, id string) (string, bool) {
	reqs := fake.Requests()
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == id {
				return tr.Content, tr.IsError
			}
		}
	}
	return "", false
}

func TestQuestionPause(t *testing.T) {
	f, _, n := hitl(t)
	a := f.careful("Planner", "human")
	f.fake.Script(
		llmtest.Reply{Text: "Two things first.", ToolCalls: []llmtest.ToolCall{
			{ID: "q1", Name: "ask_question", Args: `{"questions":[{"question":"Which day?","options":["Monday","Tuesday"]},{"question":"How long?","options":["30 min","1 h"]}]}`},
			{ID: "q2", Name: "ask_question", Args: `{"questions":[{"question":"And a third thing?"}]}`},
		}},
		llmtest.Text("Booked Tuesday for 1 h."),
	)
	r := f.say(a, "book a meeting")
	if r.Status != run.Paused || r.Output != "Two things first." {
		t.Fatalf("run = %s %q, want paused with the agent's last message as output", r.Status, r.Output)
	}
	if got := f.kinds(r.ID); got != "input,model,tool_call,tool_call,tool_result,pause" {
		t.Fatalf("steps = %s", got)
	}
	p := f.openPause(r.ID)
	if p.Kind != pause.Question || p.ToolCallID != "q1" || p.Automated {
		t.Fatalf("pause = %+v", p)
	}
	// The second card of the turn was refused, not stacked.
	steps, _ := f.svc.Steps(context.Background(), r.ID)
	var refused run.ToolResultData
	json.Unmarshal(steps[4].Data, &refused)
	if refused.ID != "q2" || !refused.IsError || !strings.Contains(refused.Output, "one at a time") {
		t.Fatalf("second card result = %+v", refused)
	}
	if got := n.list(); len(got) != 1 || got[0].Kind != "question" || got[0].PauseID != p.ID || got[0].Title != "Has 2 questions for you" {
		t.Fatalf("notices = %+v", got)
	}

	// A wrong answer is refused with what to fix and changes nothing.
	_, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"answers":["Tuesday"]}`))
	if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "one answer per question") {
		t.Fatalf("short answer: %v", err)
	}
	if still := f.openPause(r.ID); still.ID != p.ID {
		t.Fatal("the pause changed after a refused answer")
	}

	done := f.answer(p, `{"answers":["Tuesday","1 h"]}`)
	if done.Status != run.Done || done.Output != "Booked Tuesday for 1 h." {
		t.Fatalf("after the answer: %s %q %s", done.Status, done.Output, done.Error)
	}
	got, isErr := lastToolResult(f.fake, "q1")
	if isErr || !strings.Contains(got, "Which day?\n   → Tuesday") || !strings.Contains(got, "How long?\n   → 1 h") {
		t.Fatalf("the model got %q (error %v), want both answers", got, isErr)
	}
	if got := f.kinds(r.ID); got != "input,model,tool_call,tool_call,tool_result,pause,tool_result,resume,model" {
		t.Fatalf("steps after resume = %s", got)
	}
	if len(n.handled) != 1 || n.handled[0] != p.ID {
		t.Fatalf("handled notices = %v, want the pause's", n.handled)
	}
	if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"answers":["a","b"]}`)); !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("second answer: %v, want a conflict", err)
	}
}

func TestAskFirstApproval(t *testing.T) {
	f, _, _ := hitl(t)
	a := f.careful("Operator", "shell")
	dir := filepath.Join(f.dir, "shared") // commands write only their agent's and the shared folder
	touch := func(id, name string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "run_command", Args: `{"command":"touch ` + filepath.Join(dir, name) + `"}`}
	}
	f.fake.Script(
		llmtest.Tools(touch("c1", "one"), touch("c2", "two"), touch("c3", "three")),
		llmtest.Tools(touch("c4", "two")), // tries the declined one again
		llmtest.Text("Done with one and three."),
	)
	r := f.say(a, "make three files")
	if r.Status != run.Paused {
		t.Fatalf("run = %s (%s), want paused for approval", r.Status, r.Error)
	}
	for _, name := range []string{"one", "two", "three"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s was created before approval", name)
		}
	}
	p := f.openPause(r.ID)
	var req pause.ApprovalRequest
	json.Unmarshal(p.Request, &req)
	if p.Kind != pause.Approval || !req.Policy || len(req.Items) != 3 || req.Items[0].ID != "c1" || req.Items[0].Kind != "command" ||
		!strings.HasSuffix(req.Items[0].Detail, "/one") {
		t.Fatalf("approval card = %+v", req)
	}
	done := f.answer(p, `{"decisions":[{"id":"c1","approved":true},{"id":"c2","approved":false,"note":"not two"},{"id":"c3","approved":true}]}`)
	if done.Status != run.Done {
		t.Fatalf("after approval: %s %s", done.Status, done.Error)
	}
	for name, want := range map[string]bool{"one": true, "two": false, "three": true} {
		_, err := os.Stat(filepath.Join(dir, name))
		if (err == nil) != want {
			t.Errorf("file %s exists = %v, want %v", name, err == nil, want)
		}
	}
	steps, _ := f.svc.Steps(context.Background(), r.ID)
	decisions := map[string]string{}
	for _, st := range steps {
		if st.Kind == run.StepToolResult {
			var d run.ToolResultData
			json.Unmarshal(st.Data, &d)
			decisions[d.ID] = d.Decision
			if d.ID == "c4" && (!d.IsError || !strings.Contains(d.Output, "declined exactly this action")) {
				t.Errorf("retrying the declined command gave %+v, want a refusal", d)
			}
		}
	}
	if decisions["c1"] != "approved" || decisions["c2"] != "declined" || decisions["c3"] != "approved" {
		t.Errorf("decisions = %v", decisions)
	}
	reqs := f.fake.Requests()
	var toModel string
	for _, m := range reqs[1].Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == "c2" {
				toModel = tr.Content
			}
		}
	}
	if !strings.Contains(toModel, "declined") || !strings.Contains(toModel, "not two") {
		t.Errorf("the model got %q for the declined item", toModel)
	}
}

func TestRequestApprovalRunsOnlyApprovedItems(t *testing.T) {
	f, _, _ := hitl(t)
	a := f.careful("Cleaner", "human", "shell")
	dir := filepath.Join(f.dir, "shared") // commands write only their agent's and the shared folder
	item := func(name string) string {
		return `{"title":"Create ` + name + `","kind":"command","detail":"touch ` + name + `","tool":"run_command","input":{"command":"touch ` + filepath.Join(dir, name) + `"}}`
	}
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "ap", Name: "request_approval", Args: `{"title":"Files","items":[` + item("a") + `,` + item("b") + `,{"title":"Tell Bob"}]}`}),
		llmtest.Text("ok"),
	)
	r := f.say(a, "clean up")
	p := f.openPause(r.ID)
	if done := f.answer(p, `{"decisions":[{"id":"a1","approved":true},{"id":"a2","approved":false},{"id":"a3","approved":true}]}`); done.Status != run.Done {
		t.Fatalf("run = %s %s", done.Status, done.Error)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Error("the approved item's command did not run")
	}
	if _, err := os.Stat(filepath.Join(dir, "b")); err == nil {
		t.Error("the declined item's command ran")
	}
	got, _ := lastToolResult(f.fake, "ap")
	for _, want := range []string{"a1 (Create a): approved; Rerun ran run_command for you (done)", "a2 (Create b): DECLINED", "a3 (Tell Bob): approved; go ahead"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model got %q, missing %q", got, want)
		}
	}
	// The approved action is recorded as a call of its own, marked approved.
	steps, _ := f.svc.Steps(context.Background(), r.ID)
	found := false
	for _, st := range steps {
		var d run.ToolResultData
		if st.Kind == run.StepToolResult && json.Unmarshal(st.Data, &d) == nil && d.Via == p.ID {
			found = d.Decision == "approved" && d.Name == "run_command"
		}
	}
	if !found {
		t.Error("no approved run_command step recorded for the item")
	}
}

func TestCredentialPause(t *testing.T) {
	f, vars, _ := hitl(t)
	a := f.careful("Payer", "human", "shell")
	const value = "sk_live_CANARY_51HxYz0123456789"
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "cr", Name: "request_credential", Args: `{"variable":"STRIPE_KEY","label":"Stripe secret key"}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "use", Name: "run_command", Args: `{"command":"echo key=$K","env":{"K":"${STRIPE_KEY}"}}`}),
		llmtest.Text("Charged."),
	)
	r := f.say(a, "charge the customer")
	p := f.openPause(r.ID)
	if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"value":"abc"}`)); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("a 3-character value: %v, want refused", err)
	}
	// Ask-first is on for shell: the command using the key needs approval.
	r = f.answer(p, `{"value":"`+value+`"}`)
	if r.Status != run.Paused {
		t.Fatalf("after the credential: %s %s", r.Status, r.Error)
	}
	if got, ok := vars.Lookup("STRIPE_KEY"); !ok || got != value {
		t.Fatal("the value did not reach the variables")
	}
	answered, _ := f.svc.GetPause(context.Background(), p.ID)
	if strings.Contains(string(answered.Answer), value) || !strings.Contains(string(answered.Answer), `"filled":true`) {
		t.Fatalf("stored answer = %s", answered.Answer)
	}
	p2 := f.openPause(r.ID)
	if strings.Contains(string(p2.Request), value) {
		t.Fatal("the approval card shows the secret value")
	}
	done := f.answer(p2, `{"decisions":[{"id":"use","approved":true}]}`)
	if done.Status != run.Done {
		t.Fatalf("run = %s %s", done.Status, done.Error)
	}
	out, _ := lastToolResult(f.fake, "use")
	if !strings.Contains(out, "key=[redacted:STRIPE_KEY]") {
		t.Fatalf("command output reached the model as %q, want the value masked", out)
	}
	for _, req := range f.fake.Requests() {
		if strings.Contains(string(req.Body), value) {
			t.Fatal("the secret value reached the model")
		}
	}
	told, _ := lastToolResultAt(f.fake, 1, "cr")
	if !strings.Contains(told, "filled the variable STRIPE_KEY") {
		t.Fatalf("the agent was told %q", told)
	}
}

// lastToolResultAt is the tool result the model got in request i.
func lastToolResultAt(fake *llmtest.Server, i int, id string) (string, bool) {
	for _, m := range fake.Requests()[i].Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == id {
				return tr.Content, tr.IsError
			}
		}
	}
	return "", false
}

func TestConnectorPause(t *testing.T) {
	f, vars, _ := hitl(t)
	a := f.careful("Linker", "human")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "cn", Name: "request_connector", Args: `{"connector":"Acme CRM","fields":[` +
			`{"name":"url","type":"url","required":true},{"name":"api_token","type":"secret","required":true},{"name":"plan","type":"select","options":["free","pro"]}]}`}),
		llmtest.Text("Connected."),
	)
	r := f.say(a, "connect the crm")
	p := f.openPause(r.ID)
	if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"values":{"url":"ftp://x","api_token":"tok-12345"}}`)); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("bad url: %v", err)
	}
	done := f.answer(p, `{"values":{"url":"https://crm.example","api_token":"tok-12345","plan":"pro"}}`)
	if done.Status != run.Done {
		t.Fatalf("run = %s", done.Status)
	}
	if v, _ := vars.Lookup("ACME_CRM_API_TOKEN"); v != "tok-12345" {
		t.Fatalf("secret field stored as %q", v)
	}
	got, _ := lastToolResult(f.fake, "cn")
	if strings.Contains(got, "tok-12345") || !strings.Contains(got, `"api_token":"${ACME_CRM_API_TOKEN}"`) || !strings.Contains(got, `"plan":"pro"`) {
		t.Fatalf("the agent got %q", got)
	}
}

func TestDismissAndCancel(t *testing.T) {
	f, _, n := hitl(t)
	a := f.careful("Asker", "human")
	ask := llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "ask_question", Args: `{"questions":[{"question":"Sure?"}]}`})
	f.fake.Script(ask, llmtest.Text("Fine, skipping."))
	r := f.say(a, "go")
	done := f.answer(f.openPause(r.ID), `{"dismiss":true,"note":"not now"}`)
	got, _ := lastToolResult(f.fake, "q")
	if done.Status != run.Done || !strings.Contains(got, "dismissed") || !strings.Contains(got, "not now") {
		t.Fatalf("dismissed: run %s, model got %q", done.Status, got)
	}

	f.fake.Script(ask)
	r = f.say(a, "again")
	p := f.openPause(r.ID)
	c, err := f.svc.Cancel(context.Background(), r.ID)
	if err != nil || c.Status != run.Cancelled {
		t.Fatalf("cancel paused: %s %v", c.Status, err)
	}
	if got, _ := f.svc.GetPause(context.Background(), p.ID); got.Status != pause.Cancelled {
		t.Fatalf("pause after cancel = %s", got.Status)
	}
	if !strings.Contains(strings.Join(n.handled, ","), p.ID) {
		t.Error("the cancelled pause's notification was not handled")
	}
}

func TestAutomatedRunPausesAndSessionWaits(t *testing.T) {
	f, _, n := hitl(t)
	a := f.careful("Night", "human")
	ctx := context.Background()
	sess, _ := f.svc.NewSession(ctx, a.ID, run.SourceSchedule, "")
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "ask_question", Args: `{"questions":[{"question":"Send the report?","options":["Yes","No"]}]}`}))
	r, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceSchedule, "nightly report", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r = f.wait(r.ID)
	p := f.openPause(r.ID)
	if !p.Automated || !n.list()[0].Automated {
		t.Fatal("a scheduled run's pause is not marked automated")
	}
	// The next firing in the same session waits behind the open card.
	next, _ := f.svc.Start(ctx, a.ID, sess.ID, run.SourceSchedule, "nightly report", run.StartOptions{})
	time.Sleep(1500 * time.Millisecond)
	if got, _ := f.svc.Get(ctx, next.ID); got.Status != run.Queued {
		t.Fatalf("second run = %s while the first waits for a person, want queued", got.Status)
	}
	f.fake.Script(llmtest.Text("Sent."), llmtest.Text("Nothing new."))
	if done := f.answer(p, `{"answers":["Yes"]}`); done.Status != run.Done {
		t.Fatalf("first run = %s", done.Status)
	}
	if got := f.wait(next.ID); got.Status != run.Done || got.Output != "Nothing new." {
		t.Fatalf("second run = %s %q", got.Status, got.Output)
	}
}

func TestCalledAgentPauses(t *testing.T) {
	f, _, _ := hitl(t)
	boss := f.careful("Boss", "agents")
	helper := f.careful("Helper", "human")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "call", Name: "call_agent", Args: `{"handle":"@` + helper.Handle + `","message":"what colour?"}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "ask_question", Args: `{"questions":[{"question":"Colour?","options":["red","blue"]}]}`}),
	)
	r := f.say(boss, "paint it")
	if r.Status != run.Paused {
		t.Fatalf("caller = %s (%s), want paused while its callee waits", r.Status, r.Error)
	}
	kids, _ := f.svc.Children(context.Background(), r.ID)
	if len(kids) != 1 || kids[0].Status != run.Paused {
		t.Fatalf("children = %+v", kids)
	}
	p := f.openPause(kids[0].ID)
	shown, err := f.svc.OpenPauseIn(context.Background(), r.SessionID)
	if err != nil || shown == nil || shown.ID != p.ID {
		t.Fatalf("the caller's session shows %+v (%v), want the callee's card", shown, err)
	}
	f.fake.Script(llmtest.Text("blue it is"), llmtest.Text("Painted blue."))
	if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"answers":["blue"]}`)); err != nil {
		t.Fatal(err)
	}
	done := f.wait(r.ID)
	for done.Status == run.Queued || done.Status == run.Paused { // the callee finishes first, then the caller is queued
		time.Sleep(50 * time.Millisecond)
		done = f.wait(r.ID)
	}
	if done.Status != run.Done || done.Output != "Painted blue." {
		t.Fatalf("caller = %s %q %s", done.Status, done.Output, done.Error)
	}
	got, _ := lastToolResult(f.fake, "call")
	if got != "blue it is" {
		t.Fatalf("the caller got %q from its callee", got)
	}
}

// TestPauseSurvivesRestart kills a process while its run waits for a
// person, then answers in a new process: the run continues from the answer.
func TestPauseSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	fake := llmtest.New(t)
	svc, agents, boxes, closeDB := services(t, dir, fake)
	_ = svc
	ctx := context.Background()
	b, _ := boxes.Create(ctx, "Main")
	a, err := agents.Create(ctx, agent.NewAgent{Name: "Patient", BoxID: b.ID, Capabilities: []string{"human"}})
	if err != nil {
		t.Fatal(err)
	}
	closeDB()

	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "q", Name: "ask_question", Args: `{"questions":[{"question":"Proceed?"}]}`}))
	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	child.Env = append(os.Environ(), "RERUN_CRASH_DIR="+dir, "RERUN_CRASH_OPENAI="+fake.OpenAIURL(), "RERUN_CRASH_AGENT="+a.ID)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	svc, _, _, closeDB = services(t, dir, fake) // reads while the child writes (WAL)
	deadline := time.Now().Add(waittest.Patience)
	var p run.Pause
	for {
		ps, _ := svc.Pauses(ctx, run.PauseFilter{Status: pause.Open})
		if len(ps) == 1 {
			p = ps[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the child never paused")
		}
		time.Sleep(20 * time.Millisecond)
	}
	child.Process.Signal(syscall.SIGKILL)
	child.Wait()
	closeDB()

	fake.Script(llmtest.Text("Proceeding, as you said."))
	svc, _, _, closeDB = services(t, dir, fake)
	defer closeDB()
	serveCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { svc.Serve(serveCtx); close(done) }()
	defer func() { stop(); <-done }()
	time.Sleep(200 * time.Millisecond)
	if r, _ := svc.Get(ctx, p.RunID); r.Status != run.Paused {
		t.Fatalf("after the restart the run is %s, want still paused", r.Status)
	}
	if _, err := svc.Answer(ctx, p.ID, json.RawMessage(`{"answers":["yes, go"]}`)); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	r, err := svc.Wait(waitCtx, p.RunID)
	if err != nil || r.Status != run.Done || r.Output != "Proceeding, as you said." {
		t.Fatalf("resumed: %s %q %v", r.Status, r.Output, err)
	}
	got, _ := lastToolResult(fake, "q")
	if !strings.Contains(got, "yes, go") {
		t.Fatalf("the model got %q", got)
	}
}

// A backlog of queued runs across sessions, drained by few workers: every
// run executes exactly once (a stale read of the queue must not start a run
// that already ran).
func TestBacklogRunsOnce(t *testing.T) {
	f := base(t)
	f.fake.SetFallback(func(llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{Workers: 2})
	a := f.agent("Busy")
	ctx := context.Background()
	var ids []string
	for i := 0; i < 8; i++ {
		sess, _ := f.svc.NewSession(ctx, a.ID, run.SourceAPI, "")
		for j := 0; j < 5; j++ {
			r, err := f.svc.Start(ctx, a.ID, sess.ID, run.SourceAPI, "job", run.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
	}
	for _, id := range ids {
		if r := f.wait(id); r.Status != run.Done {
			t.Fatalf("run %s = %s %s", id, r.Status, r.Error)
		}
		if got := f.kinds(id); got != "input,model" {
			t.Fatalf("run %s steps = %s, want one model turn", id, got)
		}
	}
	if n := len(f.fake.Requests()); n != len(ids) {
		t.Fatalf("the model was called %d times for %d runs", n, len(ids))
	}
}

// Where commands are not sandboxed, every command waits for the person,
// though the agent's ask-first switch for the shell is off; once approved
// it runs.
func TestUnsandboxedCommandsAskFirst(t *testing.T) {
	t.Setenv("RERUN_SANDBOX", "off")
	f, _, _ := hitl(t)
	a := f.agent("Loose", "shell") // ask-first off
	marker := filepath.Join(f.dir, "shared", "ran")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "run_command", Args: `{"command":"touch ` + marker + `"}`}),
		llmtest.Text("Done."),
	)
	r := f.say(a, "touch it")
	if r.Status != run.Paused {
		t.Fatalf("run = %s (%s), want paused: an unsandboxed command must ask first", r.Status, r.Error)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran before approval")
	}
	p := f.openPause(r.ID)
	var req pause.ApprovalRequest
	json.Unmarshal(p.Request, &req)
	if len(req.Items) != 1 || !strings.Contains(req.Items[0].Title, "not sandboxed") || !strings.Contains(req.Items[0].Detail, "touch") {
		t.Fatalf("approval card = %+v", req)
	}
	if done := f.answer(p, `{"decisions":[{"id":"c1","approved":true}]}`); done.Status != run.Done {
		t.Fatalf("after approval: %s %s", done.Status, done.Error)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
}
