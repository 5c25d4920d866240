// Package budget owns the spend limits of a workspace: per run and per day,
// in tokens and in money (USD, priced from the model price table), set for
// the workspace and for each agent. 0 is no limit. This package only stores
// and checks the limits; the run engine enforces them before every model
// call (backend/run/budget.go).
package budget

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Upper bounds that catch a typo (a limit in cents, an extra zero run) while
// leaving room for any real budget.
const (
	MaxTokens = 1_000_000_000_000
	MaxUSD    = 1_000_000
)

// Limits are one scope's budgets. 0 means no limit.
type Limits struct {
	RunTokens int64   `json:"run_tokens"` // tokens one run may use
	RunUSD    float64 `json:"run_usd"`    // USD one run may spend
	DayTokens int64   `json:"day_tokens"` // tokens per day (the person's time zone)
	DayUSD    float64 `json:"day_usd"`    // USD per day
}

// Any reports whether at least one limit is set.
func (l Limits) Any() bool { return l.RunTokens > 0 || l.RunUSD > 0 || l.DayTokens > 0 || l.DayUSD > 0 }

// Update changes the limits that are not nil; 0 clears one.
type Update struct {
	RunTokens *int64   `json:"run_tokens"`
	RunUSD    *float64 `json:"run_usd"`
	DayTokens *int64   `json:"day_tokens"`
	DayUSD    *float64 `json:"day_usd"`
}

// Empty reports whether u changes nothing.
func (u Update) Empty() bool {
	return u.RunTokens == nil && u.RunUSD == nil && u.DayTokens == nil && u.DayUSD == nil
}

// Apply returns l with u's changes, checked.
func (u Update) Apply(l Limits) (Limits, error) {
	if u.RunTokens != nil {
		l.RunTokens = *u.RunTokens
	}
	if u.RunUSD != nil {
		l.RunUSD = *u.RunUSD
	}
	if u.DayTokens != nil {
		l.DayTokens = *u.DayTokens
	}
	if u.DayUSD != nil {
		l.DayUSD = *u.DayUSD
	}
	return l, l.Check()
}

// Check refuses negative, non-finite and absurd limits.
func (l Limits) Check() error {
	for _, t := range []struct {
		name string
		v    int64
	}{{"run_tokens", l.RunTokens}, {"day_tokens", l.DayTokens}} {
		if t.v < 0 || t.v > MaxTokens {
			return fault.Invalid("%s is %d; give a number of tokens from 0 (no limit) to %d", t.name, t.v, int64(MaxTokens))
		}
	}
	for _, m := range []struct {
		name string
		v    float64
	}{{"run_usd", l.RunUSD}, {"day_usd", l.DayUSD}} {
		if math.IsNaN(m.v) || math.IsInf(m.v, 0) || m.v < 0 || m.v > MaxUSD {
			return fault.Invalid("%s is %v; give an amount in US dollars from 0 (no limit) to %d", m.name, m.v, MaxUSD)
		}
	}
	return nil
}

// Service reads and changes the budgets of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	bus       *event.Bus
}

// NewService returns the budget service of the workspace whose database is
// db; bus (may be nil) hears "budget.updated".
func NewService(db *store.DB, workspaceID string, bus *event.Bus) *Service {
	return &Service{db: db, workspace: workspaceID, bus: bus}
}

// Workspace returns the workspace's own limits.
func (s *Service) Workspace(ctx context.Context) (Limits, error) { return s.get(ctx, s.db, "") }

// Agent returns an agent's limits (none set: all 0).
func (s *Service) Agent(ctx context.Context, agentID string) (Limits, error) {
	if agentID == "" {
		return Limits{}, fault.Invalid("name an agent")
	}
	return s.get(ctx, s.db, agentID)
}

// Both returns the workspace's limits and an agent's, read together.
func (s *Service) Both(ctx context.Context, agentID string) (ws, ag Limits, err error) {
	if ws, err = s.get(ctx, s.db, ""); err != nil {
		return
	}
	ag, err = s.get(ctx, s.db, agentID)
	return
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func (s *Service) get(ctx context.Context, q querier, agentID string) (Limits, error) {
	var l Limits
	err := q.QueryRowContext(ctx, `SELECT run_tokens, run_usd, day_tokens, day_usd FROM budgets WHERE agent_id = ?`, agentID).
		Scan(&l.RunTokens, &l.RunUSD, &l.DayTokens, &l.DayUSD)
	if errors.Is(err, sql.ErrNoRows) {
		return Limits{}, nil
	}
	if err != nil {
		return Limits{}, fmt.Errorf("read budget: %w", err)
	}
	return l, nil
}

// SetWorkspace changes the workspace's limits.
func (s *Service) SetWorkspace(ctx context.Context, u Update) (Limits, error) {
	return s.set(ctx, "", u)
}

// SetAgent changes an agent's limits. The agent must exist.
func (s *Service) SetAgent(ctx context.Context, agentID string, u Update) (Limits, error) {
	if agentID == "" {
		return Limits{}, fault.Invalid("name an agent")
	}
	return s.set(ctx, agentID, u)
}

func (s *Service) set(ctx context.Context, agentID string, u Update) (Limits, error) {
	var out Limits
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = s.SetTx(ctx, tx, agentID, u)
		return err
	})
	if err != nil {
		return Limits{}, err
	}
	s.Published(agentID)
	return out, nil
}

// SetTx changes the limits of agentID (empty: the workspace) inside tx; call
// Published after the commit.
func (s *Service) SetTx(ctx context.Context, tx *sql.Tx, agentID string, u Update) (Limits, error) {
	if agentID != "" {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE id = ?`, agentID).Scan(&n); err != nil {
			return Limits{}, fmt.Errorf("find agent: %w", err)
		}
		if n == 0 {
			return Limits{}, fault.NotFound("no agent with id %q", agentID)
		}
	}
	cur, err := s.get(ctx, tx, agentID)
	if err != nil {
		return Limits{}, err
	}
	l, err := u.Apply(cur)
	if err != nil {
		return Limits{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO budgets (agent_id, run_tokens, run_usd, day_tokens, day_usd, updated_at)
		VALUES (?, ?, ?, ?, ?, strftime('%Y-%m-%dT%H:%M:%fZ','now'))
		ON CONFLICT (agent_id) DO UPDATE SET run_tokens = excluded.run_tokens, run_usd = excluded.run_usd,
			day_tokens = excluded.day_tokens, day_usd = excluded.day_usd, updated_at = excluded.updated_at`,
		agentID, l.RunTokens, l.RunUSD, l.DayTokens, l.DayUSD); err != nil {
		return Limits{}, fmt.Errorf("save budget: %w", err)
	}
	return l, nil
}

// Published tells the UI that the limits of agentID (empty: the workspace)
// changed.
func (s *Service) Published(agentID string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: "budget.updated", ID: agentID, Agent: agentID})
	}
}
