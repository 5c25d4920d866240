package run

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Serve executes runs until ctx is cancelled. It first resumes the runs a
// crash left running, then takes queued runs as workers free up, never two of
// one session at once. On return every run it started has stopped; runs cut
// short by the shutdown stay "running" and resume at the next Serve.
func (s *Service) Serve(ctx context.Context) error {
	if err := s.resume(ctx); err != nil {
		return err
	}
	s.wake()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	seen, swept := int64(-1), time.Now()
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			for _, cancel := range s.active {
				cancel(errShutdown)
			}
			s.mu.Unlock()
			s.wg.Wait()
			return nil
		case <-s.kick:
		case <-tick.C:
			// The tick is a safety net: whatever makes a run ready wakes
			// the workers. With nothing committed in this process since
			// the last pass, the queue is as that pass left it, and a pass
			// reads every queued run (90 ms of CPU for a backlog of 90,000
			// behind a busy session): look again only now and then, for
			// another process's writes.
			if s.db.Commits() == seen && time.Since(swept) < sweepEvery {
				continue
			}
		}
		seen, swept = s.db.Commits(), time.Now()
		s.passes.Add(1)
		if err := s.dispatch(ctx); err != nil {
			s.log.Error("dispatch runs", "err", err)
		}
	}
}

// sweepEvery is how often the workers look at the queue when nothing
// happened.
const sweepEvery = 30 * time.Second

// resume ends what the interrupted calls of the app before left running
// (their shell commands' process groups), then restarts the runs that were
// running when the app stopped. A run
// called by another run is not resumed on its own: its caller is told the
// call was interrupted, so the child ends as failed, as does a called run
// that was queued and never began.
func (s *Service) resume(ctx context.Context) error {
	if err := s.endInterrupted(ctx); err != nil {
		return fmt.Errorf("end the processes of interrupted calls: %w", err)
	}
	// A called agent's run that never began: its caller, which runs it
	// inline, stopped between queuing it and starting it. Nobody else
	// would (dispatch leaves such runs to their caller), and the caller
	// hears its call was interrupted. Before any run resumes: a resumed
	// caller may queue a new one.
	orphans, err := s.runsWhere(ctx, `status = 'queued' AND parent_run_id != '' AND started_at IS NULL`)
	if err != nil {
		return fmt.Errorf("find called runs that never began: %w", err)
	}
	for _, r := range orphans {
		if err := s.finish(ctx, r.ID, Failed, "", "its caller stopped (a restart) before it began",
			ErrorData{"interrupted by a restart before it began; the calling run was told"}); err != nil {
			return err
		}
	}
	running, err := s.runsWhere(ctx, `status = 'running'`)
	if err != nil {
		return fmt.Errorf("find runs to resume: %w", err)
	}
	for _, r := range running {
		// A called agent resumed from a card runs on its own while its
		// caller waits paused; it resumes like any run.
		if r.ParentRunID != "" && !s.callerWaits(ctx, r) {
			// Its transcript keeps what a call in flight became, as a
			// resumed run's does.
			if err := s.closeInterrupted(ctx, &r); err != nil {
				return err
			}
			if err := s.finish(ctx, r.ID, Failed, "", "interrupted by a restart while another agent waited for it",
				ErrorData{"interrupted by a restart; the calling run was told"}); err != nil {
				return err
			}
			continue
		}
		s.log.Info("resuming run", "run", r.ID, "agent", r.AgentID, "steps", r.Steps)
		s.launch(ctx, r)
	}
	return nil
}

// callerWaits reports whether r's caller is paused waiting for it.
func (s *Service) callerWaits(ctx context.Context, r Run) bool {
	parent, err := s.Get(ctx, r.ParentRunID)
	return err == nil && parent.Status == Paused
}

// runsWhere lists runs matching a fixed condition, oldest first.
func (s *Service) runsWhere(ctx context.Context, where string) ([]Run, error) {
	return store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE `+where+` ORDER BY created_at`)
}

// dispatch starts queued runs while workers are free, oldest first, skipping
// sessions that already have a run executing.
func (s *Service) dispatch(ctx context.Context) error {
	if s.held.Load() {
		return nil // all coworkers paused: the queue waits (hold.go)
	}
	s.mu.Lock()
	free := s.cfg.Workers - len(s.active)
	s.mu.Unlock()
	if free <= 0 {
		return nil
	}
	// Runs called by another agent execute inline in their caller, except
	// one that continues after a card while its caller waits paused. A
	// session with a run waiting for a person is busy until it is answered.
	// Only each free session's oldest queued run is a candidate, and at most
	// as many as there are free workers.
	queued, err := store.Query(ctx, s.db, scanRun, dispatchQuery, free+len(s.busySessions()))
	if err != nil {
		return err
	}
	for _, r := range queued {
		if free == 0 {
			break
		}
		s.mu.Lock()
		busy := s.sessions[r.SessionID]
		s.mu.Unlock()
		if busy {
			continue
		}
		s.launch(ctx, r)
		free--
	}
	return nil
}

// dispatchQuery reads the oldest queued run of each session that has one
// and no run running or paused, oldest first, up to ?1. The sessions with
// queued runs are walked one index seek each (runs_status is by status,
// session, time), so a deep backlog in one session costs a seek, not a
// read of each of its runs.
const dispatchQuery = `WITH RECURSIVE waiting(sid) AS (
		SELECT (SELECT min(session_id) FROM runs WHERE status = 'queued')
		UNION ALL
		SELECT (SELECT min(session_id) FROM runs WHERE status = 'queued' AND session_id > w.sid)
		FROM waiting w WHERE w.sid IS NOT NULL
	)
	SELECT ` + runColumns + ` FROM waiting w JOIN runs r ON r.id = (SELECT o.id FROM runs o
		WHERE o.status = 'queued' AND o.session_id = w.sid ORDER BY o.created_at, o.id LIMIT 1)
	WHERE (r.parent_run_id = '' OR r.started_at IS NOT NULL)
		AND w.sid NOT IN (SELECT session_id FROM runs WHERE status IN ('paused', 'running'))` + budgetWaits + `
	ORDER BY r.created_at, r.id LIMIT ?1`

// busySessions lists the sessions with a run executing in this process.
func (s *Service) busySessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		out = append(out, id)
	}
	return out
}

// launch executes r on its own goroutine.
func (s *Service) launch(ctx context.Context, r Run) {
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.active[r.ID] = cancel
	s.sessions[r.SessionID] = true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			cancel(nil)
			s.mu.Lock()
			delete(s.active, r.ID)
			delete(s.sessions, r.SessionID)
			s.mu.Unlock()
			s.wake()
		}()
		s.execute(runCtx, r)
	}()
}

// execute drives one run to its end (or to the app's shutdown).
func (s *Service) execute(ctx context.Context, r Run) {
	bg := context.WithoutCancel(ctx) // bookkeeping must outlive a cancel
	if r.Status != Running {
		now := s.now()
		r.Status, r.StartedAt = Running, &now
		// Claim the run: only a queued run starts, so a run read as queued
		// by an earlier dispatch pass, already executed or cancelled since,
		// never runs twice.
		// Its input step is written with the claim.
		claimed := false
		err := s.db.Tx(bg, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(bg, `UPDATE runs SET status = 'running', started_at = coalesce(started_at, ?) WHERE id = ? AND status = 'queued'`,
				store.FormatTime(now), r.ID)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return nil
			}
			claimed = true
			return s.writeInputStep(bg, tx, r.ID)
		})
		if err != nil {
			s.log.Error("start run", "run", r.ID, "err", err)
			return
		}
		if !claimed {
			return
		}
		s.publish("run.updated", r)
	}
	// The time limit counts working time: a run that waited days for a
	// person gets a full allowance again from the answer.
	deadline := r.StartedAt.Add(s.cfg.MaxDuration)
	var answered sql.NullString
	s.db.QueryRowContext(bg, `SELECT max(answered_at) FROM pauses WHERE run_id = ?`, r.ID).Scan(&answered)
	if answered.Valid {
		if t := store.ParseTime(answered.String).Add(s.cfg.MaxDuration); t.After(deadline) {
			deadline = t
		}
	}
	ctx, stop := context.WithDeadlineCause(ctx, deadline, errTimeLimit)
	defer stop()

	status, output, closing := s.loop(ctx, &r)
	if status == "" { // shutdown: leave it running, it resumes next start
		return
	}
	if status == Queued { // back in the queue behind a budget card, or held
		return
	}
	if status == Paused { // recorded with its card; it continues from the answer
		s.signal(r.ID)
		return
	}
	errMsg := ""
	if e, ok := closing.(ErrorData); ok {
		errMsg = e.Message
	}
	if err := s.finish(bg, r.ID, status, output, errMsg, closing); err != nil {
		s.log.Error("finish run", "run", r.ID, "err", err)
	}
	s.log.Info("run ended", "run", r.ID, "agent", r.AgentID, "status", status, "steps", r.Steps)
}

var errTimeLimit = errors.New("time limit")

// stopped translates a cancelled context into how the run ends; "" means the
// app is shutting down.
func (s *Service) stopped(ctx context.Context) (Status, any) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errShutdown):
		return "", nil
	case errors.Is(cause, errTimeLimit):
		return Failed, ErrorData{fmt.Sprintf("the run reached its time limit of %s and was stopped", s.cfg.MaxDuration)}
	default:
		return Cancelled, CancelData{Reason: "stopped by you"}
	}
}
