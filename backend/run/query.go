package run

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Get returns one run.
func (s *Service) Get(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fault.NotFound("no run with id %q", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %q: %w", id, err)
	}
	return r, nil
}

// ListOptions filters List.
type ListOptions struct {
	AgentID   string
	SessionID string
	Before    time.Time // only runs created before (paging); zero: no bound
	Limit     int       // default 100, at most 1000
}

// List returns runs newest first.
func (s *Service) List(ctx context.Context, o ListOptions) ([]Run, error) {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	o.Limit = min(o.Limit, 1000)
	q := `SELECT ` + runColumns + ` FROM runs WHERE 1=1`
	var args []any
	if o.AgentID != "" {
		q, args = q+` AND agent_id = ?`, append(args, o.AgentID)
	}
	if o.SessionID != "" {
		q, args = q+` AND session_id = ?`, append(args, o.SessionID)
	}
	if !o.Before.IsZero() {
		q, args = q+` AND created_at < ?`, append(args, store.FormatTime(o.Before))
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	runs, err := store.Query(ctx, s.db, scanRun, q, append(args, o.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// Children returns the runs a run started with call_agent.
func (s *Service) Children(ctx context.Context, id string) ([]Run, error) {
	return store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE parent_run_id = ? ORDER BY created_at`, id)
}

// Wait blocks until the run has finished (or is paused) and returns it.
func (s *Service) Wait(ctx context.Context, id string) (Run, error) {
	for {
		r, err := s.Get(ctx, id)
		if err != nil || r.Finished() || r.Status == Paused {
			return r, err
		}
		s.mu.Lock()
		ch, ok := s.done[id]
		if !ok {
			ch = make(chan struct{})
			s.done[id] = ch
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Second): // a finish recorded by another path
		}
	}
}

// Activity is what the board shows of an agent's runs.
type Activity struct {
	Running    int    `json:"running"`
	LastStatus Status `json:"last_status"`
	Waiting    int    `json:"waiting"` // open cards: the agent waits for you
}

// Activity returns, per agent with runs, how many run now and how its latest
// finished top-level run ended.
func (s *Service) Activity(ctx context.Context) (map[string]Activity, error) {
	out := map[string]Activity{}
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id,
		(SELECT count(*) FROM runs r2 WHERE r2.agent_id = r.agent_id AND r2.status IN ('running', 'queued')),
		(SELECT status FROM runs r3 WHERE r3.agent_id = r.agent_id AND r3.status IN ('done', 'failed', 'cancelled', 'paused')
			ORDER BY r3.created_at DESC LIMIT 1),
		(SELECT count(*) FROM pauses p WHERE p.agent_id = r.agent_id AND p.status = 'open')
		FROM runs r GROUP BY agent_id`)
	if err != nil {
		return nil, fmt.Errorf("read activity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a Activity
		var last sql.NullString
		if err := rows.Scan(&id, &a.Running, &last, &a.Waiting); err != nil {
			return nil, err
		}
		a.LastStatus = Status(last.String)
		out[id] = a
	}
	return out, rows.Err()
}

// DayUsage is one day of an agent's runs.
type DayUsage struct {
	Day          string  `json:"day"` // YYYY-MM-DD in the user's time zone
	Runs         int     `json:"runs"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Usage returns the last days of an agent's runs, one entry per day, oldest
// first, days without runs included.
func (s *Service) Usage(ctx context.Context, agentID string, days int) ([]DayUsage, error) {
	if days <= 0 || days > 366 {
		days = 30
	}
	loc := s.cfg.Location
	today := s.cfg.Now().In(loc)
	start := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -(days - 1))
	out := make([]DayUsage, days)
	index := map[string]int{}
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i).Format("2006-01-02")
		index[out[i].Day] = i
	}
	runs, err := store.Query(ctx, s.db, func(row store.Scanner) (Run, error) {
		var r Run
		var created string
		err := row.Scan(&created, &r.InputTokens, &r.OutputTokens, &r.CostUSD)
		r.CreatedAt = store.ParseTime(created)
		return r, err
	}, `SELECT created_at, input_tokens, output_tokens, cost_usd FROM runs WHERE agent_id = ? AND created_at >= ?`,
		agentID, store.FormatTime(start))
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	for _, r := range runs {
		if i, ok := index[r.CreatedAt.In(loc).Format("2006-01-02")]; ok {
			out[i].Runs++
			out[i].InputTokens += r.InputTokens
			out[i].OutputTokens += r.OutputTokens
			out[i].CostUSD += r.CostUSD
		}
	}
	return out, nil
}
