package run_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// StartTx queues a run inside the caller's transaction: it is gone when
// that rolls back, a wrong session fails before anything is written (the
// transaction goes on), and a committed run executes once Started.
func TestStartTxCommitsWithTheCaller(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	ctx := context.Background()
	a, other := f.agent("Ada"), f.agent("Bo")
	sess, err := f.svc.NewSession(ctx, a.ID, run.SourceTrigger, "")
	if err != nil {
		t.Fatal(err)
	}
	otherSess, _ := f.svc.NewSession(ctx, other.ID, run.SourceTrigger, "")

	var rolledBack run.Run
	callerFailed := errors.New("the caller's own write failed")
	err = f.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		if rolledBack, err = f.svc.StartTx(ctx, tx, a.ID, sess.ID, run.SourceTrigger, "first", run.StartOptions{}); err != nil {
			return err
		}
		return callerFailed
	})
	if !errors.Is(err, callerFailed) {
		t.Fatalf("tx: %v", err)
	}
	if _, err := f.svc.Get(ctx, rolledBack.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("a run whose transaction rolled back: %v, want not found", err)
	}

	var r run.Run
	err = f.db.Tx(ctx, func(tx *sql.Tx) error {
		for _, tc := range []struct {
			session string
			input   string
			want    error
		}{
			{"ses_nope", "hello", fault.ErrNotFound},
			{otherSess.ID, "hello", fault.ErrInvalid},
			{sess.ID, "   ", fault.ErrInvalid},
		} {
			if _, err := f.svc.StartTx(ctx, tx, a.ID, tc.session, run.SourceTrigger, tc.input, run.StartOptions{}); !errors.Is(err, tc.want) {
				t.Errorf("StartTx(session %s, %q): %v, want %v", tc.session, tc.input, err, tc.want)
			}
		}
		var err error
		r, err = f.svc.StartTx(ctx, tx, a.ID, sess.ID, run.SourceTrigger, "Count the orders.\nThen stop.", run.StartOptions{From: "webhook"})
		return err
	})
	if err != nil {
		t.Fatalf("the transaction after refused starts: %v", err)
	}
	list, _ := f.svc.List(ctx, run.ListOptions{AgentID: a.ID})
	if len(list) != 1 || list[0].ID != r.ID {
		t.Fatalf("runs %+v, want only the committed one", list)
	}
	if got, _ := f.svc.Session(ctx, sess.ID); got.Title != "Count the orders." {
		t.Errorf("session title %q, want the first line of the input", got.Title)
	}

	f.fake.Script(llmtest.Text("Counted."))
	f.svc.Started(r)
	if done := f.wait(r.ID); done.Status != run.Done || done.Output != "Counted." {
		t.Errorf("after Started: %s %q, want done with the answer", done.Status, done.Output)
	}
}
