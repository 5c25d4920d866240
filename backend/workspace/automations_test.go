package workspace_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
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

// The schedule loop serves with the workspace: a one-off due in a moment
// queues its run in the schedule's own session, in the user's time zone.
func TestScheduleLoopServesWithTheWorkspace(t *testing.T) {
	ctx := context.Background()
	_, w, a := served(t, workspace.Config{Timezone: "Europe/Berlin"})
	at := time.Now().Add(1500 * time.Millisecond) // one-offs are kept to the second
	sch, err := w.Schedules.Create(ctx, schedule.NewSchedule{AgentID: a.ID, Name: "Soon", Instruction: "Say hello.",
		Spec: schedule.Spec{Kind: schedule.KindOnce, At: &at}})
	if err != nil {
		t.Fatal(err)
	}
	if sch.Timezone != "Europe/Berlin" {
		t.Errorf("timezone %q, want the user's Europe/Berlin", sch.Timezone)
	}
	deadline := time.Now().Add(waittest.Patience)
	for {
		runs, err := w.Runs.List(ctx, run.ListOptions{SessionID: sch.SessionID})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			if runs[0].Source != run.SourceSchedule {
				t.Errorf("run source %q, want schedule", runs[0].Source)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of the one-off after %s (runs %v)", waittest.Patience, runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	h, err := w.Schedules.History(ctx, sch.ID, 10)
	if err != nil || len(h) != 1 || h[0].Outcome != schedule.OutcomeFired || h[0].RunID == "" {
		t.Errorf("history %+v %v, want one fire with its run", h, err)
	}
}

// A webhook token leads to the workspace of its trigger, among several.
func TestTriggerOwner(t *testing.T) {
	ctx := context.Background()
	h, w, a := served(t, workspace.Config{})
	other, err := h.Create(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	ow, _ := h.Workspace(other.ID)
	oboxes, _ := ow.Boxes.List(ctx)
	oa, err := ow.Agents.Create(ctx, agent.NewAgent{Name: "Bo", BoxID: oboxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "Orders", Instruction: "File it."})
	if err != nil {
		t.Fatal(err)
	}
	otherToken, _, err := ow.Triggers.Create(ctx, trigger.NewTrigger{AgentID: oa.ID, Name: "Leads", Instruction: "Call them."})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token string
		want        *workspace.Workspace
	}{
		{"first workspace", token, w},
		{"second workspace", otherToken, ow},
		{"unknown token", "rrh_nope", nil},
		{"not a token", "../etc/passwd", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, found, err := h.TriggerOwner(ctx, tc.token)
			if err != nil || found != (tc.want != nil) || got != tc.want {
				t.Errorf("TriggerOwner = %v, %v, %v; want %v", got, found, err, tc.want)
			}
		})
	}
}

// Deleting an agent deletes its schedules and triggers with it (the
// database cascades), and its webhook URL stops working.
func TestDeleteAgentTakesItsAutomations(t *testing.T) {
	ctx := context.Background()
	h, w, a := served(t, workspace.Config{})
	boxes, _ := w.Boxes.List(ctx)
	keep, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Keep", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	var schedules []schedule.Schedule
	var tokens []string
	for _, id := range []string{a.ID, keep.ID} {
		sch, err := w.Schedules.Create(ctx, schedule.NewSchedule{AgentID: id, Name: "Digest", Instruction: "Post it.",
			Spec: schedule.Spec{Kind: schedule.KindCron, Cron: "0 9 * * *"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Schedules.RunNow(ctx, sch.ID); err != nil {
			t.Fatal(err)
		}
		token, _, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: id, Name: "Orders", Instruction: "File it."})
		if err != nil {
			t.Fatal(err)
		}
		schedules, tokens = append(schedules, sch), append(tokens, token)
	}

	if err := w.DeleteAgent(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Schedules.Get(ctx, schedules[0].ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("schedule of the deleted agent: %v, want not found", err)
	}
	if list, _ := w.Triggers.List(ctx, a.ID); len(list) != 0 {
		t.Errorf("triggers of the deleted agent: %+v, want none", list)
	}
	if _, found, _ := h.TriggerOwner(ctx, tokens[0]); found {
		t.Error("the deleted agent's webhook token still opens a trigger")
	}
	var fires int
	w.DB.QueryRowContext(ctx, `SELECT count(*) FROM schedule_fires WHERE schedule_id = ?`, schedules[0].ID).Scan(&fires)
	if fires != 0 {
		t.Errorf("%d fires of the deleted schedule left, want 0", fires)
	}
	if _, err := w.Schedules.Get(ctx, schedules[1].ID); err != nil {
		t.Errorf("the other agent's schedule: %v", err)
	}
	if _, found, _ := h.TriggerOwner(ctx, tokens[1]); !found {
		t.Error("the other agent's webhook token no longer opens its trigger")
	}
}
