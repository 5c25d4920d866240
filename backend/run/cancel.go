package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// errCancelled is the cause of a run stopped by a person; errShutdown of one
// stopped because the app is closing (it resumes at the next start).
var (
	errCancelled = errors.New("cancelled")
	errShutdown  = errors.New("app shutting down")
)

// Cancel stops a run: a queued run is cancelled at once, a running one within
// a second (its model call or tool is interrupted).
func (s *Service) Cancel(ctx context.Context, id string) (Run, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return Run{}, err
	}
	if r.Finished() {
		return r, nil
	}
	s.mu.Lock()
	cancel, running := s.active[id]
	s.mu.Unlock()
	if running && r.Status != Paused { // a paused run's worker is only winding down
		cancel(errCancelled)
		return s.Wait(ctx, id)
	}
	// Queued or paused: nothing executes it, record the end here. A run
	// waiting on the agents it called takes them along.
	reason := "cancelled before it ran"
	if r.Status == Paused {
		reason = "cancelled while it waited for you"
		kids, err := s.Children(ctx, id)
		if err != nil {
			return Run{}, err
		}
		for _, k := range kids {
			if k.Status == Paused || k.Status == Queued {
				if _, err := s.Cancel(ctx, k.ID); err != nil {
					return Run{}, err
				}
			}
		}
		if r, err = s.Get(ctx, id); err != nil || r.Finished() {
			return r, err
		}
	}
	if err := s.finish(ctx, id, Cancelled, r.Output, "", CancelData{Reason: reason}); err != nil {
		return Run{}, err
	}
	return s.Get(ctx, id)
}

// CancelAgent stops every unfinished run of an agent (before it is deleted).
func (s *Service) CancelAgent(ctx context.Context, agentID string) error {
	runs, err := store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs
		WHERE agent_id = ? AND status IN ('queued', 'running', 'paused')`, agentID)
	if err != nil {
		return fmt.Errorf("find runs of agent %s: %w", agentID, err)
	}
	for _, r := range runs {
		if _, err := s.Cancel(ctx, r.ID); err != nil {
			return err
		}
	}
	return nil
}
