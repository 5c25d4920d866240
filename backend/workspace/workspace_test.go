package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

func open(t *testing.T, dir string) *workspace.Home {
	t.Helper()
	h, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFirstStart(t *testing.T) {
	dir := t.TempDir()
	h := open(t, dir)
	defer h.Close()
	list := h.List()
	if len(list) != 1 || list[0].Name != "Personal" {
		t.Fatalf("workspaces on first start = %+v, want one named Personal", list)
	}
	if h.Current() != list[0].ID {
		t.Errorf("current = %q, want %q", h.Current(), list[0].ID)
	}
	w, _ := h.Workspace(list[0].ID)
	boxes, _ := w.Boxes.List(context.Background())
	if len(boxes) != 1 {
		t.Errorf("boxes on first start = %d, want 1", len(boxes))
	}
	for _, p := range []string{"workspace.db", "shared.db", "shared", "agents"} {
		if _, err := os.Stat(filepath.Join(dir, "workspaces", list[0].ID, p)); err != nil {
			t.Errorf("workspace layout: %s missing: %v", p, err)
		}
	}
}

func TestCreateRenameSwitchSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := open(t, dir)
	work, err := h.Create(ctx, "Acme Corp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Rename(ctx, work.ID, "Acme"); err != nil {
		t.Fatal(err)
	}
	if err := h.Switch(work.ID); err != nil {
		t.Fatal(err)
	}
	w, _ := h.Workspace(work.ID)
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Bookkeeper", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	h.Close()

	h = open(t, dir)
	defer h.Close()
	if h.Current() != work.ID {
		t.Errorf("current after reopen = %q, want %q", h.Current(), work.ID)
	}
	list := h.List()
	if len(list) != 2 || list[1].Name != "Acme" {
		t.Fatalf("workspaces after reopen = %+v, want Personal then Acme", list)
	}
	w, _ = h.Workspace(work.ID)
	got, err := w.Agents.Get(ctx, a.ID)
	if err != nil || got.Handle != "bookkeeper" {
		t.Errorf("agent after reopen = %+v, %v", got, err)
	}
	if err := h.Switch("ws_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("switch to unknown: %v, want ErrNotFound", err)
	}
	if _, err := h.Create(ctx, ""); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("create unnamed: %v, want ErrInvalid", err)
	}
	if len(h.List()) != 2 {
		t.Errorf("a refused create left a workspace behind")
	}
}

func TestHandlesArePerWorkspace(t *testing.T) {
	h := open(t, t.TempDir())
	defer h.Close()
	ctx := context.Background()
	other, _ := h.Create(ctx, "Other")
	for _, id := range []string{h.List()[0].ID, other.ID} {
		w, _ := h.Workspace(id)
		boxes, _ := w.Boxes.List(ctx)
		a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
		if err != nil || a.Handle != "scout" {
			t.Errorf("workspace %s: agent %+v, %v; want handle scout in each workspace", id, a, err)
		}
	}
}

func TestSecondOpenOfOneDataDirRefused(t *testing.T) {
	dir := t.TempDir()
	h := open(t, dir)
	_, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err == nil || !strings.Contains(err.Error(), "already using") || !strings.Contains(err.Error(), fmt.Sprintf("pid %d, ", os.Getpid())) {
		t.Fatalf("second open: %v, want a refusal naming the other Rerun and its pid", err)
	}
	h.Close()
	h2 := open(t, dir) // released on Close
	h2.Close()
}
