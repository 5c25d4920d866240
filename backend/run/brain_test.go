package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// withBrain is a runtime whose workspace has a Brain.
func withBrain(t *testing.T) *fixture {
	t.Helper()
	f := base(t)
	f.brain = brain.New(f.db, "ws", f.bus)
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{})
	return f
}

func (f *fixture) page(title, body string) brain.Page {
	f.t.Helper()
	p, err := f.brain.Create(context.Background(), brain.NewPage{Title: title, Body: body, By: brain.Person})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func toolNames(req llmtest.Request) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return names
}

const offer = "We sell hand-made city bikes, from 1 200 EUR, with repairs within 48 hours."

// A small Brain is in every agent's prompt whole, in the bytes sent to the
// model, and read_brain_page returns a page, whatever the agent's
// capabilities.
func TestSmallBrainIsInlineInTheRequest(t *testing.T) {
	f := withBrain(t)
	f.page("What we sell", "# Offer\n\n"+offer)
	a := f.agent("Clerk") // no capabilities at all
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "read_brain_page", Args: `{"title":"WHAT WE SELL"}`}),
		llmtest.Text("Bikes."),
	)
	if r := f.say(a, "What do we sell?"); r.Status != run.Done {
		t.Fatalf("run: %s (%s)", r.Status, r.Error)
	}
	reqs := f.fake.Requests()
	body := string(reqs[0].Body)
	for _, want := range []string{`## The Brain`, `\u003cpage title=\"What we sell\" version=\"1\"\u003e`, offer} {
		if !strings.Contains(body, want) && !strings.Contains(body, strings.ReplaceAll(want, `\u003c`, "<")) {
			t.Errorf("the request sent to the model lacks %q", want)
		}
	}
	if !strings.Contains(reqs[0].System, "<page title=\"What we sell\" version=\"1\">\n# Offer\n\n"+offer+"\n</page>") {
		t.Errorf("system prompt lacks the page inline:\n%s", reqs[0].System)
	}
	if names := toolNames(reqs[0]); !slices.Contains(names, "read_brain_page") || slices.Contains(names, "propose_brain_edit") {
		t.Errorf("tools = %v; want read_brain_page and, without the memory capability, no propose_brain_edit", names)
	}
	if strings.Contains(reqs[0].System, "propose_brain_edit") {
		t.Errorf("an agent that cannot propose is told to propose")
	}
	if got := toolResult(reqs[1], "c1"); !strings.Contains(got, "# What we sell\n(version 1,") || !strings.Contains(got, offer) {
		t.Errorf("read_brain_page answered %q, want the page", got)
	}
}

// A Brain past the inline budget is an index of titles and summaries plus
// read_brain_page, which returns the full page; an unknown title lists the
// titles.
func TestLargeBrainIsAnIndexAndReadBrainPageReturnsThePage(t *testing.T) {
	f := withBrain(t)
	for i := 1; i <= 8; i++ {
		f.page(fmt.Sprintf("Segment %d", i), fmt.Sprintf("Segment %d buys bikes.\n\n%s", i, strings.Repeat(fmt.Sprintf("Detail %d. ", i), 100)))
	}
	a := f.agent("Clerk")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "read_brain_page", Args: `{"title":"segment 7"}`},
			llmtest.ToolCall{ID: "c2", Name: "read_brain_page", Args: `{"title":"Segment 99"}`}),
		llmtest.Text("Done."),
	)
	if r := f.say(a, "Tell me about segment 7."); r.Status != run.Done {
		t.Fatalf("run: %s (%s)", r.Status, r.Error)
	}
	reqs := f.fake.Requests()
	sys := reqs[0].System
	if !strings.Contains(sys, "- Segment 7 (version 1): Segment 7 buys bikes.") || !strings.Contains(sys, "read_brain_page(title)") {
		t.Errorf("prompt lacks the index entry or the tool hint:\n%s", sys)
	}
	if strings.Contains(sys, "Detail 7.") || strings.Contains(string(reqs[0].Body), "Detail 7.") {
		t.Errorf("a large Brain's page bodies were sent in the prompt")
	}
	if got := toolResult(reqs[1], "c1"); !strings.Contains(got, strings.Repeat("Detail 7. ", 100)) {
		t.Errorf("read_brain_page answered %.200q…, want the whole page", got)
	}
	if got := toolResult(reqs[1], "c2"); !strings.Contains(got, `no page "Segment 99"`) || !strings.Contains(got, `"Segment 1"`) {
		t.Errorf("an unknown title answered %q, want the list of titles", got)
	}
}

// propose_brain_edit never writes by itself: it raises an approval card with
// a unified diff; approved, the page is written as the agent's version;
// declined, nothing changes and the agent is told.
func TestProposeBrainEditWaitsForApproval(t *testing.T) {
	f := withBrain(t)
	p := f.page("What we sell", offer)
	a := f.agent("Scout", "memory")
	ctx := context.Background()
	edit := func(id, body string) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "propose_brain_edit", Args: args(map[string]any{
			"title": "what we sell", "body": body, "base_version": 1, "reason": "The shop added rentals last week."})}
	}
	newBody := offer + "\nWe also rent bikes by the day."
	f.fake.Script(llmtest.Tools(edit("c1", newBody)))
	r := f.say(a, "We rent bikes now, note it.")
	if r.Status != run.Paused {
		t.Fatalf("run: %s (%s), want paused on an approval card", r.Status, r.Error)
	}
	if !strings.Contains(f.fake.Requests()[0].System, "propose_brain_edit") {
		t.Errorf("an agent with the memory capability is not told how to propose")
	}
	card := f.openPause(r.ID)
	var req pause.ApprovalRequest
	json.Unmarshal(card.Request, &req)
	if card.Kind != pause.Approval || len(req.Items) != 1 {
		t.Fatalf("card = %s %+v, want one approval item", card.Kind, req)
	}
	it := req.Items[0]
	if it.Title != "Edit Brain page “What we sell”" || !strings.Contains(it.Detail, "+We also rent bikes by the day.") ||
		!strings.Contains(it.Detail, "--- a/what-we-sell.md") || !strings.Contains(it.Detail, "**Why:** The shop added rentals") || !strings.Contains(it.Detail, "```diff\n") {
		t.Errorf("item = %q\n%s\nwant the reason and a unified diff", it.Title, it.Detail)
	}
	if got, _ := f.brain.Get(ctx, p.ID); got.Version != 1 {
		t.Fatalf("the page changed before approval: version %d", got.Version)
	}

	f.fake.Script(llmtest.Text("Noted in the Brain."))
	r = f.answer(card, fmt.Sprintf(`{"decisions":[{"id":%q,"approved":true}]}`, it.ID))
	if r.Status != run.Done {
		t.Fatalf("after approval: %s (%s)", r.Status, r.Error)
	}
	got, _ := f.brain.Get(ctx, p.ID)
	if got.Version != 2 || got.Body != newBody || got.UpdatedBy != "agent:@scout" {
		t.Errorf("after approval: version %d by %s, body %q", got.Version, got.UpdatedBy, got.Body)
	}
	if out, isErr := lastToolResult(f.fake, "c1"); isErr || !strings.Contains(out, "approved and written") {
		t.Errorf("the agent was told %q (error %v)", out, isErr)
	}

	// Declined: nothing changes and the agent hears it.
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c2", Name: "propose_brain_edit", Args: args(map[string]any{
		"title": "What we sell", "body": "We sell nothing.", "base_version": 2, "reason": "Closing down."})}))
	r = f.sayInNewSession(a, "We close.")
	card = f.openPause(r.ID)
	json.Unmarshal(card.Request, &req)
	f.fake.Script(llmtest.Text("Understood, left as is."))
	if r = f.answer(card, fmt.Sprintf(`{"decisions":[{"id":%q,"approved":false,"note":"not true"}]}`, req.Items[0].ID)); r.Status != run.Done {
		t.Fatalf("after decline: %s (%s)", r.Status, r.Error)
	}
	if got, _ := f.brain.Get(ctx, p.ID); got.Version != 2 || got.Body != newBody {
		t.Errorf("a declined proposal changed the page: version %d %q", got.Version, got.Body)
	}
	if out, isErr := lastToolResult(f.fake, "c2"); !isErr || !strings.Contains(out, "declined") || !strings.Contains(out, "not true") {
		t.Errorf("after decline the agent was told %q (error %v)", out, isErr)
	}

	// A proposal on an outdated version raises no card.
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c3", Name: "propose_brain_edit", Args: args(map[string]any{
		"title": "What we sell", "body": "Old idea.", "base_version": 1, "reason": "x"})}), llmtest.Text("I will re-read it."))
	if r = f.sayInNewSession(a, "Try again."); r.Status != run.Done {
		t.Fatalf("stale proposal: %s (%s), want done without a card", r.Status, r.Error)
	}
	if out, _ := lastToolResult(f.fake, "c3"); !strings.Contains(out, "at version 2, and you started from version 1") {
		t.Errorf("stale proposal answered %q", out)
	}
}

// A variable's value in a proposed page is refused when it is proposed:
// no card shows it to the person, the agent is told to write ${NAME}.
func TestProposeBrainEditRefusesAVariableValueBeforeTheCard(t *testing.T) {
	f := base(t)
	f.brain = brain.New(f.db, "ws", f.bus)
	vars := f.variables()
	if _, err := vars.Set(context.Background(), "SHOP_TOKEN", "shop-token-0123456789"); err != nil {
		t.Fatal(err)
	}
	f.vars = vars
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{})
	a := f.agent("Scout", "memory")
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "propose_brain_edit", Args: args(map[string]any{
		"title": "Access", "body": "The shop's token is shop-token-0123456789.", "base_version": 0, "reason": "So everyone has it."})}),
		llmtest.Text("I will not store it."))
	if r := f.say(a, "Note the token."); r.Status != run.Done {
		t.Fatalf("run: %s (%s), want done without a card", r.Status, r.Error)
	}
	out, isErr := lastToolResult(f.fake, "c1")
	if !isErr || !strings.Contains(out, "holds the value of the variable SHOP_TOKEN") || !strings.Contains(out, "write ${SHOP_TOKEN} instead") {
		t.Errorf("the agent was told %q (error %v), want the value refused", out, isErr)
	}
	if _, err := f.brain.Get(context.Background(), "Access"); err == nil {
		t.Error("the page was written")
	}
}

// An agent's chat message holding a variable's value is masked in the
// step, the run's answer and what the next request sends.
func TestChatMessageMasksAVariableValue(t *testing.T) {
	f, vars, _ := hitl(t)
	if _, err := vars.Set(context.Background(), "SHOP_TOKEN", "shop-token-0123456789"); err != nil {
		t.Fatal(err)
	}
	a := f.agent("Scout")
	f.fake.Script(llmtest.Text("Here it is: shop-token-0123456789."), llmtest.Text("ok"))
	r := f.say(a, "What is the token?")
	if r.Status != run.Done {
		t.Fatalf("run: %s (%s)", r.Status, r.Error)
	}
	steps, err := f.svc.Steps(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(steps)
	if strings.Contains(string(all), "shop-token-0123456789") || !strings.Contains(string(all), "[redacted:SHOP_TOKEN]") {
		t.Fatalf("steps = %s, want the value masked", all)
	}
	f.say(a, "Thanks.")
	reqs := f.fake.Requests()
	if body := string(reqs[len(reqs)-1].Body); strings.Contains(body, "shop-token-0123456789") {
		t.Fatalf("the next request carries the value: %s", body)
	}
}
