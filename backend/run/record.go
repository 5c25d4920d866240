package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// stepCost is what a model step adds to its run's totals.
type stepCost struct {
	usage    llm.Usage
	usd      float64
	known    bool
	provider string
	model    string
}

// recordStatements are the writes of record: the step (numbered after the
// run's last, which it returns) and the run's counters, without or with a
// model step's cost.
type recordStatements struct{ step, steps, cost *sql.Stmt }

func prepareRecord(db *store.DB) (recordStatements, error) {
	var st recordStatements
	err := db.PrepareAll(
		store.Statement{Into: &st.step, Query: `INSERT INTO steps (` + stepColumns + `, cache_tokens)
			SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ? FROM steps WHERE run_id = ? RETURNING seq`},
		store.Statement{Into: &st.steps, Query: `UPDATE runs SET steps = ? WHERE id = ?`},
		store.Statement{Into: &st.cost, Query: `UPDATE runs SET steps = ?, provider = ?, model = ?,
			input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
			cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
			cost_usd = cost_usd + ?, cost_known = cost_known AND ? WHERE id = ?`},
	)
	return st, err
}

func cacheTokens(cost *stepCost) int {
	if cost == nil {
		return 0
	}
	return cost.usage.CacheReadTokens + cost.usage.CacheWriteTokens
}

// record commits one step and the run's counters in a single transaction.
func (s *Service) record(ctx context.Context, r *Run, kind string, data any, started time.Time, cost *stepCost) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode %s step: %w", kind, err)
	}
	now := s.now()
	var in, out int
	var usd float64
	if cost != nil {
		in, out, usd = cost.usage.InputTokens, cost.usage.OutputTokens, cost.usd
	}
	st, err := s.recordStmts()
	if err != nil {
		return err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int
		if err := tx.StmtContext(ctx, st.step).QueryRowContext(ctx, r.ID, kind, string(b), in, out, usd,
			store.FormatTime(started), store.FormatTime(now), cacheTokens(cost), r.ID).Scan(&seq); err != nil {
			return err
		}
		if cost == nil {
			_, err := tx.StmtContext(ctx, st.steps).ExecContext(ctx, seq, r.ID)
			return err
		}
		_, err := tx.StmtContext(ctx, st.cost).ExecContext(ctx, seq, cost.provider, cost.model, in, out,
			cost.usage.CacheReadTokens, cost.usage.CacheWriteTokens, usd, cost.known, r.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("record %s step of %s: %w", kind, r.ID, err)
	}
	r.Steps++
	if cost != nil {
		r.Provider, r.Model = cost.provider, cost.model
		r.InputTokens += in
		r.OutputTokens += out
		r.CacheReadTokens += cost.usage.CacheReadTokens
		r.CacheWriteTokens += cost.usage.CacheWriteTokens
		r.CostUSD += usd
		r.CostKnown = r.CostKnown && cost.known
	}
	s.publish("run.step", *r)
	return nil
}

// finish ends a run with a final status, recording the closing step (an error
// or cancel step; none for done) in the same transaction.
func (s *Service) finish(ctx context.Context, id string, status Status, output, errMsg string, closing any) error {
	now := store.FormatTime(s.now())
	var kind string
	switch closing.(type) {
	case ErrorData:
		kind = StepError
	case CancelData:
		kind = StepCancel
	}
	var r Run
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := s.writeInputStep(ctx, tx, id); err != nil { // one that never started
			return err
		}
		if kind != "" {
			b, _ := json.Marshal(closing)
			if _, err := tx.ExecContext(ctx, `INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at)
				SELECT ?, coalesce(max(seq), 0) + 1, ?, ?, ?, ? FROM steps WHERE run_id = ?`, id, kind, string(b), now, now, id); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, output = ?, error = ?, ended_at = ?,
			steps = (SELECT max(seq) FROM steps WHERE run_id = ?) WHERE id = ?`, status, output, errMsg, now, id, id); err != nil {
			return err
		}
		var err error
		r, err = scanRun(tx.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
		return err
	})
	if err != nil {
		return fmt.Errorf("finish run %s: %w", id, err)
	}
	s.publish("run.updated", r)
	s.signal(id)
	if status == Cancelled {
		s.closePauses(ctx, id)
	}
	s.childEnded(ctx, r)
	if status == Failed && s.notifier != nil && r.ParentRunID == "" && s.automated(ctx, r) {
		if err := s.notifier.Notify(ctx, Notice{AgentID: r.AgentID, RunID: r.ID, Kind: "error", Title: "A run failed",
			Body: r.Error, Automated: true}); err != nil {
			s.log.Warn("notify of a failed run", "run", id, "err", err)
		}
	}
	return nil
}

// signal wakes whoever Waits for the run: it finished or paused.
func (s *Service) signal(id string) {
	s.mu.Lock()
	if ch, ok := s.done[id]; ok {
		close(ch)
		delete(s.done, id)
	}
	s.mu.Unlock()
}
