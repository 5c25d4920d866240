package workspace

import (
	"context"
	"database/sql"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
)

// runNotifier hands the runtime's notices to the workspace's notifications.
type runNotifier struct{ *notify.Service }

func (n runNotifier) Notify(ctx context.Context, x run.Notice) error {
	_, err := n.Service.Notify(ctx, notify.Input{
		AgentID: x.AgentID, RunID: x.RunID, PauseID: x.PauseID,
		Kind: x.Kind, Title: x.Title, Body: x.Body, Automated: x.Automated,
	})
	return err
}

// automationRuns queues the runs of schedules or triggers (source says
// which), each in the automation's own session: schedule.Runs and
// trigger.Runs over the run service.
type automationRuns struct {
	runs   *run.Service
	source string
}

func (a automationRuns) NewSession(ctx context.Context, agentID string) (string, error) {
	s, err := a.runs.NewSession(ctx, agentID, a.source, "")
	return s.ID, err
}

// StartEachTx queues the runs of a burst of schedule fires, each in its
// schedule's session.
func (a automationRuns) StartEachTx(ctx context.Context, tx *sql.Tx, starts []schedule.Start) ([]string, []error, error) {
	news := make([]run.NewRun, len(starts))
	for i, x := range starts {
		news[i] = run.NewRun{AgentID: x.AgentID, SessionID: x.SessionID, Source: a.source, From: x.From, Input: x.Input}
	}
	runs, errs, err := a.runs.StartEachTx(ctx, tx, news)
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids, errs, err
}

// StartManyTx queues the runs of a trigger's calls that share a commit.
func (a automationRuns) StartManyTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, from string, inputs []string) ([]string, error) {
	runs, err := a.runs.StartManyTx(ctx, tx, agentID, sessionID, a.source, inputs, run.StartOptions{From: from})
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids, err
}

func (a automationRuns) Started(agentID, sessionID, runID string) {
	a.runs.Started(run.Run{ID: runID, AgentID: agentID, SessionID: sessionID})
}

// Find looks among the session's latest 1000 runs: it settles one
// interrupted fire or delivery, whose run, if any, is recent.
func (a automationRuns) Find(ctx context.Context, sessionID, marker string) (string, error) {
	runs, err := a.runs.List(ctx, run.ListOptions{SessionID: sessionID, Limit: 1000})
	for _, r := range runs {
		if strings.Contains(r.Input, marker) {
			return r.ID, nil
		}
	}
	return "", err
}

// templateCards raises a template install's cards (template.Cards) through
// the run service.
type templateCards struct{ runs *run.Service }

func (c templateCards) Ask(ctx context.Context, agentID, kind string, request any) error {
	_, err := c.runs.Ask(ctx, agentID, kind, request)
	return err
}
