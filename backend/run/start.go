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
// commit together, and many runs share one commit. It writes the run (with
// its input and who wrote it) and the session's title and time; the input
// step is written when the run leaves the queue (inputStep). Once tx has
// committed, pass the run to Started so the workers take it. A run whose
// transaction rolls back is simply gone.
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
// many there are, it costs two statements: the session's update and one
// multi-row INSERT of the runs. A fault error (a wrong session, or any
// input StartTx would refuse) is returned before anything is written.
func (s *Service) StartManyTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, source string, inputs []string, o StartOptions) ([]Run, error) {
	if o.From == "" {
		o.From = defaultFrom(source)
	}
	runs := make([]Run, len(inputs))
	rows := make([][]any, len(inputs))
	for i, input := range inputs {
		r, err := s.newRun(agentID, sessionID, source, input, o)
		if err != nil {
			return nil, err
		}
		runs[i] = r
		rows[i] = []any{r.ID, agentID, sessionID, source, o.ParentRunID, o.Depth, Queued, r.Input, o.From, store.FormatTime(r.CreatedAt)}
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
	return runs, nil
}

// newRun checks input and makes the queued run of it; a fault error says
// what to change.
func (s *Service) newRun(agentID, sessionID, source, input string, o StartOptions) (Run, error) {
	// A secret pasted into a message is masked before it is stored or
	// sent to a model.
	input = strings.TrimSpace(s.redact(input))
	if input == "" {
		return Run{}, fault.Invalid("the message is empty; write what the agent should do")
	}
	if len(input) > maxInput {
		return Run{}, fault.Invalid("the message is %d KiB; keep it under %d KiB (put long material in a file)", len(input)>>10, maxInput>>10)
	}
	// Each run has its own time, so the session's queue keeps their order.
	return Run{ID: store.NewSortedID("run"), AgentID: agentID, SessionID: sessionID, Source: source, ParentRunID: o.ParentRunID,
		Depth: o.Depth, Status: Queued, Input: input, CostKnown: true, CreatedAt: s.now(), Steps: 1}, nil
}

// defaultFrom is who the chat shows as the author of a run from source
// when its starter names nobody.
func defaultFrom(source string) string {
	return map[string]string{SourceChat: "you", SourceAPI: "api"}[source]
}

// NewRun is one run of StartEachTx.
type NewRun struct {
	AgentID, SessionID string
	Source             string // SourceSchedule, SourceTrigger, …
	From               string // who wrote the input, shown in the chat
	Input              string
}

// eachOwners is StartEachTx's check of the sessions; its rows are session
// ids (an unknown one has no agent).
const eachOwners = `SELECT k.value, coalesce(s.agent_id, '') FROM json_each(?) AS k LEFT JOIN sessions AS s ON s.id = k.value`

// eachBatch is how many rows one of StartEachTx's statements writes at most.
const eachBatch = 1024

// StartEachTx is StartTx for runs of many sessions: a burst of schedules
// due at one instant, each firing in its own session. It costs three
// statements for up to a thousand runs: the sessions are checked in one,
// updated in another, and the runs inserted in a multi-row statement.
//
// errs[i] is the fault error of news[i] (a wrong session or input), for
// which nothing is written; runs[i] is the queued run otherwise. Pass the
// runs without an error to Started once tx has committed. After any other
// error tx must be rolled back.
func (s *Service) StartEachTx(ctx context.Context, tx *sql.Tx, news []NewRun) (runs []Run, errs []error, err error) {
	runs, errs = make([]Run, len(news)), make([]error, len(news))
	ids := make([]string, len(news))
	for i, n := range news {
		ids[i] = n.SessionID
	}
	owner := make(map[string]string, len(news))
	st, err := s.db.Prepared(eachOwners)
	if err != nil {
		return nil, nil, err
	}
	b, _ := json.Marshal(ids)
	rows, err := tx.StmtContext(ctx, st).QueryContext(ctx, string(b))
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var id, agentID string
		if err := rows.Scan(&id, &agentID); err != nil {
			rows.Close()
			return nil, nil, err
		}
		owner[id] = agentID
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}

	var runRows [][]any
	type session struct{ at, title string }
	sessions := map[string]session{}
	var order []string
	for i, n := range news {
		switch a := owner[n.SessionID]; {
		case a == "":
			errs[i] = fault.NotFound("no session with id %q", n.SessionID)
			continue
		case a != n.AgentID:
			errs[i] = fault.Invalid("session %q belongs to another agent", n.SessionID)
			continue
		}
		o := StartOptions{From: n.From}
		if o.From == "" {
			o.From = defaultFrom(n.Source)
		}
		r, err := s.newRun(n.AgentID, n.SessionID, n.Source, n.Input, o)
		if err != nil {
			errs[i] = err
			continue
		}
		runs[i] = r
		ts := store.FormatTime(r.CreatedAt)
		runRows = append(runRows, []any{r.ID, r.AgentID, r.SessionID, r.Source, r.Input, o.From, ts})
		// A session's title comes from its first run; its time is its last.
		if x, ok := sessions[n.SessionID]; ok {
			sessions[n.SessionID] = session{ts, x.title}
		} else {
			sessions[n.SessionID] = session{ts, titleFrom(r.Input)}
			order = append(order, n.SessionID)
		}
	}
	if len(runRows) == 0 {
		return runs, errs, nil
	}
	sessionRows := make([][]any, 0, len(order))
	for _, id := range order {
		x := sessions[id]
		sessionRows = append(sessionRows, []any{id, x.at, x.title})
	}
	w, err := s.startStmts()
	if err != nil {
		return nil, nil, err
	}
	if err := w.eachSession.Exec(ctx, tx, sessionRows); err != nil {
		return nil, nil, err
	}
	if err := w.eachRun.Exec(ctx, tx, runRows); err != nil {
		return nil, nil, err
	}
	return runs, errs, nil
}

// startStatements are the writes of StartManyTx and StartEachTx.
type startStatements struct {
	session *sql.Stmt
	run     *store.Rows
	// StartEachTx's: rows are [session id, updated at, title] and [id,
	// agent id, session id, source, input, from, created at].
	eachSession, eachRun *store.Rows
}

func prepareStart(db *store.DB) (startStatements, error) {
	st := startStatements{
		run: &store.Rows{DB: db, Head: `INSERT INTO runs (id, agent_id, session_id, source, parent_run_id, depth, status, input,
			input_from, steps, created_at) VALUES`, Row: `(?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`},
	}
	st.eachSession = &store.Rows{DB: db, Max: eachBatch, Head: `UPDATE sessions SET updated_at = n.column2,
		title = CASE WHEN title = '' THEN n.column3 ELSE title END FROM (VALUES`, Row: `(?, ?, ?)`, Tail: `) AS n WHERE sessions.id = n.column1`}
	st.eachRun = &store.Rows{DB: db, Max: eachBatch, Head: `INSERT INTO runs (id, agent_id, session_id, source, status, input, input_from,
		steps, created_at) VALUES`, Row: `(?, ?, ?, ?, 'queued', ?, ?, 1, ?)`}
	err := db.PrepareAll(store.Statement{Into: &st.session, Query: `UPDATE sessions SET updated_at = ?,
		title = CASE WHEN title = '' THEN ? ELSE title END WHERE id = ? AND agent_id = ?`})
	return st, err
}

// inputStep writes run ?'s input step from the run's row, unless the run
// has steps already. A run is queued without it (a burst of webhook calls
// or schedules then writes only its runs, and the search index is not
// touched) and gets it when it leaves the queue: when a worker takes it,
// when it is cancelled or ends unstarted, when it waits on a card first.
// Until then Steps shows the step made from the row.
const inputStep = `INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at)
	SELECT id, 1, 'input', ` + inputStepData + `, created_at, created_at FROM runs
	WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM steps WHERE run_id = ?1)`

// inputStepData is the data of a run's input step (InputData) made from
// the run's row.
const inputStepData = `json_object('text', input, 'from', input_from)`

// writeInputStep runs inputStep for run id inside tx.
func (s *Service) writeInputStep(ctx context.Context, tx *sql.Tx, id string) error {
	st, err := s.db.Prepared(inputStep)
	if err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, st).ExecContext(ctx, id)
	return err
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
