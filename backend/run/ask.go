package run

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Ask raises a card for an agent without a model turn: a system run in a new
// session of kind SourceTemplate, paused on the card from the start. The
// person answers it like any card (a credential or a connector form goes
// into the variables as usual); the answer, or a dismissal, ends that run
// and nothing resumes from it. kind is a pause kind other than takeover and
// request its request value (pause.CredentialRequest for a credential card,
// …), checked as an agent's would be.
func (s *Service) Ask(ctx context.Context, agentID, kind string, request any) (Pause, error) {
	req, err := checkAsked(kind, request)
	if err != nil {
		return Pause{}, err
	}
	k, _ := pause.Find(kind) // checkAsked found it
	title, _, err := k.Summary(req)
	if err != nil {
		return Pause{}, err
	}
	sess, err := s.NewSession(ctx, agentID, SourceTemplate, "")
	if err != nil {
		return Pause{}, err
	}
	var r Run
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if r, err = s.StartTx(ctx, tx, agentID, sess.ID, SourceTemplate, title, StartOptions{From: "Rerun"}); err != nil {
			return err
		}
		// Paused before it commits: no worker ever takes it for a model turn.
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = 'paused', started_at = ? WHERE id = ?`, store.FormatTime(r.CreatedAt), r.ID)
		return err
	})
	if err != nil {
		return Pause{}, fmt.Errorf("ask for a %s card: %w", kind, err)
	}
	r.Status, r.StartedAt = Paused, &r.CreatedAt
	s.publish("run.created", r)
	p, err := s.openPause(ctx, &r, kind, "", req, "")
	if err != nil {
		bg := context.WithoutCancel(ctx)
		if ferr := s.finish(bg, r.ID, Failed, "", err.Error(), ErrorData{err.Error()}); ferr != nil {
			s.log.Warn("end a card's run", "run", r.ID, "err", ferr)
		}
		return Pause{}, err
	}
	return p, nil
}

// checkAsked validates a card the app raises itself: the request must be
// its kind's.
func checkAsked(kind string, request any) (any, error) {
	k, ok := pause.Find(kind)
	if !ok {
		return nil, fault.Invalid("a %s card cannot carry a %T; use the request type of its kind", kind, request)
	}
	return k.FromApp(request)
}

// endAsked ends, inside the answer's transaction, the run of a card that Ask
// raised: done when answered, cancelled when dismissed.
func endAsked(ctx context.Context, tx *sql.Tx, p Pause, status string, now time.Time) error {
	end, output := Done, "Answered."
	if status == pause.Dismissed {
		end, output = Cancelled, "Dismissed."
	}
	if _, err := tx.ExecContext(ctx, `UPDATE pauses SET settled = 1 WHERE id = ?`, p.ID); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, output = ?, ended_at = ? WHERE id = ? AND status = 'paused'`,
		end, output, store.FormatTime(now), p.RunID)
	return err
}
