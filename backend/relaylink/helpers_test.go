package relaylink_test

import (
	"context"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// served opens a data directory with cfg and serves it until the test ends.
func served(t testing.TB, cfg workspace.Config) (*workspace.Home, *workspace.Workspace, agent.Agent) {
	t.Helper()
	cfg.DataDir = t.TempDir()
	h, err := workspace.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Serve(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done; h.Close() })
	w, _ := h.Workspace(h.Current())
	boxes, _ := w.Boxes.List(context.Background())
	a, err := w.Agents.Create(context.Background(), agent.NewAgent{Name: "Ada", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	return h, w, a
}
