package box_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func names(bs []box.Box) string {
	var n []string
	for _, b := range bs {
		n = append(n, b.Name)
	}
	return strings.Join(n, ",")
}

func TestCreateRenameReorder(t *testing.T) {
	s := box.NewService(storetest.Open(t), "ws", nil)
	ctx := context.Background()
	a, _ := s.Create(ctx, "Alpha")
	b, _ := s.Create(ctx, "  Beta  ")
	c, _ := s.Create(ctx, "Gamma")
	if b.Name != "Beta" || c.Position != 2 {
		t.Errorf("got %+v %+v; want trimmed name and position 2", b, c)
	}
	if _, err := s.Rename(ctx, a.ID, "Ops"); err != nil {
		t.Fatal(err)
	}
	list, err := s.Reorder(ctx, []string{c.ID, a.ID, b.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(list); got != "Gamma,Ops,Beta" {
		t.Errorf("order = %s, want Gamma,Ops,Beta", got)
	}
	for name, ids := range map[string][]string{
		"missing one": {c.ID, a.ID},
		"duplicate":   {c.ID, a.ID, a.ID},
		"unknown":     {c.ID, a.ID, "bx_nope"},
	} {
		if _, err := s.Reorder(ctx, ids); err == nil {
			t.Errorf("reorder %s: succeeded, want an error", name)
		}
	}
	list, _ = s.List(ctx)
	if got := names(list); got != "Gamma,Ops,Beta" {
		t.Errorf("order after refused reorders = %s, want unchanged", got)
	}
}

func TestNameRules(t *testing.T) {
	s := box.NewService(storetest.Open(t), "ws", nil)
	for name, in := range map[string]string{
		"empty": "  ", "too long": strings.Repeat("x", 65), "control": "a\x00b",
	} {
		if _, err := s.Create(context.Background(), in); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.Rename(context.Background(), "bx_nope", "X"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("rename unknown: got %v, want ErrNotFound", err)
	}
}

func TestDeleteNonEmptyRefused(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	boxes := box.NewService(db, "ws", nil)
	agents := agent.NewService(db, t.TempDir(), "ws", nil)
	main, _ := boxes.Create(ctx, "Main")
	sales, _ := boxes.Create(ctx, "Sales")
	a, err := agents.Create(ctx, agent.NewAgent{Name: "Closer", BoxID: sales.ID})
	if err != nil {
		t.Fatal(err)
	}
	err = boxes.Delete(ctx, sales.ID)
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("delete box with an agent: got %v, want ErrConflict", err)
	}
	if msg := fault.Message(err); !strings.Contains(msg, "Sales") || !strings.Contains(msg, "move it to another box") {
		t.Errorf("message %q should name the box and say what to do", msg)
	}
	if _, err := boxes.Get(ctx, sales.ID); err != nil {
		t.Errorf("box after refused delete: %v", err)
	}
	agents.Update(ctx, a.ID, agent.Update{BoxID: &main.ID})
	if err := boxes.Delete(ctx, sales.ID); err != nil {
		t.Errorf("delete emptied box: %v", err)
	}
	agents.Delete(ctx, a.ID)
	if err := boxes.Delete(ctx, main.ID); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("delete last box: got %v, want ErrConflict", err)
	}
	if err := boxes.Delete(ctx, "bx_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("delete unknown: got %v, want ErrNotFound", err)
	}
}
