package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Pause is a run waiting for a person: a card in the app. Its request and
// answer are the JSON of package pause's types for its kind; a stored answer
// never holds a secret value (credentials and secret form fields go straight
// into variables).
type Pause struct {
	ID         string          `json:"id"`
	RunID      string          `json:"run_id"`
	AgentID    string          `json:"agent_id"`
	SessionID  string          `json:"session_id"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	ToolCallID string          `json:"tool_call_id"`
	Request    json.RawMessage `json:"request"`
	Answer     json.RawMessage `json:"answer"` // null while open
	Automated  bool            `json:"automated"`
	CreatedAt  time.Time       `json:"created_at"`
	AnsweredAt *time.Time      `json:"answered_at"`
}

// PauseData is the step recorded when a run pauses; ResumeData when the
// person's answer is handed back to it.
type (
	PauseData struct {
		PauseID string `json:"pause_id"`
		Kind    string `json:"kind"`
	}
	ResumeData struct {
		PauseID string `json:"pause_id"`
		Status  string `json:"status"`
	}
)

// kind returns p's kind of pause.
func (p Pause) kind() (pause.Kind, error) {
	k, ok := pause.Find(p.Kind)
	if !ok {
		return nil, fmt.Errorf("pause %s has unknown kind %q", p.ID, p.Kind)
	}
	return k, nil
}

// dismissal returns what the person wrote when they dismissed p.
func (p Pause) dismissal() (pause.DismissAnswer, error) {
	d, err := pause.Decode[pause.DismissAnswer](p.Answer)
	if err != nil {
		return d, fmt.Errorf("read the dismissal of pause %s: %w", p.ID, err)
	}
	return d, nil
}

// approval returns p's request and answer as an approval card's (the
// answer is empty unless p was answered).
func (p Pause) approval() (pause.ApprovalRequest, pause.ApprovalAnswer, error) {
	var ans pause.ApprovalAnswer
	req, err := pause.Decode[pause.ApprovalRequest](p.Request)
	if err == nil && p.Status == pause.Answered {
		ans, err = pause.Decode[pause.ApprovalAnswer](p.Answer)
	}
	if err != nil {
		return req, ans, fmt.Errorf("read approval card %s: %w", p.ID, err)
	}
	return req, ans, nil
}

const pauseColumns = `id, run_id, agent_id, session_id, kind, status, tool_call_id, request, answer, automated, created_at, answered_at`

func scanPause(row store.Scanner) (Pause, error) {
	var p Pause
	var req, ans, created string
	var answered sql.NullString
	err := row.Scan(&p.ID, &p.RunID, &p.AgentID, &p.SessionID, &p.Kind, &p.Status, &p.ToolCallID, &req, &ans, &p.Automated, &created, &answered)
	p.Request = json.RawMessage(req)
	if ans == "" {
		ans = "null"
	}
	p.Answer = json.RawMessage(ans)
	p.CreatedAt = store.ParseTime(created)
	if answered.Valid {
		t := store.ParseTime(answered.String)
		p.AnsweredAt = &t
	}
	return p, err
}

// GetPause returns one pause.
func (s *Service) GetPause(ctx context.Context, id string) (Pause, error) {
	p, err := scanPause(s.db.QueryRowContext(ctx, `SELECT `+pauseColumns+` FROM pauses WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Pause{}, fault.NotFound("no pause with id %q", id)
	}
	if err != nil {
		return Pause{}, fmt.Errorf("get pause %q: %w", id, err)
	}
	return p, nil
}

// PauseFilter narrows Pauses; empty fields match everything.
type PauseFilter struct {
	AgentID string
	RunID   string
	Status  string
	Limit   int // default 100, at most 500
}

// Pauses lists pauses, newest first.
func (s *Service) Pauses(ctx context.Context, f PauseFilter) ([]Pause, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	f.Limit = min(f.Limit, 500)
	q := `SELECT ` + pauseColumns + ` FROM pauses WHERE 1=1`
	var args []any
	for col, v := range map[string]string{"agent_id": f.AgentID, "run_id": f.RunID, "status": f.Status} {
		if v != "" {
			q, args = q+` AND `+col+` = ?`, append(args, v)
		}
	}
	ps, err := store.Query(ctx, s.db, scanPause, q+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list pauses: %w", err)
	}
	return ps, nil
}

// OpenPauseIn returns the open pause a person sees in a session: one of its
// own runs', or one of the runs they called (call_agent), however deep.
func (s *Service) OpenPauseIn(ctx context.Context, sessionID string) (*Pause, error) {
	return s.openUnder(ctx, `SELECT id FROM runs WHERE session_id = ?`, sessionID)
}

// OpenPauseOf returns the card a paused run waits on: its own, or that of an
// agent it called.
func (s *Service) OpenPauseOf(ctx context.Context, runID string) (*Pause, error) {
	return s.openUnder(ctx, `SELECT id FROM runs WHERE id = ?`, runID)
}

func (s *Service) openUnder(ctx context.Context, seed, arg string) (*Pause, error) {
	p, err := scanPause(s.db.QueryRowContext(ctx, `WITH RECURSIVE tree(id) AS (
			`+seed+`
			UNION SELECT r.id FROM runs r JOIN tree t ON r.parent_run_id = t.id)
		SELECT `+pauseColumns+` FROM pauses WHERE status = 'open' AND run_id IN (SELECT id FROM tree)
		ORDER BY created_at DESC LIMIT 1`, arg))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find an open pause: %w", err)
	}
	return &p, nil
}

// openPause records a card and pauses the run in one transaction. output is
// what the run shows meanwhile: the agent's last message.
func (s *Service) openPause(ctx context.Context, r *Run, kind, toolCallID string, request any, output string) (Pause, error) {
	k, ok := pause.Find(kind)
	if !ok {
		return Pause{}, fmt.Errorf("open a pause of unknown kind %q", kind)
	}
	title, body, err := k.Summary(request)
	if err != nil {
		return Pause{}, fmt.Errorf("summarise a %s request: %w", kind, err)
	}
	req, err := json.Marshal(request)
	if err != nil {
		return Pause{}, fmt.Errorf("encode %s request: %w", kind, err)
	}
	now := s.now()
	p := Pause{ID: store.NewID("pau"), RunID: r.ID, AgentID: r.AgentID, SessionID: r.SessionID, Kind: kind, Status: pause.Open,
		ToolCallID: toolCallID, Request: req, Answer: json.RawMessage("null"), Automated: s.automated(ctx, *r), CreatedAt: now}
	step, _ := json.Marshal(PauseData{PauseID: p.ID, Kind: kind})
	ts := store.FormatTime(now)
	var seq int
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		// A run may wait on a card before it ever started (Ask).
		if err := s.writeInputStep(ctx, tx, r.ID); err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM steps WHERE run_id = ?`, r.ID).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?)`,
			r.ID, seq, StepPause, string(step), ts, ts); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO pauses (`+pauseColumns+`) VALUES (?, ?, ?, ?, ?, 'open', ?, ?, '', ?, ?, NULL)`,
			p.ID, p.RunID, p.AgentID, p.SessionID, p.Kind, p.ToolCallID, string(req), p.Automated, ts); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'paused', output = ?, steps = ? WHERE id = ?`, output, seq, r.ID)
		return err
	})
	if err != nil {
		return Pause{}, fmt.Errorf("pause run %s: %w", r.ID, err)
	}
	r.Status, r.Output, r.Steps = Paused, output, seq
	s.publish("run.updated", *r)
	s.publishPause("pause.created", p)
	if s.notifier != nil {
		if err := s.notifier.Notify(ctx, Notice{AgentID: p.AgentID, RunID: p.RunID, PauseID: p.ID, Kind: kind,
			Title: title, Body: body, Automated: p.Automated}); err != nil {
			s.log.Warn("notify of a pause", "run", r.ID, "err", err)
		}
	}
	s.log.Info("run paused for a person", "run", r.ID, "agent", r.AgentID, "kind", kind)
	return p, nil
}

func (s *Service) publishPause(kind string, p Pause) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: p.ID, Agent: p.AgentID, Session: p.SessionID})
	}
}

// Answer takes a person's answer to an open pause and queues its run to
// continue from it. body is the kind's answer as sent by the app, or
// {"dismiss": true, "note": "…"} to close the card without answering.
// Secrets in it (a credential, a form's secret fields) go into variables;
// what is stored and handed to the agent only names them.
func (s *Service) Answer(ctx context.Context, id string, body json.RawMessage) (Pause, error) {
	p, err := s.GetPause(ctx, id)
	if err != nil {
		return Pause{}, err
	}
	if p.Status != pause.Open {
		return Pause{}, fault.Conflict("this card was already %s", p.Status)
	}
	var dismiss struct {
		Dismiss bool   `json:"dismiss"`
		Note    string `json:"note"`
	}
	_ = json.Unmarshal(body, &dismiss) // a body that is no object is reported by checkAnswer
	status := pause.Answered
	var stored any
	if dismiss.Dismiss {
		status, stored = pause.Dismissed, pause.DismissAnswer{Dismissed: true, Note: strings.TrimSpace(dismiss.Note)}
	} else if stored, err = s.checkAnswer(ctx, p, body); err != nil {
		return Pause{}, err
	}
	ans, _ := json.Marshal(stored)
	now := s.now()
	r, err := s.Get(ctx, p.RunID)
	if err != nil {
		return Pause{}, err
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE pauses SET status = ?, answer = ?, answered_at = ? WHERE id = ? AND status = 'open'`,
			status, string(ans), store.FormatTime(now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fault.Conflict("this card was answered meanwhile")
		}
		if r.Source == SourceTemplate {
			return endAsked(ctx, tx, p, status, now)
		}
		if p.Kind == pause.Budget { // more for the run, or a higher limit, with the answer
			if err := s.answerBudget(ctx, tx, p, stored); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'paused'`, p.RunID)
		return err
	})
	if err != nil {
		return Pause{}, fmt.Errorf("answer pause %s: %w", id, err)
	}
	p.Status, p.Answer, p.AnsweredAt = status, ans, &now
	s.publishPause("pause.updated", p)
	if r, err := s.Get(ctx, p.RunID); err == nil {
		s.publish("run.updated", r)
	}
	if s.notifier != nil {
		if err := s.notifier.HandlePause(ctx, id); err != nil {
			s.log.Warn("mark a pause's notification handled", "pause", id, "err", err)
		}
	}
	if p.Kind == pause.Budget && s.budgets != nil {
		owner := p.AgentID // a raise changed the limit's owner: the agent's, or the workspace's
		if req, err := pause.Decode[pause.BudgetRequest](p.Request); err == nil && req.Owner == pause.ScopeWorkspace {
			owner = ""
		}
		s.budgets.Published(owner)
	}
	s.log.Info("pause answered", "pause", id, "run", p.RunID, "status", status)
	if r.Source == SourceTemplate {
		s.signal(p.RunID) // ended with its answer: nothing to resume
		return p, nil
	}
	s.wake()
	return p, nil
}

// checkAnswer validates an answer against the pause's request and returns
// what to store, after putting secrets into variables.
func (s *Service) checkAnswer(ctx context.Context, p Pause, body json.RawMessage) (any, error) {
	decode := func(v any) error {
		if err := jsonarg.Decode(body, v); err != nil {
			return fault.Invalid("the answer does not fit a %s card: %v", p.Kind, err)
		}
		return nil
	}
	k, err := p.kind()
	if err != nil {
		return nil, err
	}
	req, err := k.Request(p.Request)
	if err != nil {
		return nil, fmt.Errorf("read pause %s: %w", p.ID, err)
	}
	return k.Answer(ctx, req, decode, s.setVariable)
}

func (s *Service) setVariable(ctx context.Context, name, value string) error {
	if s.vars == nil {
		return errors.New("this workspace has no variables store")
	}
	_, err := s.vars.Set(ctx, name, value)
	return err
}

// closePauses cancels a run's open pause (the run was cancelled).
func (s *Service) closePauses(ctx context.Context, runID string) {
	open, err := s.Pauses(ctx, PauseFilter{RunID: runID, Status: pause.Open})
	if err != nil {
		s.log.Warn("find open pauses", "run", runID, "err", err)
		return
	}
	for _, p := range open {
		if _, err := s.db.ExecContext(ctx, `UPDATE pauses SET status = 'cancelled', answered_at = ? WHERE id = ? AND status = 'open'`,
			store.FormatTime(s.now()), p.ID); err != nil {
			s.log.Warn("cancel pause", "pause", p.ID, "err", err)
			continue
		}
		p.Status = pause.Cancelled
		s.publishPause("pause.updated", p)
		if s.notifier != nil {
			s.notifier.HandlePause(ctx, p.ID)
		}
	}
}
