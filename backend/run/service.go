package run

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

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
	budgets   *budget.Service
	ledger    ledger

	kick chan struct{}
	// passes counts dispatch passes (a test reads it).
	passes atomic.Int64
	// startStmts are StartTx's statements, prepared once: schedules and
	// triggers queue runs in bursts, and an unprepared statement is parsed
	// again on every call.
	startStmts func() (startStatements, error)

	mu       sync.Mutex
	active   map[string]context.CancelCauseFunc // run id → cancel, for runs executing now
	sessions map[string]bool                    // sessions with a run executing now
	done     map[string]chan struct{}           // closed when the run finishes
	wg       sync.WaitGroup
	held     atomic.Bool // all coworkers paused (hold.go)
	// recordStmts are record's statements, prepared once: the loop runs
	// them at every step.
	recordStmts func() (recordStatements, error)
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
	// Budgets are the spend limits every model call is held to (nil: none).
	Budgets *budget.Service
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
	s := &Service{
		db: d.DB, workspace: d.Workspace, agents: d.Agents, boxes: d.Boxes, models: d.Models,
		bus: d.Bus, log: log, cfg: cfg, sharedDir: d.SharedDir, sharedDB: d.SharedDB,
		memory: d.Memory, skills: d.Skills, vars: d.Vars, notifier: d.Notifier, sources: withBrain(withApps(d.Sources, d.Apps), d.Brain, d.Vars), apps: d.Apps, browsers: d.Browsers, brain: d.Brain, budgets: d.Budgets,
		kick: make(chan struct{}, 1),
		startStmts: sync.OnceValues(func() (startStatements, error) {
			return prepareStart(d.DB)
		}),
		active: map[string]context.CancelCauseFunc{}, sessions: map[string]bool{}, done: map[string]chan struct{}{},
	}
	s.recordStmts = sync.OnceValues(func() (recordStatements, error) { return prepareRecord(d.DB) })
	s.loadHeld(context.Background())
	return s
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

// Notice is a notification the runtime raises: a card waiting, a message
// from the agent's notify tool, an automated run that failed.
type Notice struct {
	AgentID, RunID, PauseID string
	Kind, Title, Body       string
	Automated               bool // the run was not started by a person
}

// Notifier delivers notices (a *notify.Service behind an adapter).
type Notifier interface {
	Notify(ctx context.Context, n Notice) error
	// HandlePause marks the notice of a pause as handled once it is
	// answered, dismissed or cancelled.
	HandlePause(ctx context.Context, pauseID string) error
}

// Variables are the workspace's secret variables as the runtime needs them
// (a *secret.Variables).
type Variables interface {
	Set(ctx context.Context, name, value string) (secret.Info, error)
	Names() []string
	Redact(s string) string
	Resolve(text string) (string, error)
}
