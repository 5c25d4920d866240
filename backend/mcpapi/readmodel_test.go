package mcpapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
)

// TestListsShowEveryChangeAtOnce: list_agents and list_spaces answer from
// a kept read model, so each kind of change, made by the app's services or
// written by sync (a row and its published change), must be in the very
// next answer.
func TestListsShowEveryChangeAtOnce(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	ctx := context.Background()
	agents := func(args map[string]any) []mcpapi.Agent {
		t.Helper()
		var list struct{ Agents []mcpapi.Agent }
		mustCall(t, c, "list_agents", args, &list)
		return list.Agents
	}
	spaces := func() []mcpapi.Space {
		t.Helper()
		var list struct{ Spaces []mcpapi.Space }
		mustCall(t, c, "list_spaces", nil, &list)
		return list.Spaces
	}
	boxes, _ := e.ws.Boxes.List(ctx)
	main := boxes[0].ID
	if n := len(agents(nil)); n != 0 {
		t.Fatalf("%d agents at first", n)
	}
	spaces() // both answers are kept now

	a, err := e.ws.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: main})
	if err != nil {
		t.Fatal(err)
	}
	if l := agents(nil); len(l) != 1 || l[0].Name != "Scout" {
		t.Fatalf("after create: %+v", l)
	}
	if s := spaces(); s[0].Agents != 1 {
		t.Errorf("after create: spaces %+v", s)
	}

	name := "Ranger"
	if _, err := e.ws.Agents.Update(ctx, a.ID, agent.Update{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if l := agents(nil); l[0].Name != "Ranger" {
		t.Errorf("after rename: %+v", l)
	}

	second, err := e.ws.Boxes.Create(ctx, "Second")
	if err != nil {
		t.Fatal(err)
	}
	if s := spaces(); len(s) != 2 {
		t.Errorf("after box create: %+v", s)
	}
	if l := agents(map[string]any{"space": "Second"}); len(l) != 0 {
		t.Errorf("Second holds %+v before the move", l)
	}
	if _, err := e.ws.Agents.Update(ctx, a.ID, agent.Update{BoxID: &second.ID}); err != nil {
		t.Fatal(err)
	}
	if l := agents(map[string]any{"space": "Second"}); len(l) != 1 || l[0].Space != "Second" {
		t.Errorf("after move: %+v", l)
	}
	if s := spaces(); s[0].Agents != 0 || s[1].Agents != 1 {
		t.Errorf("after move: spaces %+v", s)
	}

	if _, err := e.ws.Boxes.Rename(ctx, second.ID, "Field"); err != nil {
		t.Fatal(err)
	}
	if l := agents(nil); l[0].Space != "Field" {
		t.Errorf("after box rename: %+v", l)
	}
	if s := spaces(); s[1].Name != "Field" {
		t.Errorf("after box rename: spaces %+v", s)
	}

	// Sync writes the rows of another device's changes itself and then
	// publishes their changes on the workspace's bus (replica.Engine).
	if _, err := e.ws.DB.ExecContext(ctx, `UPDATE agents SET name = 'Synced' WHERE id = ?`, a.ID); err != nil {
		t.Fatal(err)
	}
	e.home.Events().Publish(event.Change{Workspace: e.ws.Info().ID, Kind: "agent.updated", ID: a.ID})
	if l := agents(nil); l[0].Name != "Synced" {
		t.Errorf("after a change applied by sync: %+v", l)
	}

	if err := e.ws.Agents.Delete(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if l := agents(nil); len(l) != 0 {
		t.Errorf("after delete: %+v", l)
	}
	if s := spaces(); s[1].Agents != 0 {
		t.Errorf("after delete: spaces %+v", s)
	}
}

// A kept answer goes out over HTTP in its place in the envelope, for a
// bare POST and in a session, with text that looks like a placeholder
// left as it is.
func TestKeptAnswersOverHTTP(t *testing.T) {
	e := newEnv(t)
	boxes, _ := e.ws.Boxes.List(context.Background())
	lookalike := `"rerun-answer-0-0" & <b>`
	if _, err := e.ws.Agents.Create(context.Background(), agent.NewAgent{Name: lookalike, BoxID: boxes[0].ID}); err != nil {
		t.Fatal(err)
	}
	check := func(what, body string) {
		t.Helper()
		var res struct {
			Result struct {
				Content []struct{ Type, Text string }
			}
		}
		if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Result.Content) != 1 || res.Result.Content[0].Type != "text" {
			t.Fatalf("%s: %v in %s", what, err, body)
		}
		var list struct{ Agents []mcpapi.Agent }
		if err := json.Unmarshal([]byte(res.Result.Content[0].Text), &list); err != nil || len(list.Agents) != 1 || list.Agents[0].Name != lookalike {
			t.Errorf("%s: agents %+v (%v) in %s", what, list.Agents, err, body)
		}
	}
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`
	for i := range 2 { // the answer is built, then kept
		code, body := post(t, e, map[string]string{"Authorization": "Bearer " + e.key}, call)
		if code != 200 {
			t.Fatalf("bare POST %d: %d %s", i, code, body)
		}
		check("bare POST", body)
	}
	var list struct{ Agents []mcpapi.Agent }
	mustCall(t, e.client(e.key), "list_agents", nil, &list)
	if len(list.Agents) != 1 || list.Agents[0].Name != lookalike {
		t.Errorf("in a session: %+v", list.Agents)
	}
}
