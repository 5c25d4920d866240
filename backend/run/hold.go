package run

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/event"
)

// heldKey is the meta row that remembers, across restarts, that the person
// paused all coworkers of the workspace.
const heldKey = "runs_held"

// KindHeld is the change published when all coworkers are paused or resumed.
const KindHeld = "workspace.held"

// loadHeld reads the pause-all switch once, at start.
func (s *Service) loadHeld(ctx context.Context) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, heldKey).Scan(&v)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		s.log.Warn("read the pause-all switch", "err", err)
	}
	s.held.Store(v == "1")
}

// Held reports whether all coworkers of the workspace are paused.
func (s *Service) Held() bool { return s.held.Load() }

// Hold pauses (on) or resumes all coworkers of the workspace. While paused,
// nothing new starts: schedules, triggers and messages still queue their
// runs, and a run executing stops at its next model turn and waits, queued,
// with every step kept. Resuming starts them again, oldest first.
func (s *Service) Hold(ctx context.Context, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, heldKey, v); err != nil {
		return fmt.Errorf("save the pause-all switch: %w", err)
	}
	if s.held.Swap(on) == on {
		return nil
	}
	s.log.Info("all coworkers", "paused", on)
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: KindHeld})
	}
	if !on {
		s.wake()
	}
	return nil
}

// holdRun puts r, executing, back in the queue while all coworkers are
// paused. A called agent finishes inside its caller, which then stops at its
// own next turn.
func (s *Service) holdRun(ctx context.Context, r *Run) (bool, error) {
	if !s.held.Load() || r.ParentRunID != "" {
		return false, nil
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'running'`, r.ID); err != nil {
		return false, fmt.Errorf("hold run %s: %w", r.ID, err)
	}
	r.Status = Queued
	s.publish("run.updated", *r)
	s.log.Info("run waits: all coworkers are paused", "run", r.ID, "agent", r.AgentID)
	return true, nil
}

// Working counts the agents with a run executing now.
func (s *Service) Working(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(DISTINCT agent_id) FROM runs WHERE status = 'running'`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count working agents: %w", err)
	}
	return n, nil
}
