package workspace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// Memories written while no embedder was configured are embedded in the
// background once one is, with the progress published.
func TestServeReembedsWithProgress(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := open(t, dir)
	w, _ := h.Workspace(h.Current())
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"The office wifi is called rerun-guest.", "Invoices go to shared/invoices."} {
		if _, err := w.Memory.Remember(ctx, a.ID, text, memory.Source{}, memory.RememberOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h.Close()

	emb := memorytest.NewEmbedServer(t, 32)
	h, err = workspace.Open(ctx, workspace.Config{DataDir: dir, EmbedBaseURL: emb.URL(), EmbedModel: "fake-32"})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	w, _ = h.Workspace(h.Current())
	if n, _ := w.Memory.Stale(ctx); n != 2 {
		t.Fatalf("got %d stale memories before serving, want 2", n)
	}
	events, stop := h.Events().Subscribe()
	defer stop()
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { h.Serve(sctx); close(served) }()
	defer func() { cancel(); <-served }()

	timeout := time.After(waittest.Patience)
	for progress := ""; progress != "2/2"; {
		select {
		case c := <-events:
			if c.Kind == "memory.reembed" {
				if c.Workspace != w.Info().ID {
					t.Errorf("got workspace %q, want %q", c.Workspace, w.Info().ID)
				}
				progress = c.Text
			}
		case <-timeout:
			t.Fatalf("got no memory.reembed 2/2 event; last progress %q", progress)
		}
	}
	if n, _ := w.Memory.Stale(ctx); n != 0 {
		t.Errorf("got %d stale memories after re-embedding, want 0", n)
	}
	found, err := w.Memory.Recall(ctx, a.ID, "wifi network name", 1)
	if err != nil || len(found) != 1 || found[0].Meaning == 0 {
		t.Errorf("recall by meaning after re-embedding = %+v, %v; want the wifi memory with a meaning score", found, err)
	}
}

func TestDeleteAgentForgetsItsMemories(t *testing.T) {
	h := open(t, t.TempDir())
	defer h.Close()
	ctx := context.Background()
	w, _ := h.Workspace(h.Current())
	boxes, _ := w.Boxes.List(ctx)
	a, _ := w.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
	r, err := w.Memory.Remember(ctx, a.ID, "Scout watches the inbox.", memory.Source{}, memory.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteAgent(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Memory.Get(ctx, r.Memory.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("got %v reading the deleted agent's memory, want ErrNotFound", err)
	}
}
