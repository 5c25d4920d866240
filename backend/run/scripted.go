package run

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// ScriptedCard is the opening of a run that starts with a card the app
// raises itself rather than the model: the app writes the model turn (its
// text and one pause tool call, e.g. ask_question) and the run waits on the
// card. Once answered, the run goes on like any other: the answer is the
// tool call's result, and the model takes the next turn.
type ScriptedCard struct {
	Input string   // the run's input, written by "Rerun"
	Text  string   // what the agent says above the card
	Call  ToolCall // the pause tool call the card answers
	Kind  string   // the pause kind, e.g. pause.Question
	// Request is the card: the request type of Kind, checked as an
	// agent's would be.
	Request any
}

// StartScripted starts a chat run of agentID in sessionID that opens with
// c's card, with no model involved: the card shows even when no model is
// configured. The run is paused from its first commit, so no worker takes
// it before its card exists.
func (s *Service) StartScripted(ctx context.Context, agentID, sessionID string, c ScriptedCard) (Run, Pause, error) {
	req, err := checkAsked(c.Kind, c.Request)
	if err != nil {
		return Run{}, Pause{}, err
	}
	if c.Call.ID == "" || c.Call.Name == "" {
		return Run{}, Pause{}, fmt.Errorf("a scripted card needs its tool call's id and name")
	}
	var r Run
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if r, err = s.StartTx(ctx, tx, agentID, sessionID, SourceChat, c.Input, StartOptions{From: "Rerun"}); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'paused', started_at = ? WHERE id = ?`, store.FormatTime(r.CreatedAt), r.ID)
		return err
	})
	if err != nil {
		return Run{}, Pause{}, fmt.Errorf("start a run with a card: %w", err)
	}
	r.Status, r.StartedAt = Paused, &r.CreatedAt
	s.publish("run.created", r)
	bg := context.WithoutCancel(ctx)
	fail := func(err error) (Run, Pause, error) {
		if ferr := s.finish(bg, r.ID, Failed, "", err.Error(), ErrorData{err.Error()}); ferr != nil {
			s.log.Warn("end a scripted run", "run", r.ID, "err", ferr)
		}
		return Run{}, Pause{}, err
	}
	now := s.now()
	md := ModelData{Text: c.Text, ToolCalls: []ToolCall{c.Call}, StopReason: "tool_use", Provider: "rerun", Model: "scripted", CostKnown: true}
	if err := s.record(bg, &r, StepModel, md, now, nil); err != nil {
		return fail(err)
	}
	if err := s.record(bg, &r, StepToolCall, c.Call, now, nil); err != nil {
		return fail(err)
	}
	p, err := s.openPause(bg, &r, c.Kind, c.Call.ID, req, c.Text)
	if err != nil {
		return fail(err)
	}
	return r, p, nil
}
