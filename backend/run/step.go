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

// Step kinds.
const (
	StepInput      = "input"
	StepModel      = "model"
	StepToolCall   = "tool_call"
	StepToolResult = "tool_result"
	StepError      = "error"
	StepCancel     = "cancel"
	StepCompact    = "compact"
	StepNote       = "note"
	StepPause      = "pause"  // the run waits for a person (PauseData)
	StepResume     = "resume" // the person's answer was handed back (ResumeData)
)

// Step is one committed action of a run.
type Step struct {
	RunID        string          `json:"run_id"`
	Seq          int             `json:"seq"`
	Kind         string          `json:"kind"`
	Data         json.RawMessage `json:"data"`
	InputTokens  int             `json:"input_tokens"`
	OutputTokens int             `json:"output_tokens"`
	CostUSD      float64         `json:"cost_usd"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      time.Time       `json:"ended_at"`
}

// InputData is the message that started a run.
type InputData struct {
	Text string `json:"text"`
	From string `json:"from"`
}

// ToolCall is one tool the model asked for.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Via is the approval card whose approved item this call carries out;
	// such calls are the runtime's, not the model's, and stay out of the
	// conversation (the card's own result reports them).
	Via string `json:"via,omitempty"`
}

// ModelData is one model turn.
type ModelData struct {
	Text       string     `json:"text"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	StopReason string     `json:"stop_reason"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	Usage      llm.Usage  `json:"usage"`
	CostKnown  bool       `json:"cost_known"`
}

// ToolResultData is what a tool returned.
type ToolResultData struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Output     string `json:"output"`
	IsError    bool   `json:"is_error"`
	ChildRunID string `json:"child_run_id,omitempty"`
	// Decision is "approved" or "declined" for an action held for approval.
	Decision string `json:"decision,omitempty"`
	Via      string `json:"via,omitempty"`
	// Images the tool returned (a screenshot), kept as files in the
	// agent's folder; the model sees them during the run that took them.
	Images []ImageRef `json:"images,omitempty"`
}

// ImageRef is an image a tool returned, stored beside the agent.
type ImageRef struct {
	MediaType string `json:"media_type"`
	Path      string `json:"path"` // relative to the agent's folder
	Size      int    `json:"size"`
}

// ErrorData, CancelData, CompactData and NoteData are the other step kinds.
type (
	ErrorData struct {
		Message string `json:"message"`
	}
	CancelData struct {
		Reason string `json:"reason"`
	}
	CompactData struct {
		Summary string `json:"summary"`
		// Through is the last run the summary covers; history resumes after it.
		Through string `json:"through"`
	}
	NoteData struct {
		Text string `json:"text"`
	}
)

func scanStep(row store.Scanner) (Step, error) {
	var st Step
	var data, started, ended string
	err := row.Scan(&st.RunID, &st.Seq, &st.Kind, &data, &st.InputTokens, &st.OutputTokens, &st.CostUSD, &started, &ended)
	st.Data = json.RawMessage(data)
	st.StartedAt, st.EndedAt = store.ParseTime(started), store.ParseTime(ended)
	return st, err
}

const stepColumns = `run_id, seq, kind, data, input_tokens, output_tokens, cost_usd, started_at, ended_at`

// Steps returns a run's steps in order.
func (s *Service) Steps(ctx context.Context, runID string) ([]Step, error) {
	steps, err := store.Query(ctx, s.db, scanStep, `SELECT `+stepColumns+` FROM steps WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("read steps of %s: %w", runID, err)
	}
	return steps, nil
}

// stepCost is what a model step adds to its run's totals.
type stepCost struct {
	usage    llm.Usage
	usd      float64
	known    bool
	provider string
	model    string
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
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var seq int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM steps WHERE run_id = ?`, r.ID).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO steps (`+stepColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, seq, kind, string(b), in, out, usd, store.FormatTime(started), store.FormatTime(now)); err != nil {
			return err
		}
		if cost == nil {
			_, err := tx.ExecContext(ctx, `UPDATE runs SET steps = ? WHERE id = ?`, seq, r.ID)
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET steps = ?, provider = ?, model = ?,
			input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
			cache_read_tokens = cache_read_tokens + ?, cache_write_tokens = cache_write_tokens + ?,
			cost_usd = cost_usd + ?, cost_known = cost_known AND ? WHERE id = ?`,
			seq, cost.provider, cost.model, in, out, cost.usage.CacheReadTokens, cost.usage.CacheWriteTokens, usd, cost.known, r.ID)
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
