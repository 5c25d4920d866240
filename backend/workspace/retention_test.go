package workspace_test

import (
	"context"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/retention"
	"github.com/rerun-build/rerun-desktop/backend/search/searchtest"
)

// TestUpgradedWorkspaceKeepsItsHistory: a workspace with runs from before
// retention existed starts at keep forever, so its first prune deletes
// nothing; a new one keeps the default 90 days. Once the person saves 90
// days, the old ended run goes and the old paused one stays.
func TestUpgradedWorkspaceKeepsItsHistory(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := open(t, dir)
	old, _ := h.Workspace(h.Current())
	fresh, err := h.Create(ctx, "Fresh")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := h.Workspace(fresh.ID)
	long := time.Now().AddDate(0, 0, -200)
	searchtest.Agent(t, old.DB, "ag_old")
	searchtest.Write(t, old.DB,
		searchtest.Run{ID: "run_done", AgentID: "ag_old", Source: "chat", Status: "done", At: long, Steps: []searchtest.Step{searchtest.Input("hi")}},
		searchtest.Run{ID: "run_paused", AgentID: "ag_old", Source: "chat", Status: "paused", At: long, Steps: []searchtest.Step{searchtest.Input("wait")}})
	// The fresh workspace's run is newer than its migrations.
	searchtest.Agent(t, f.DB, "ag_new")
	searchtest.Write(t, f.DB, searchtest.Run{ID: "run_new", AgentID: "ag_new", Source: "chat", Status: "done", At: time.Now().Add(time.Minute)})
	// As if the old runs were there before migration 0020.
	if _, err := old.DB.ExecContext(ctx, `UPDATE retention SET updated_at = ''`); err != nil {
		t.Fatal(err)
	}
	h.Close()

	h = open(t, dir)
	old, _ = h.Workspace(old.Info().ID)
	f, _ = h.Workspace(fresh.ID)
	if st, err := old.Retention.Settings(ctx); err != nil || st.KeepDays != 0 || st.TrimDays != 0 {
		t.Fatalf("upgraded workspace's retention = %+v, %v; want keep forever", st, err)
	}
	if st, _ := f.Retention.Settings(ctx); st.KeepDays != 90 || st.TrimDays != 30 {
		t.Errorf("new workspace's retention = %+v, want 90/30", st)
	}
	if rep, err := old.Retention.Prune(ctx); err != nil || rep.Runs != 0 {
		t.Fatalf("first prune of the upgraded workspace = %+v, %v; want nothing deleted", rep, err)
	}
	if _, err := old.Retention.SetSettings(ctx, retention.Settings{KeepDays: 90, TrimDays: 30, TrimChars: 4096}); err != nil {
		t.Fatal(err)
	}
	if rep, err := old.Retention.Prune(ctx); err != nil || rep.Runs != 1 {
		t.Fatalf("prune after choosing 90 days = %+v, %v; want the ended run deleted", rep, err)
	}
	if _, err := old.Runs.Get(ctx, "run_paused"); err != nil {
		t.Errorf("paused run after the prune: %v", err)
	}
	if _, err := old.Runs.Get(ctx, "run_done"); err == nil {
		t.Error("the old ended run survived the prune")
	}
	h.Close()
	// The choice sticks across a reopen.
	h = open(t, dir)
	old, _ = h.Workspace(old.Info().ID)
	if st, _ := old.Retention.Settings(ctx); st.KeepDays != 90 {
		t.Errorf("retention after reopen = %+v, want the saved 90 days", st)
	}
	h.Close()
}
