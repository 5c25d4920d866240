package run_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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

// StartEachTx queues the runs of many sessions in one go: the ones it
// refuses (a wrong session, another agent's, an empty input) get their
// error and write nothing; the others are queued in order, each session
// titled from its first run, each showing its input step (written, and
// so searchable, once the run leaves the queue), and they execute once
// Started.
func TestStartEachTx(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	ctx := context.Background()
	a, other := f.agent("Ada"), f.agent("Bo")
	s1, _ := f.svc.NewSession(ctx, a.ID, run.SourceSchedule, "")
	s2, _ := f.svc.NewSession(ctx, a.ID, run.SourceSchedule, "")
	otherSess, _ := f.svc.NewSession(ctx, other.ID, run.SourceSchedule, "")
	news := []run.NewRun{
		{AgentID: a.ID, SessionID: s1.ID, Source: run.SourceSchedule, From: "schedule", Input: "Water the plants.\nAll of them."},
		{AgentID: a.ID, SessionID: "ses_nope", Source: run.SourceSchedule, Input: "lost"},
		{AgentID: a.ID, SessionID: otherSess.ID, Source: run.SourceSchedule, Input: "not yours"},
		{AgentID: a.ID, SessionID: s2.ID, Source: run.SourceSchedule, Input: "   "},
		{AgentID: a.ID, SessionID: s2.ID, Source: run.SourceSchedule, Input: "Feed the cat."},
		{AgentID: a.ID, SessionID: s1.ID, Source: run.SourceSchedule, Input: "Water them again."},
	}
	var runs []run.Run
	var errs []error
	err := f.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		runs, errs, err = f.svc.StartEachTx(ctx, tx, news)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []error{nil, fault.ErrNotFound, fault.ErrInvalid, fault.ErrInvalid, nil, nil} {
		if (want == nil) != (errs[i] == nil) || want != nil && !errors.Is(errs[i], want) {
			t.Errorf("news[%d] (%s, %q): error %v, want %v", i, news[i].SessionID, news[i].Input, errs[i], want)
		}
		if (errs[i] == nil) != (runs[i].ID != "") {
			t.Errorf("news[%d]: run %q beside error %v", i, runs[i].ID, errs[i])
		}
	}
	for _, tc := range []struct {
		session, title string
		inputs         []string
	}{{s1.ID, "Water the plants.", []string{"Water the plants.\nAll of them.", "Water them again."}}, {s2.ID, "Feed the cat.", []string{"Feed the cat."}}} {
		list, _ := f.svc.List(ctx, run.ListOptions{SessionID: tc.session})
		var inputs []string
		for i := len(list) - 1; i >= 0; i-- { // newest first
			inputs = append(inputs, list[i].Input)
			if list[i].Status != run.Queued || list[i].Source != run.SourceSchedule {
				t.Errorf("run %s: %s from %s, want queued from schedule", list[i].ID, list[i].Status, list[i].Source)
			}
		}
		if fmt.Sprint(inputs) != fmt.Sprint(tc.inputs) {
			t.Errorf("session %s runs %q, want %q in order", tc.session, inputs, tc.inputs)
		}
		if got, _ := f.svc.Session(ctx, tc.session); got.Title != tc.title {
			t.Errorf("session %s title %q, want %q", tc.session, got.Title, tc.title)
		}
	}
	if list, _ := f.svc.List(ctx, run.ListOptions{AgentID: other.ID}); len(list) != 0 {
		t.Errorf("the other agent got runs: %+v", list)
	}
	steps, err := f.svc.Steps(ctx, runs[0].ID)
	if err != nil || len(steps) != 1 || steps[0].Seq != 1 || steps[0].Kind != run.StepInput ||
		string(steps[0].Data) != `{"text":"Water the plants.\nAll of them.","from":"schedule"}` {
		t.Errorf("a queued run's steps: %+v (%v), want its input step", steps, err)
	}
	indexed := func() (n int) {
		if err := f.db.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'water'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := indexed(); n != 0 {
		t.Errorf("search finds %d queued inputs with 'water', want none before they start", n)
	}

	// Started wakes the workers, which take every session's oldest queued
	// run (s1's two as well): each gets the same answer, in whatever order
	// they ask.
	f.fake.Script(llmtest.Text("Fed."), llmtest.Text("Fed."), llmtest.Text("Fed."))
	f.svc.Started(runs[4])
	for _, r := range []run.Run{runs[4], runs[0], runs[5]} {
		if done := f.wait(r.ID); done.Status != run.Done || done.Output != "Fed." {
			t.Errorf("after Started: %s %q, want done", done.Status, done.Output)
		}
	}
	if n := indexed(); n != 2 {
		t.Errorf("search finds %d inputs with 'water' once they ran, want 2", n)
	}
	var stored int
	f.db.QueryRowContext(ctx, `SELECT count(*) FROM steps WHERE run_id = ? AND seq = 1 AND kind = 'input'`, runs[0].ID).Scan(&stored)
	if steps, _ := f.svc.Steps(ctx, runs[0].ID); stored != 1 || len(steps) != 2 || steps[1].Kind != run.StepModel {
		t.Errorf("a run that ran: %d stored input steps, steps %+v; want its input step stored, then the answer", stored, steps)
	}
}

// A run that leaves the queue without ever starting (cancelled here) gets
// its input step written before its closing one.
func TestQueuedRunCancelledKeepsItsInput(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	ctx := context.Background()
	a := f.agent("Ada")
	sess, _ := f.svc.NewSession(ctx, a.ID, run.SourceAPI, "")
	var r run.Run
	err := f.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = f.svc.StartTx(ctx, tx, a.ID, sess.ID, run.SourceAPI, "Tidy the garden shed.", run.StartOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Cancel(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	steps, err := f.svc.Steps(ctx, r.ID)
	if err != nil || len(steps) != 2 || steps[0].Kind != run.StepInput || string(steps[0].Data) != `{"text":"Tidy the garden shed.","from":"api"}` ||
		steps[1].Seq != 2 || steps[1].Kind != run.StepCancel {
		t.Fatalf("steps of a run cancelled in the queue: %+v (%v), want its input, then the cancel", steps, err)
	}
	var n int
	f.db.QueryRowContext(ctx, `SELECT count(*) FROM search_fts WHERE search_fts MATCH 'shed'`).Scan(&n)
	if n != 1 {
		t.Errorf("search finds the cancelled run's input %d times, want once", n)
	}
}
