package rerunagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/rerunagent"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func firstBox(t *testing.T, w *workspace.Workspace) string {
	t.Helper()
	boxes, err := w.Boxes.List(context.Background())
	if err != nil || len(boxes) == 0 {
		t.Fatal("no box")
	}
	return boxes[0].ID
}

func rerunOf(t *testing.T, w *workspace.Workspace) agent.Agent {
	t.Helper()
	a, err := w.Agents.ByHandle(context.Background(), "@rerun")
	if err != nil {
		t.Fatalf("no @rerun in the workspace: %v", err)
	}
	return a
}

func TestRerunAgentInEveryWorkspace(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := h.Workspace(h.Current())
	a := rerunOf(t, w)
	if a.ID != rerunagent.AgentID || a.Builtin != agent.BuiltinRerun || a.BoxID != box.SystemID || !strings.Contains(a.Soul, "You are Rerun") {
		t.Fatalf("@rerun = %s builtin=%q box=%s, want %s builtin=rerun on %s with its soul", a.ID, a.Builtin, a.BoxID, rerunagent.AgentID, box.SystemID)
	}
	boxes, _ := w.Boxes.List(ctx)
	if len(boxes) != 1 || boxes[0].Name != workspace.DefaultBoxName || boxes[0].Position != 0 {
		t.Fatalf("boxes = %+v, want only %q at position 0 (the system box is hidden)", boxes, workspace.DefaultBoxName)
	}
	other, err := h.Create(ctx, "Client work")
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := h.Workspace(other.ID)
	if b := rerunOf(t, w2); b.ID != a.ID || b.CreatedAt != a.CreatedAt || b.Soul != a.Soul {
		t.Errorf("the second workspace's @rerun differs: %s %v, want the same record %s %v", b.ID, b.CreatedAt, a.ID, a.CreatedAt)
	}

	// No webhook reaches it: a call from outside would drive the agent
	// that manages the workspace.
	for _, id := range []string{a.ID, foreman.AgentID} {
		if _, _, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: id, Name: "Hook", Instruction: "Do what it says."}); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "takes no webhooks") {
			t.Errorf("a trigger on %s: %v, want a refusal", id, err)
		}
	}

	// Not deletable, renamable or movable; soul and model are the person's.
	if err := w.DeleteAgent(ctx, a.ID); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "cannot be deleted") {
		t.Errorf("delete @rerun: %v, want a refusal saying it cannot be deleted", err)
	}
	name, main := "Bob", boxes[0].ID
	if _, err := w.Agents.Update(ctx, a.ID, agent.Update{Name: &name}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("rename @rerun: %v, want refused", err)
	}
	if _, err := w.Agents.Update(ctx, a.ID, agent.Update{BoxID: &main}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("move @rerun: %v, want refused", err)
	}
	soul, model := "# Rerun, terse edition", "gpt-4o-mini"
	if _, err := w.Agents.Update(ctx, a.ID, agent.Update{Soul: &soul, Model: &model, Name: &a.Name}); err != nil {
		t.Fatalf("change @rerun's soul and model: %v", err)
	}
	// The system box takes no agent and no change.
	if _, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Sneaky", BoxID: box.SystemID}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("create an agent on the system box: %v, want refused", err)
	}
	if _, err := w.Boxes.Rename(ctx, box.SystemID, "Mine"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("rename the system box: %v, want refused", err)
	}
	if err := w.Boxes.Delete(ctx, box.SystemID); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("delete the system box: %v, want refused", err)
	}
	if _, err := w.Boxes.Reorder(ctx, []string{main}); err != nil {
		t.Errorf("reorder the only visible box: %v", err)
	}
	// An older workspace, from before built-in agents, gets it on open.
	if _, err := w2.DB.ExecContext(ctx, `DELETE FROM agents WHERE builtin != ''`); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.DB.ExecContext(ctx, `DELETE FROM boxes WHERE id = ?`, box.SystemID); err != nil {
		t.Fatal(err)
	}
	h.Close()

	h, err = workspace.Open(ctx, workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w, _ = h.Workspace(w.Info().ID)
	if got := rerunOf(t, w); got.Soul != soul || got.Model != model {
		t.Errorf("after reopen @rerun has soul %q model %q, want the person's %q %q", got.Soul, got.Model, soul, model)
	}
	w2, _ = h.Workspace(other.ID)
	if got := rerunOf(t, w2); got.ID != rerunagent.AgentID || got.Soul != a.Soul {
		t.Errorf("reopened older workspace: @rerun = %s, want it written again", got.ID)
	}
	all, _ := w.Agents.List(ctx)
	if n := len(all); n != len(workspace.Builtins) {
		t.Errorf("after reopen the workspace has %d agents, want the built-in ones", n)
	}
}

// rerunEnv is a home whose built-in agent has the API tools in process, with
// the fake model server behind every agent.
func rerunEnv(t *testing.T) (*workspace.Workspace, *llmtest.Server) {
	t.Helper()
	fake := llmtest.New(t)
	ctx := context.Background()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(), APITools: mcpapi.InProcess(""),
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { h.Serve(serveCtx); close(served) }()
	t.Cleanup(func() { stop(); <-served; h.Close() })
	w, _ := h.Workspace(h.Current())
	return w, fake
}

// ask sends the person's chat message to agent a and waits for the run to
// end or pause.
func ask(t *testing.T, w *workspace.Workspace, a agent.Agent, msg string) run.Run {
	t.Helper()
	ctx := context.Background()
	sess, err := w.Runs.ChatSession(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, msg, run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return wait(t, w, r.ID)
}

func wait(t *testing.T, w *workspace.Workspace, id string) run.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	r, err := w.Runs.Wait(ctx, id)
	if err != nil {
		t.Fatalf("wait for run %s: %v (%s)", id, err, r.Status)
	}
	return r
}

func toolNames(req llmtest.Request) []string {
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func TestRerunAgentUsesTheAPIToolsInProcess(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "create_agent", Args: `{"name":"Inbox Keeper","soul":"# You keep the inbox"}`}),
		llmtest.Text("Created @inbox-keeper."),
	)
	r := ask(t, w, rerunOf(t, w), "Make me an inbox keeper")
	if r.Status != run.Done || r.Output != "Created @inbox-keeper." {
		t.Fatalf("run = %s %q (%s)", r.Status, r.Output, r.Error)
	}
	a, err := w.Agents.ByHandle(ctx, "inbox-keeper")
	if err != nil || a.Soul != "# You keep the inbox" || a.BoxID != firstBox(t, w) {
		t.Fatalf("the created agent = %+v, %v", a, err)
	}
	reqs := fake.Requests()
	names := toolNames(reqs[0])
	for _, want := range []string{"move_agent", "create_box", "create_agent", "list_spaces", "get_run", "db_query", "submit_template", "remember", "ask_question"} {
		if !slices.Contains(names, want) {
			t.Errorf("@rerun's tools lack %s: %v", want, names)
		}
	}
	if n := len(names); n < 45+2 {
		t.Errorf("@rerun has %d tools, want the 45 of the API, its 2 board tools and its families'", n)
	}
	if !strings.Contains(reqs[0].System, "move_agent moves a coworker") {
		t.Errorf("@rerun's prompt lacks the guide of its tools")
	}
	var result string
	for _, m := range reqs[1].Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == "c1" {
				result = tr.Content
			}
		}
	}
	if !strings.Contains(result, `"handle":"inbox-keeper"`) {
		t.Errorf("create_agent's result to the model = %q", result)
	}
}

// openApproval returns the approval card run r waits on.
func openApproval(t *testing.T, w *workspace.Workspace, r run.Run) (run.Pause, pause.ApprovalRequest) {
	t.Helper()
	if r.Status != run.Paused {
		t.Fatalf("run = %s (%s), want paused for approval", r.Status, r.Error)
	}
	p, err := w.Runs.OpenPauseOf(context.Background(), r.ID)
	if err != nil || p == nil {
		t.Fatalf("no open card: %v", err)
	}
	var req pause.ApprovalRequest
	json.Unmarshal(p.Request, &req)
	if p.Kind != pause.Approval || len(req.Items) != 1 {
		t.Fatalf("card = %s %+v, want one approval item", p.Kind, req)
	}
	return *p, req
}

func decide(t *testing.T, w *workspace.Workspace, p run.Pause, id string, approved bool) run.Run {
	t.Helper()
	body, _ := json.Marshal(pause.ApprovalAnswer{Decisions: []pause.Decision{{ID: id, Approved: approved}}})
	if _, err := w.Runs.Answer(context.Background(), p.ID, body); err != nil {
		t.Fatal(err)
	}
	return wait(t, w, p.RunID)
}

func TestRerunMovesAnAgentAfterApproval(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	main := firstBox(t, w)
	clients, err := w.Boxes.Create(ctx, "Clients")
	if err != nil {
		t.Fatal(err)
	}
	scout, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: main})
	if err != nil {
		t.Fatal(err)
	}
	rerun := rerunOf(t, w)
	boxOf := func() string {
		a, err := w.Agents.Get(ctx, scout.ID)
		if err != nil {
			t.Fatal(err)
		}
		return a.BoxID
	}

	// Approved: the move happens after the card, not before.
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "m1", Name: "move_agent", Args: `{"handle":"@scout","box":"clients"}`}), llmtest.Text("Moved."))
	r := ask(t, w, rerun, "Put Scout with the clients")
	p, req := openApproval(t, w, r)
	if it := req.Items[0]; it.Tool != "move_agent" || it.Title != "Move @scout to Clients" || !strings.Contains(it.Detail, `from Box "Main" to Box "Clients"`) {
		t.Errorf("card item = %+v", it)
	}
	if got := boxOf(); got != main {
		t.Fatalf("@scout moved before approval")
	}
	if r = decide(t, w, p, "m1", true); r.Status != run.Done {
		t.Fatalf("after approval: %s %s", r.Status, r.Error)
	}
	if got := boxOf(); got != clients.ID {
		t.Fatalf("after approval @scout is in %s, want %s", got, clients.ID)
	}

	// Declined: nothing changes, and the same move is not tried again.
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "m2", Name: "move_agent", Args: `{"handle":"scout","box":"Main"}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "m3", Name: "move_agent", Args: `{"handle":"scout","box":"Main"}`}),
		llmtest.Text("Left it."),
	)
	p, _ = openApproval(t, w, ask(t, w, rerun, "Put it back"))
	if r = decide(t, w, p, "m2", false); r.Status != run.Done {
		t.Fatalf("after decline: %s %s", r.Status, r.Error)
	}
	if got := boxOf(); got != clients.ID {
		t.Fatalf("a declined move moved @scout to %s", got)
	}

	// create_box: declined makes nothing; approved makes it.
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "b1", Name: "create_box", Args: `{"name":"Research"}`}), llmtest.Text("No box."))
	p, _ = openApproval(t, w, ask(t, w, rerun, "A box for research"))
	decide(t, w, p, "b1", false)
	if boxes, _ := w.Boxes.List(ctx); len(boxes) != 2 {
		t.Fatalf("a declined create_box made a box: %d boxes", len(boxes))
	}
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "b2", Name: "create_box", Args: `{"name":"Research"}`}), llmtest.Text("Made it."))
	p, _ = openApproval(t, w, ask(t, w, rerun, "Yes, really, a box for research"))
	decide(t, w, p, "b2", true)
	if boxes, _ := w.Boxes.List(ctx); len(boxes) != 3 || boxes[2].Name != "Research" {
		t.Fatalf("after approval boxes = %+v, want Research at the end", boxes)
	}

	// Bad input gets an error back, with no card.
	fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "x", Name: "move_agent", Args: `{"handle":"@rerun","box":"Main"}`}), llmtest.Text("Cannot."))
	if r = ask(t, w, rerun, "Move yourself"); r.Status != run.Done {
		t.Fatalf("moving @rerun: %s, want done with a tool error and no card", r.Status)
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	found := false
	for _, m := range last.Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == "x" && strings.Contains(tr.Content, "cannot be moved") {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("moving @rerun did not tell the model it cannot be moved")
	}
}

func TestOrdinaryAgentLacksRerunTools(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	caps := make([]string, 0, len(agent.Capabilities))
	for _, c := range agent.Capabilities {
		caps = append(caps, c.ID)
	}
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Everything", BoxID: firstBox(t, w), Capabilities: caps})
	if err != nil {
		t.Fatal(err)
	}
	fake.Script(llmtest.Text("Hi."))
	if r := ask(t, w, a, "hello"); r.Status != run.Done {
		t.Fatalf("run = %s %s", r.Status, r.Error)
	}
	names := toolNames(fake.Requests()[0])
	if len(names) < 10 {
		t.Fatalf("the ordinary agent got only %d tools: %v", len(names), names)
	}
	for _, banned := range []string{"move_agent", "create_box", "create_agent", "list_spaces", "delete_agent", "send_message", "get_run"} {
		if slices.Contains(names, banned) {
			t.Errorf("an ordinary agent has %s", banned)
		}
	}
}

// An ordinary agent cannot borrow a built-in agent's tools by calling it:
// call_agent to @rerun (the API tools, most without a card) or @foreman
// (write_brain_page, no card) is refused, and no run of theirs starts.
func TestOrdinaryAgentCannotCallBuiltinAgents(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Helper", BoxID: firstBox(t, w), Capabilities: []string{"agents"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, handle := range []string{"@rerun", "foreman"} {
		fake.Script(
			llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "call_agent", Args: `{"handle":"` + handle + `","message":"create an agent with the shell capability"}`}),
			llmtest.Text("Could not."),
		)
		if r := ask(t, w, a, "go"); r.Status != run.Done {
			t.Fatalf("run = %s %s", r.Status, r.Error)
		}
		reqs := fake.Requests()
		var result string
		for _, m := range reqs[len(reqs)-1].Messages {
			for _, tr := range m.ToolResults {
				if tr.ToolCallID == "c1" {
					result = tr.Content
				}
			}
		}
		if !strings.Contains(result, "built into Rerun") {
			t.Errorf("call_agent %s answered %q, want a refusal", handle, result)
		}
	}
	for _, id := range []string{rerunagent.AgentID, foreman.AgentID} {
		runs, err := w.Runs.List(ctx, run.ListOptions{AgentID: id})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 0 {
			t.Errorf("%s ran %d times for an ordinary agent", id, len(runs))
		}
	}
}

// request_approval cannot dress up a tool that has its own card: an item
// naming propose_brain_edit (or move_agent, delete_agent…) shows that
// tool's own title and detail, not the agent's description of it.
func TestRequestApprovalShowsTheToolsOwnCard(t *testing.T) {
	w, fake := rerunEnv(t)
	ctx := context.Background()
	if _, err := w.Brain.Create(ctx, brain.NewPage{Title: "What we sell", Body: "# Shoes\n\nWe sell shoes.\n", By: brain.Person}); err != nil {
		t.Fatal(err)
	}
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Writer", BoxID: firstBox(t, w), Capabilities: []string{"memory", "human"}})
	if err != nil {
		t.Fatal(err)
	}
	edit := `{"title":"What we sell","body":"# Hats\n\nWe sell hats now.\n","base_version":1,"reason":"x"}`
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "r1", Name: "request_approval", Args: `{"title":"Tidy up","items":[{"title":"Fix a typo","kind":"text","detail":"one letter","tool":"propose_brain_edit","input":` + edit + `}]}`}),
		llmtest.Text("Asked."),
	)
	_, req := openApproval(t, w, ask(t, w, a, "tidy the Brain"))
	it := req.Items[0]
	if it.Title == "Fix a typo" || !strings.Contains(it.Detail, "+We sell hats now.") || !strings.Contains(it.Detail, "-We sell shoes.") {
		t.Errorf("card item = %q %q, want propose_brain_edit's own title and diff", it.Title, it.Detail)
	}
}
