package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// Runs of other devices list as summaries of the agent; this device's own
// do not (its runs list has them); nothing can start or cancel one.
func TestRunsElsewhere(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	w, _ := e.home.Workspace(e.ws)
	ag, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Far", BoxID: e.box})
	if err != nil {
		t.Fatal(err)
	}
	// As sync writes them: one from another device, one from this one.
	for _, row := range [][]any{
		{"run_far", "done", "dev_otherlaptop000001", "2026-11-30T09:00:00Z"},
		{"run_near", "done", w.Replica.DeviceID(), "2026-11-30T10:00:00Z"},
		{"run_far_running", "running", "dev_otherlaptop000001", "2026-11-30T11:00:00Z"},
	} {
		if _, err := w.DB.ExecContext(ctx, `INSERT INTO run_summaries (id, agent_id, source, status, input, output, created_at, ended_at, device)
			VALUES (?, ?, 'schedule', ?, 'Write the digest', 'Digest sent.', ?, ?, ?)`, row[0], ag.ID, row[1], row[3], row[3], row[2]); err != nil {
			t.Fatal(err)
		}
	}
	// The other device named itself (its host name), as the relay link does.
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO sync_settings (key, value) VALUES ('device:dev_otherlaptop000001', 'studio-mac')`); err != nil {
		t.Fatal(err)
	}
	base := "/api/workspaces/" + e.ws + "/agents/" + ag.ID + "/runs"
	var list []run.Summary
	if code := e.do(t, "GET", base+"/elsewhere", "", &list); code != 200 || len(list) != 2 {
		t.Fatalf("elsewhere: %d %+v, want the other device's 2", code, list)
	}
	if list[0].ID != "run_far_running" || list[1].ID != "run_far" || list[1].Output != "Digest sent." || list[1].Device != "dev_otherlaptop000001" || list[1].DeviceName != "studio-mac" {
		t.Errorf("elsewhere = %+v, want newest first with output and device", list)
	}
	if code := e.do(t, "GET", base+"/elsewhere?limit=1", "", &list); code != 200 || len(list) != 1 {
		t.Errorf("limit=1: %d, %d summaries", code, len(list))
	}
	var fail struct{ Error string }
	if code := e.do(t, "GET", base+"/elsewhere?limit=x", "", &fail); code != 400 || !strings.Contains(fail.Error, "limit") {
		t.Errorf("bad limit: %d %q, want 400 naming limit", code, fail.Error)
	}
	if code := e.do(t, "GET", "/api/workspaces/"+e.ws+"/agents/ag_nobody/runs/elsewhere", "", &fail); code != 404 {
		t.Errorf("unknown agent: %d, want 404", code)
	}
	// A summary is not a run here: not listed, not cancellable.
	var runs []run.Run
	if code := e.do(t, "GET", base, "", &runs); code != 200 || len(runs) != 0 {
		t.Errorf("runs: %d %d, want none", code, len(runs))
	}
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/runs/run_far_running/cancel", "", &fail); code != 404 {
		t.Errorf("cancel a summary: %d, want 404", code)
	}
}

func TestVariableSyncSetting(t *testing.T) {
	e := newEnv(t)
	path := "/api/workspaces/" + e.ws + "/settings/variable-sync"
	settings := e.changes(t, "sync.settings")
	var got relaylink.VariableSync
	if code := e.do(t, "GET", path, "", &got); code != 200 || got.Enabled {
		t.Fatalf("default: %d %+v, want off", code, got)
	}
	if code := e.do(t, "PUT", path, `{"enabled":true}`, &got); code != 200 || !got.Enabled {
		t.Fatalf("turn on: %d %+v", code, got)
	}
	if code := e.do(t, "GET", path, "", &got); code != 200 || !got.Enabled {
		t.Errorf("after turning on: %d %+v", code, got)
	}
	var fail struct{ Error string }
	if code := e.do(t, "PUT", path, `{"enabled":"yes"}`, &fail); code != 400 || fail.Error == "" {
		t.Errorf("bad body: %d %q, want 400 saying why", code, fail.Error)
	}
	if code := e.do(t, "GET", path, "", &got); !got.Enabled || code != 200 {
		t.Errorf("a bad body changed the setting: %+v", got)
	}
	if len(settings()) == 0 {
		t.Error("no sync.settings event")
	}
}
