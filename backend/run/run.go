// Package run executes agents. A run is a durable state machine in SQLite:
// every model turn, tool call, tool result, error and cancel is a step row
// committed before the next action, so after a crash a running run resumes
// from its last committed step, and a tool call that was in flight is reported
// to the model as interrupted instead of being repeated.
//
// Runs belong to sessions (conversation threads). Within one session runs go
// one at a time, in order; across sessions a worker pool runs many at once.
package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// Status is where a run is in its life.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Paused    Status = "paused" // waiting for a person (human-in-the-loop)
	Done      Status = "done"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Sources: what started a run.
const (
	SourceChat     = "chat"
	SourceAgent    = "agent"
	SourceAPI      = "api"
	SourceSchedule = "schedule"
	SourceTrigger  = "trigger"
	// SourceTemplate is a system run that only carries a card raised
	// without a model turn (Ask), e.g. while a template is installed.
	SourceTemplate = "template"
)

// Run is one execution of an agent.
type Run struct {
	ID               string     `json:"id"`
	AgentID          string     `json:"agent_id"`
	SessionID        string     `json:"session_id"`
	Source           string     `json:"source"`
	ParentRunID      string     `json:"parent_run_id"`
	Depth            int        `json:"depth"`
	Status           Status     `json:"status"`
	Input            string     `json:"input"`
	Output           string     `json:"output"`
	Error            string     `json:"error"`
	Provider         string     `json:"provider"`
	Model            string     `json:"model"`
	Steps            int        `json:"steps"`
	InputTokens      int        `json:"input_tokens"`
	OutputTokens     int        `json:"output_tokens"`
	CacheReadTokens  int        `json:"cache_read_tokens"`
	CacheWriteTokens int        `json:"cache_write_tokens"`
	CostUSD          float64    `json:"cost_usd"`
	CostKnown        bool       `json:"cost_known"`
	CreatedAt        time.Time  `json:"created_at"`
	StartedAt        *time.Time `json:"started_at"`
	EndedAt          *time.Time `json:"ended_at"`
}

// Finished reports whether the run has ended for good.
func (r Run) Finished() bool { return r.Status == Done || r.Status == Failed || r.Status == Cancelled }

// Models picks the model a run thinks with.
type Models interface {
	// Pick returns the provider and model to use. provider and model are what
	// the session or agent asks for; either may be empty, meaning "a
	// configured default". The error says how to configure one when none is.
	Pick(provider, model string) (p llm.Provider, providerName, modelName string, err error)
	// Cost prices one call; known is false when the model has no price.
	Cost(model string, u llm.Usage) (usd float64, known bool)
}

// Config tunes the runtime. Zero values take the defaults.
type Config struct {
	Workers     int           // runs executing at once across sessions (default 4)
	MaxSteps    int           // steps per run before it fails (default 50)
	MaxDuration time.Duration // wall time per run (default 30 min)
	MaxDepth    int           // call_agent nesting (default 3)
	// HistoryBudget is the estimated token size of a session's history past
	// which older turns are summarised (default 60 000).
	HistoryBudget int
	MaxTokens     int // per model answer (default 4096)
	Now           func() time.Time
	Location      *time.Location // the user's time zone for the prompt (default Local)
}

func (c *Config) defaults() {
	if c.Workers <= 0 {
		c.Workers = 4
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = 50
	}
	if c.MaxDuration <= 0 {
		c.MaxDuration = 30 * time.Minute
	}
	if c.MaxDepth <= 0 {
		c.MaxDepth = 3
	}
	if c.HistoryBudget <= 0 {
		c.HistoryBudget = 60000
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = 4096
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Location == nil {
		c.Location = time.Local
	}
}

// Service starts, executes, cancels and reads the runs of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	agents    *agent.Service
	boxes     *box.Service
	models    Models
	bus       *event.Bus
	log       *slog.Logger
	cfg       Config
	sharedDir string
	sharedDB  string
	memory    *memory.Service
	skills    *skill.Service
	vars      Variables
	notifier  Notifier
	sources   []ToolSource
	apps      *connector.Service
	browsers  Browsers
	brain     *brain.Service

	kick chan struct{}
	// startStmts are StartTx's statements, prepared once: schedules and
	// triggers queue runs in bursts, and an unprepared statement is parsed
	// again on every call.
	startStmts func() (startStatements, error)

	mu       sync.Mutex
	active   map[string]context.CancelCauseFunc // run id → cancel, for runs executing now
	sessions map[string]bool                    // sessions with a run executing now
	done     map[string]chan struct{}           // closed when the run finishes
	wg       sync.WaitGroup
}

// Deps is what the service is wired with.
type Deps struct {
	DB        *store.DB
	Workspace string
	Agents    *agent.Service
	Boxes     *box.Service
	Models    Models
	Bus       *event.Bus
	Logger    *slog.Logger
	SharedDir string // the workspace's shared folder
	SharedDB  string // the workspace's shared database
	// Memory and Skills back the memory and skills capabilities; nil turns
	// the family off (its tools say it is not available).
	Memory *memory.Service
	Skills *skill.Service
	// Vars are the workspace's secret variables: resolved in tools, masked
	// in everything a tool returns. Notifier raises notifications. Either
	// may be nil (no variables; no notifications).
	Vars     Variables
	Notifier Notifier
	// Sources add the tools that live outside package tool: each agent's
	// browser, the apps installed on it.
	Sources []ToolSource
	// Apps are the apps installed on the agents: their tools are a source,
	// their skills join the skill index, and a request_connector card
	// naming one carries its setup form. Nil: no apps.
	Apps *connector.Service
	// Browsers close takeover cards (nil: no browsers).
	Browsers Browsers
	// Brain is the workspace's pages every agent reads in its prompt and
	// with read_brain_page, and proposes edits to (nil: no Brain).
	Brain *brain.Service
}

// ToolSource gives an agent tools of its own making; it decides from the
// agent's capabilities which, if any.
type ToolSource interface {
	Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error)
}

// NewService returns the run service; call Serve to execute runs.
func NewService(d Deps, cfg Config) *Service {
	cfg.defaults()
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{
		db: d.DB, workspace: d.Workspace, agents: d.Agents, boxes: d.Boxes, models: d.Models,
		bus: d.Bus, log: log, cfg: cfg, sharedDir: d.SharedDir, sharedDB: d.SharedDB,
		memory: d.Memory, skills: d.Skills, vars: d.Vars, notifier: d.Notifier, sources: withBrain(withApps(d.Sources, d.Apps), d.Brain), apps: d.Apps, browsers: d.Browsers, brain: d.Brain,
		kick: make(chan struct{}, 1),
		startStmts: sync.OnceValues(func() (startStatements, error) {
			return prepareStart(d.DB)
		}),
		active: map[string]context.CancelCauseFunc{}, sessions: map[string]bool{}, done: map[string]chan struct{}{},
	}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

func (s *Service) publish(kind string, r Run) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: r.ID, Agent: r.AgentID, Session: r.SessionID})
	}
}

func (s *Service) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

const runColumns = `id, agent_id, session_id, source, parent_run_id, depth, status, input, output, error, provider, model,
	steps, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, cost_known, created_at, started_at, ended_at`

func scanRun(row store.Scanner) (Run, error) {
	var r Run
	var created string
	var started, ended sql.NullString
	err := row.Scan(&r.ID, &r.AgentID, &r.SessionID, &r.Source, &r.ParentRunID, &r.Depth, &r.Status, &r.Input, &r.Output, &r.Error,
		&r.Provider, &r.Model, &r.Steps, &r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens,
		&r.CostUSD, &r.CostKnown, &created, &started, &ended)
	r.CreatedAt = store.ParseTime(created)
	if started.Valid {
		t := store.ParseTime(started.String)
		r.StartedAt = &t
	}
	if ended.Valid {
		t := store.ParseTime(ended.String)
		r.EndedAt = &t
	}
	return r, err
}

// Get returns one run.
func (s *Service) Get(ctx context.Context, id string) (Run, error) {
	r, err := scanRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Run{}, fault.NotFound("no run with id %q", id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("get run %q: %w", id, err)
	}
	return r, nil
}

// ListOptions filters List.
type ListOptions struct {
	AgentID   string
	SessionID string
	Before    time.Time // only runs created before (paging); zero: no bound
	Limit     int       // default 100, at most 1000
}

// List returns runs newest first.
func (s *Service) List(ctx context.Context, o ListOptions) ([]Run, error) {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	o.Limit = min(o.Limit, 1000)
	q := `SELECT ` + runColumns + ` FROM runs WHERE 1=1`
	var args []any
	if o.AgentID != "" {
		q, args = q+` AND agent_id = ?`, append(args, o.AgentID)
	}
	if o.SessionID != "" {
		q, args = q+` AND session_id = ?`, append(args, o.SessionID)
	}
	if !o.Before.IsZero() {
		q, args = q+` AND created_at < ?`, append(args, store.FormatTime(o.Before))
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	runs, err := store.Query(ctx, s.db, scanRun, q, append(args, o.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return runs, nil
}

// Children returns the runs a run started with call_agent.
func (s *Service) Children(ctx context.Context, id string) ([]Run, error) {
	return store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE parent_run_id = ? ORDER BY created_at`, id)
}

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
	// A secret pasted into a message is masked before it is stored or sent
	// to a model.
	input = strings.TrimSpace(s.redact(input))
	if input == "" {
		return Run{}, fault.Invalid("the message is empty; write what the agent should do")
	}
	if len(input) > maxInput {
		return Run{}, fault.Invalid("the message is %d KiB; keep it under %d KiB (put long material in a file)", len(input)>>10, maxInput>>10)
	}
	if o.From == "" {
		o.From = map[string]string{SourceChat: "you", SourceAPI: "api"}[source]
	}
	st, err := s.startStmts()
	if err != nil {
		return Run{}, err
	}
	now := s.now()
	ts := store.FormatTime(now)
	// The session's check and its update are one statement: no row means
	// a wrong session, told apart below, with nothing written.
	res, err := tx.StmtContext(ctx, st.session).ExecContext(ctx, ts, titleFrom(input), sessionID, agentID)
	if err != nil {
		return Run{}, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return Run{}, err
	} else if n == 0 {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT agent_id FROM sessions WHERE id = ?`, sessionID).Scan(&owner)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return Run{}, fault.NotFound("no session with id %q", sessionID)
		case err != nil:
			return Run{}, err
		}
		return Run{}, fault.Invalid("session %q belongs to another agent", sessionID)
	}
	r := Run{ID: store.NewID("run"), AgentID: agentID, SessionID: sessionID, Source: source, ParentRunID: o.ParentRunID,
		Depth: o.Depth, Status: Queued, Input: input, CostKnown: true, CreatedAt: now, Steps: 1}
	data, _ := json.Marshal(InputData{Text: input, From: o.From})
	if _, err := tx.StmtContext(ctx, st.run).ExecContext(ctx, r.ID, agentID, sessionID, source, o.ParentRunID, o.Depth, r.Status, input, ts); err != nil {
		return Run{}, err
	}
	if _, err := tx.StmtContext(ctx, st.step).ExecContext(ctx, r.ID, string(data), ts, ts); err != nil {
		return Run{}, err
	}
	return r, nil
}

// startStatements are the writes of StartTx.
type startStatements struct{ session, run, step *sql.Stmt }

func prepareStart(db *store.DB) (startStatements, error) {
	var st startStatements
	err := db.PrepareAll(
		store.Statement{Into: &st.session, Query: `UPDATE sessions SET updated_at = ?, title = CASE WHEN title = '' THEN ? ELSE title END
			WHERE id = ? AND agent_id = ?`},
		store.Statement{Into: &st.run, Query: `INSERT INTO runs (id, agent_id, session_id, source, parent_run_id, depth, status, input,
			steps, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?)`},
		store.Statement{Into: &st.step, Query: `INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at) VALUES (?, 1, 'input', ?, ?, ?)`},
	)
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

// Wait blocks until the run has finished (or is paused) and returns it.
func (s *Service) Wait(ctx context.Context, id string) (Run, error) {
	for {
		r, err := s.Get(ctx, id)
		if err != nil || r.Finished() || r.Status == Paused {
			return r, err
		}
		s.mu.Lock()
		ch, ok := s.done[id]
		if !ok {
			ch = make(chan struct{})
			s.done[id] = ch
		}
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(time.Second): // a finish recorded by another path
		}
	}
}

// errCancelled is the cause of a run stopped by a person; errShutdown of one
// stopped because the app is closing (it resumes at the next start).
var (
	errCancelled = errors.New("cancelled")
	errShutdown  = errors.New("app shutting down")
)

// Cancel stops a run: a queued run is cancelled at once, a running one within
// a second (its model call or tool is interrupted).
func (s *Service) Cancel(ctx context.Context, id string) (Run, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return Run{}, err
	}
	if r.Finished() {
		return r, nil
	}
	s.mu.Lock()
	cancel, running := s.active[id]
	s.mu.Unlock()
	if running && r.Status != Paused { // a paused run's worker is only winding down
		cancel(errCancelled)
		return s.Wait(ctx, id)
	}
	// Queued or paused: nothing executes it, record the end here. A run
	// waiting on the agents it called takes them along.
	reason := "cancelled before it ran"
	if r.Status == Paused {
		reason = "cancelled while it waited for you"
		kids, err := s.Children(ctx, id)
		if err != nil {
			return Run{}, err
		}
		for _, k := range kids {
			if k.Status == Paused || k.Status == Queued {
				if _, err := s.Cancel(ctx, k.ID); err != nil {
					return Run{}, err
				}
			}
		}
		if r, err = s.Get(ctx, id); err != nil || r.Finished() {
			return r, err
		}
	}
	if err := s.finish(ctx, id, Cancelled, r.Output, "", CancelData{Reason: reason}); err != nil {
		return Run{}, err
	}
	return s.Get(ctx, id)
}

// Activity is what the board shows of an agent's runs.
type Activity struct {
	Running    int    `json:"running"`
	LastStatus Status `json:"last_status"`
	Waiting    int    `json:"waiting"` // open cards: the agent waits for you
}

// Activity returns, per agent with runs, how many run now and how its latest
// finished top-level run ended.
func (s *Service) Activity(ctx context.Context) (map[string]Activity, error) {
	out := map[string]Activity{}
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id,
		(SELECT count(*) FROM runs r2 WHERE r2.agent_id = r.agent_id AND r2.status IN ('running', 'queued')),
		(SELECT status FROM runs r3 WHERE r3.agent_id = r.agent_id AND r3.status IN ('done', 'failed', 'cancelled', 'paused')
			ORDER BY r3.created_at DESC LIMIT 1),
		(SELECT count(*) FROM pauses p WHERE p.agent_id = r.agent_id AND p.status = 'open')
		FROM runs r GROUP BY agent_id`)
	if err != nil {
		return nil, fmt.Errorf("read activity: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a Activity
		var last sql.NullString
		if err := rows.Scan(&id, &a.Running, &last, &a.Waiting); err != nil {
			return nil, err
		}
		a.LastStatus = Status(last.String)
		out[id] = a
	}
	return out, rows.Err()
}

// DayUsage is one day of an agent's runs.
type DayUsage struct {
	Day          string  `json:"day"` // YYYY-MM-DD in the user's time zone
	Runs         int     `json:"runs"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// Usage returns the last days of an agent's runs, one entry per day, oldest
// first, days without runs included.
func (s *Service) Usage(ctx context.Context, agentID string, days int) ([]DayUsage, error) {
	if days <= 0 || days > 366 {
		days = 30
	}
	loc := s.cfg.Location
	today := s.cfg.Now().In(loc)
	start := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, loc).AddDate(0, 0, -(days - 1))
	out := make([]DayUsage, days)
	index := map[string]int{}
	for i := range out {
		out[i].Day = start.AddDate(0, 0, i).Format("2006-01-02")
		index[out[i].Day] = i
	}
	runs, err := store.Query(ctx, s.db, func(row store.Scanner) (Run, error) {
		var r Run
		var created string
		err := row.Scan(&created, &r.InputTokens, &r.OutputTokens, &r.CostUSD)
		r.CreatedAt = store.ParseTime(created)
		return r, err
	}, `SELECT created_at, input_tokens, output_tokens, cost_usd FROM runs WHERE agent_id = ? AND created_at >= ?`,
		agentID, store.FormatTime(start))
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	for _, r := range runs {
		if i, ok := index[r.CreatedAt.In(loc).Format("2006-01-02")]; ok {
			out[i].Runs++
			out[i].InputTokens += r.InputTokens
			out[i].OutputTokens += r.OutputTokens
			out[i].CostUSD += r.CostUSD
		}
	}
	return out, nil
}

// CancelAgent stops every unfinished run of an agent (before it is deleted).
func (s *Service) CancelAgent(ctx context.Context, agentID string) error {
	runs, err := store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs
		WHERE agent_id = ? AND status IN ('queued', 'running', 'paused')`, agentID)
	if err != nil {
		return fmt.Errorf("find runs of agent %s: %w", agentID, err)
	}
	for _, r := range runs {
		if _, err := s.Cancel(ctx, r.ID); err != nil {
			return err
		}
	}
	return nil
}
