package schedule_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
)

// scheduleRuns is the adapter the package doc shows, over the real run
// service.
type scheduleRuns struct{ *run.Service }

func (r scheduleRuns) NewSession(ctx context.Context, agentID string) (string, error) {
	s, err := r.Service.NewSession(ctx, agentID, run.SourceSchedule, "")
	return s.ID, err
}

func (r scheduleRuns) StartEachTx(ctx context.Context, tx *sql.Tx, starts []schedule.Start) ([]string, []error, error) {
	news := make([]run.NewRun, len(starts))
	for i, x := range starts {
		news[i] = run.NewRun{AgentID: x.AgentID, SessionID: x.SessionID, Source: run.SourceSchedule, From: x.From, Input: x.Input}
	}
	runs, errs, err := r.Service.StartEachTx(ctx, tx, news)
	ids := make([]string, len(runs))
	for i, x := range runs {
		ids[i] = x.ID
	}
	return ids, errs, err
}

func (r scheduleRuns) Started(agentID, sessionID, runID string) {
	r.Service.Started(run.Run{ID: runID, AgentID: agentID, SessionID: sessionID})
}

func (r scheduleRuns) Find(ctx context.Context, sessionID, marker string) (string, error) {
	runs, err := r.Service.List(ctx, run.ListOptions{SessionID: sessionID, Limit: 1000})
	for _, x := range runs {
		if strings.Contains(x.Input, marker) {
			return x.ID, nil
		}
	}
	return "", err
}

// With the real run service: a fire queues a run in the schedule's own
// session, and a claim interrupted by a restart is found by its marker.
func TestWithRunService(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, monday)
	dir := t.TempDir()
	agents := agent.NewService(e.db, filepath.Join(dir, "agents"), "ws", nil)
	runs := run.NewService(run.Deps{DB: e.db, Workspace: "ws", Agents: agents, Boxes: box.NewService(e.db, "ws", nil)},
		run.Config{Now: e.clock.Now})
	svc := schedule.NewService(schedule.Deps{DB: e.db, Workspace: "ws", Runs: scheduleRuns{runs}},
		schedule.Config{Now: e.clock.Now, DefaultTimezone: "Europe/Berlin"})

	sch, err := svc.Create(ctx, schedule.NewSchedule{AgentID: e.agent, Name: "Digest", Instruction: "Post the digest.",
		Spec: schedule.Spec{Kind: schedule.KindCron, Cron: "0 9 * * *"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := runs.Session(ctx, sch.SessionID)
	if err != nil || sess.Kind != run.SourceSchedule || sess.AgentID != e.agent {
		t.Fatalf("session %+v %v, want a schedule session of the agent", sess, err)
	}
	e.clock.Set(monday.Add(time.Hour))
	if _, err := svc.FireDue(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := runs.List(ctx, run.ListOptions{SessionID: sch.SessionID})
	if err != nil || len(list) != 1 {
		t.Fatalf("runs %v %v, want 1", list, err)
	}
	r := list[0]
	if r.Source != run.SourceSchedule || r.Status != run.Queued || !strings.HasSuffix(r.Input, "Post the digest.") {
		t.Errorf("run source %q status %q input %q", r.Source, r.Status, r.Input)
	}
	h, _ := svc.History(ctx, sch.ID, 10)
	if len(h) != 1 || h[0].RunID != r.ID {
		t.Fatalf("history %+v, want linked to %s", h, r.ID)
	}
	if got, _ := (scheduleRuns{runs}).Find(ctx, sch.SessionID, h[0].ID); got != r.ID {
		t.Errorf("Find by fire id = %q, want %q", got, r.ID)
	}

	f, err := svc.RunNow(ctx, sch.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := runs.Get(ctx, f.RunID); err != nil || got.SessionID != sch.SessionID {
		t.Errorf("run now: %+v %v, want a run in the schedule's session", got, err)
	}
}
