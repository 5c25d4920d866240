package mcpapi_test

import (
	"context"
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
