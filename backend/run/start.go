package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// StartOptions are the optional parts of Start.
type StartOptions struct {
	From        string // who wrote the input, shown in the chat ("you", "@handle", "api")
	ParentRunID string
	Depth       int
}

// maxInput bounds a message that starts a run.
const maxInput = 200 << 10

// Start records a new queued run of agentID in sessionID with its input, and
// hands it to the workers. Chat, other agents and the API start runs here;
// schedules and triggers queue theirs with StartTx inside their own
// transactions.
func (s *Service) Start(ctx context.Context, agentID, sessionID, source, input string, o StartOptions) (Run, error) {
	var r Run
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = s.StartTx(ctx, tx, agentID, sessionID, source, input, o)
		return err
	})
	if err != nil {
		if fault.Is(err) {
			return Run{}, err
		}
		return Run{}, fmt.Errorf("start run: %w", err)
	}
	s.Started(r)
	return r, nil
}

// StartTx is Start inside tx, a transaction of the caller's, so that a run
// and the caller's own record of it (a schedule's fire, a webhook delivery)
// commit together, and many runs share one commit. It writes the run, its
// input step and the session's title and time; once tx has committed, pass
// the run to Started so the workers take it. A run whose transaction rolls
// back is simply gone.
//
// A wrong input or session is a fault error (fault.ErrInvalid,
// fault.ErrNotFound) returned before anything is written, so the caller may
// record it and go on with tx; after any other error tx must be rolled back.
func (s *Service) StartTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, source, input string, o StartOptions) (Run, error) {
	runs, err := s.StartManyTx(ctx, tx, agentID, sessionID, source, []string{input}, o)
	if err != nil {
		return Run{}, err
	}
	return runs[0], nil
}

// StartManyTx is StartTx for several runs of one session, queued in the
// order of inputs: a burst of webhook calls that share a commit. However
// many there are, it costs three statements: the runs and their input
// steps go in as one multi-row INSERT each, so the search index (a trigger
// on steps) is written once for all of them, not once a run. A fault error
// (a wrong session, or any input StartTx would refuse) is returned before
// anything is written.
func (s *Service) StartManyTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, source string, inputs []string, o StartOptions) ([]Run, error) {
	if o.From == "" {
		o.From = map[string]string{SourceChat: "you", SourceAPI: "api"}[source]
	}
	runs := make([]Run, len(inputs))
	rows := make([][]any, len(inputs))
	steps := make([][]any, len(inputs))
	for i, input := range inputs {
		// A secret pasted into a message is masked before it is stored or
		// sent to a model.
		input = strings.TrimSpace(s.redact(input))
		if input == "" {
			return nil, fault.Invalid("the message is empty; write what the agent should do")
		}
		if len(input) > maxInput {
			return nil, fault.Invalid("the message is %d KiB; keep it under %d KiB (put long material in a file)", len(input)>>10, maxInput>>10)
		}
		// Each run has its own time, so the session's queue keeps their order.
		now := s.now()
		ts := store.FormatTime(now)
		r := Run{ID: store.NewSortedID("run"), AgentID: agentID, SessionID: sessionID, Source: source, ParentRunID: o.ParentRunID,
			Depth: o.Depth, Status: Queued, Input: input, CostKnown: true, CreatedAt: now, Steps: 1}
		data, _ := json.Marshal(InputData{Text: input, From: o.From})
		runs[i] = r
		rows[i] = []any{r.ID, agentID, sessionID, source, o.ParentRunID, o.Depth, Queued, input, ts}
		steps[i] = []any{r.ID, string(data), ts, ts}
	}
	if len(runs) == 0 {
		return runs, nil
	}
	st, err := s.startStmts()
	if err != nil {
		return nil, err
	}
	// The session's check and its update are one statement: no row means
	// a wrong session, told apart below, with nothing written.
	res, err := tx.StmtContext(ctx, st.session).ExecContext(ctx, store.FormatTime(runs[len(runs)-1].CreatedAt),
		titleFrom(runs[0].Input), sessionID, agentID)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, err
	} else if n == 0 {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT agent_id FROM sessions WHERE id = ?`, sessionID).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil, fault.NotFound("no session with id %q", sessionID)
		case err != nil:
			return nil, err
		}
		return nil, fault.Invalid("session %q belongs to another agent", sessionID)
	}
	if err := st.run.Insert(ctx, tx, rows); err != nil {
		return nil, err
	}
	if err := st.step.Insert(ctx, tx, steps); err != nil {
		return nil, err
	}
	return runs, nil
}

// startStatements are the writes of StartManyTx.
type startStatements struct {
	session   *sql.Stmt
	run, step *store.Rows
}

func prepareStart(db *store.DB) (startStatements, error) {
	st := startStatements{
		run: &store.Rows{DB: db, Head: `INSERT INTO runs (id, agent_id, session_id, source, parent_run_id, depth, status, input,
			steps, created_at) VALUES`, Row: `(?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`},
		step: &store.Rows{DB: db, Head: `INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at) VALUES`,
			Row: `(?, 1, 'input', ?, ?, ?)`},
	}
	err := db.PrepareAll(store.Statement{Into: &st.session, Query: `UPDATE sessions SET updated_at = ?,
		title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ? AND agent_id = ?`})
	return st, err
}

// Started announces runs queued with StartTx whose transaction has
// committed: the UI hears of them and the workers take them. Only ID,
// AgentID, SessionID and ParentRunID of each are read.
func (s *Service) Started(runs ...Run) {
	wake := false
	s.mu.Lock()
	for _, r := range runs {
		// A run called by another agent runs inline in its caller; one
		// whose session is executing a run waits for it, and that run's
		// end wakes the workers. A burst of webhook calls to one trigger
		// so costs no dispatch per call.
		wake = wake || r.ParentRunID == "" && !s.sessions[r.SessionID]
	}
	s.mu.Unlock()
	for _, r := range runs {
		s.publish("run.created", r)
	}
	if wake {
		s.wake()
	}
}

func titleFrom(input string) string {
	line, _, _ := strings.Cut(input, "\n")
	if r := []rune(line); len(r) > 60 {
		line = string(r[:59]) + "…"
	}
	return line
}
