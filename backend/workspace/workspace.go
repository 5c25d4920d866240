// Package workspace is the composition root of the workspace machine.
//
// Open wires every domain service over a data directory; the desktop shell,
// `rerun serve` and tests all start through it, and only they (and transports
// handed a *Home) may import this package. A data directory holds several
// workspaces, each in its own folder:
//
//	<data-dir>/state.json                  which workspace was used last
//	<data-dir>/models.json                 base URLs entered in Settings → Models
//	<data-dir>/secret.key                  the data key, when the OS keychain is not used
//	<data-dir>/device.json                 this device's id, for sync (replica.Device)
//	<data-dir>/workspaces/<id>/workspace.db boxes, agents, souls, …
//	<data-dir>/workspaces/<id>/shared/      the shared folder
//	<data-dir>/workspaces/<id>/shared.db    the shared database
//	<data-dir>/workspaces/<id>/vectors/      memory embeddings (chromem-go), with an embedder
//	<data-dir>/workspaces/<id>/agents/<agent-id>/{files/,skills/,agent.db,browser/}
//	<data-dir>/workspaces/<id>/templates/<template-id>/{soul.md,skills/,files/}
//	<data-dir>/workspaces/<id>/relay-client.db the relay deliveries taken, when linked (package relaylink)
package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/agentfile"
	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/models"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/retention"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/search"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// Config says where the workspaces live and how agents run.
type Config struct {
	// DataDir is the data directory (required; see envconfig.DataDir).
	DataDir string
	// Logger receives operational logs; nil discards them. Home wraps it so
	// that no variable value of an open workspace is ever logged (see
	// Home.Logger).
	Logger *slog.Logger
	// Keychain keeps the data key, which seals every workspace's variables,
	// in the OS keychain when one is reachable (envconfig.Keychain). False
	// (the zero value, and what tests use) keeps it in <data-dir>/secret.key.
	Keychain bool
	// LLM is the model configuration from the environment
	// (envconfig.LLM); keys entered in the app, kept in each workspace's
	// variables, win over it.
	LLM llm.Config
	// Runtime tunes the run workers of every workspace.
	Runtime run.Config
	// EmbedBaseURL, EmbedAPIKey and EmbedModel name an OpenAI-compatible
	// embeddings endpoint (envconfig.Embedder) for recall by meaning. With
	// neither a key nor a base URL, memories are recalled by keywords only;
	// the model defaults to memory.NewOpenAI's.
	EmbedBaseURL string
	EmbedAPIKey  string
	EmbedModel   string
	// Timezone is the IANA zone of new schedules that name none: the
	// user's (envconfig.Timezone). Default UTC.
	Timezone string
	// Chrome is the browser the agents' browsers run (envconfig.Chrome);
	// empty: the Chromium or Chrome found in the usual places.
	Chrome string
	// LocalAddr is the local server's host:port (e.g. 127.0.0.1:7777):
	// the agents' browsers never load it.
	LocalAddr string
	// APITools gives the built-in agents the API's tool set in process
	// (mcpapi.InProcess); nil: they have only their board tools.
	APITools func(*Workspace) run.ToolSource
	// Onboarding makes a workspace created on this device start with the
	// Foreman's onboarding (backend/foreman); false (the zero value, and what
	// tests use) starts nothing by itself. main sets it unless
	// RERUN_ONBOARDING=off.
	Onboarding bool
	// FirecrawlAPIKey and FirecrawlBaseURL let the Foreman read websites
	// through Firecrawl (envconfig.Firecrawl); a FIRECRAWL_API_KEY
	// workspace variable wins over the key. Base URL "" is Firecrawl's.
	FirecrawlAPIKey  string
	FirecrawlBaseURL string
	// Retention tunes every workspace's pruning (interval, batch, clock);
	// the zero value prunes hourly. What is kept is each workspace's
	// setting (retention.Settings).
	Retention retention.Config
	// MCPRegistry is the MCP registry the Apps catalog searches and
	// installs from beside the built-in apps (envconfig.MCPRegistry): a
	// base URL, or "" or "off" for none (what tests use). Its answers are
	// cached in <data-dir>/mcp-registry.json for offline use.
	MCPRegistry string
}

// embedder is the configured embeddings client, nil for keywords only.
func (c Config) embedder() memory.Embedder {
	if c.EmbedAPIKey == "" && c.EmbedBaseURL == "" {
		return nil
	}
	return memory.NewOpenAI(memory.OpenAIConfig{BaseURL: c.EmbedBaseURL, APIKey: c.EmbedAPIKey, Model: c.EmbedModel})
}

// Info names a workspace.
type Info struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Workspace is one open workspace and its services.
type Workspace struct {
	Dir    string
	DB     *store.DB
	Boxes  *box.Service
	Agents *agent.Service
	Runs   *run.Service
	Keys   *apikey.Service
	Memory *memory.Service
	Skills *skill.Service
	// Variables are the workspace's secret variables (provider keys
	// entered in the app among them); Notify its notifications.
	Variables *secret.Variables
	Notify    *notify.Service
	// Outbox sends notifications by email and to outgoing hooks.
	Outbox *outbox.Service
	// Models picks the runs' models with this workspace's provider keys.
	Models *models.Service
	// Schedules and Triggers are the agents' automations: scheduled tasks
	// and webhook triggers, each queuing runs in its own session.
	Schedules *schedule.Service
	Triggers  *trigger.Service
	// Browsers are the agents' Chromiums (agents/<id>/browser), closed with
	// the workspace.
	Browsers *browser.Manager
	// Connectors are the apps and MCP servers installed on the agents;
	// their stdio servers end when the workspace closes.
	Connectors *connector.Service
	// Templates is the template library: agents packaged to install again
	// here or elsewhere.
	Templates *template.Service
	// Brain is the workspace's pages about the company, read by every
	// agent; the Foreman writes the first ones (brain.Service.Save).
	Brain *brain.Service
	// Budgets are the spend limits of the workspace and its agents, held
	// by every model call of its runs.
	Budgets *budget.Service
	// Replica syncs the workspace's records with its other devices, hooked
	// to its services by relaylink.OpenReplica (sync.go).
	Replica *replica.Engine
	// Relay is the workspace's link to a rerun-relay: the triggers' public
	// URLs, pairing, the devices, sync's status and settings.
	Relay *relaylink.Service
	// Foreman is the built-in agent that onboards the workspace: its
	// onboarding state and its tools.
	Foreman *foreman.Foreman
	// Search is full-text search over what the runs did and the
	// notifications (snippets masked with the variables); Retention prunes
	// old runs in the background, pins runs and measures disk use.
	Search    *search.Service
	Retention *retention.Service
	// AgentFiles export an agent with what it learned, and import one.
	AgentFiles *agentfile.Service

	bus  *event.Bus
	mu   sync.Mutex
	info Info
	// stopServing ends what Home.serve started for this workspace (nil
	// before); served counts those goroutines.
	stopServing context.CancelFunc
	served      sync.WaitGroup
}

// Revision moves on with every change published for the workspace (its
// agents, boxes and runs, here or applied by sync from another device):
// what was read at one revision is current while Revision returns the same
// (event.Bus.Revision). Nothing else writes a workspace's records: its data
// directory is locked to one process.
func (w *Workspace) Revision() uint64 { return w.bus.Revision(w.Info().ID) }

// Info returns the workspace's id and current name.
func (w *Workspace) Info() Info {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.info
}

// DeleteAgent stops the agent's runs and its apps' servers, then deletes it
// with its folder and memories. Its schedules and triggers go with its row
// (cascade).
func (w *Workspace) DeleteAgent(ctx context.Context, id string) error {
	if a, err := w.Agents.Get(ctx, id); err != nil {
		return err
	} else if a.Builtin != "" {
		return w.Agents.Delete(ctx, id) // refused, saying why
	}
	if err := w.Runs.CancelAgent(ctx, id); err != nil {
		return err
	}
	// Its Chromium lets go of the profile before the folder goes.
	if err := w.Browsers.Forget(id); err != nil {
		return err
	}
	if err := w.uninstallApps(ctx, id); err != nil {
		return err
	}
	if err := w.Agents.Delete(ctx, id); err != nil {
		return err
	}
	// The rows went with the agent (cascade); this drops the vectors too.
	return w.Memory.ForgetAgent(ctx, id)
}

// Home is an open data directory: every workspace in it, and the change bus
// they all publish on.
type Home struct {
	cfg Config
	log *slog.Logger
	bus event.Bus
	// modelSettings are the base URLs and prices every workspace's Models
	// share.
	modelSettings *models.Shared
	// embedder is shared by every workspace: one endpoint, one model.
	embedder memory.Embedder
	// box seals every workspace's variables with the data key, kept in
	// keyStore (keyNote says where, for Settings).
	box      *secret.Box
	keyStore secret.KeyStore
	keyNote  string
	// variables of the open workspaces, read by the logger's redaction
	// without h.mu (a log line written while h.mu is held must not wait
	// for it).
	variables atomic.Pointer[[]*secret.Variables]
	// registry is the MCP registry every workspace's Apps catalog
	// searches (one cache for the computer).
	registry *connector.Registry

	mu      sync.Mutex
	open    map[string]*Workspace
	current string
	serving context.Context // set by Serve: workspaces created later start serving too
	group   sync.WaitGroup
	unlock  func()
}

// DefaultWorkspaceName and DefaultBoxName are what a first start creates.
const (
	DefaultWorkspaceName = "Personal"
	DefaultBoxName       = "Main"
)

// Open opens the data directory, creating it (with a "Personal" workspace that
// has one box) on first start, and opens every workspace in it.
func Open(ctx context.Context, cfg Config) (*Home, error) {
	if cfg.DataDir == "" {
		return nil, fault.Invalid("no data directory given")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	registry, err := cfg.mcpRegistry()
	if err != nil {
		return nil, err
	}
	h := &Home{cfg: cfg, open: map[string]*Workspace{}, embedder: cfg.embedder(), registry: registry}
	h.log = slog.New(secret.RedactingHandler(log.Handler(), h.redact))
	log = h.log
	if err := os.MkdirAll(h.workspacesDir(), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	unlock, err := lockDataDir(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	h.unlock = unlock
	shared, err := models.OpenShared(cfg.DataDir, cfg.LLM)
	if err != nil {
		unlock()
		return nil, err
	}
	h.modelSettings = shared
	oldBox, err := h.loadKey()
	if err != nil {
		unlock()
		return nil, err
	}
	entries, err := os.ReadDir(h.workspacesDir())
	if err != nil {
		return nil, fmt.Errorf("read data directory: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "ws_") {
			continue
		}
		if _, err := os.Stat(filepath.Join(h.workspacesDir(), e.Name(), "workspace.db")); err != nil {
			continue // not a workspace (or a half-made one): leave it alone
		}
		if _, err := h.openWorkspace(ctx, e.Name()); err != nil {
			h.Close()
			return nil, err
		}
	}
	if len(h.open) == 0 {
		if _, err := h.Create(ctx, DefaultWorkspaceName); err != nil {
			h.Close()
			return nil, err
		}
	}
	vars := map[string]*secret.Variables{}
	for _, w := range h.workspaces() {
		vars[w.Info().ID] = w.Variables
	}
	if err := h.modelSettings.MoveSealedKeys(ctx, []*secret.Box{h.box, oldBox}, vars, h.log); err != nil {
		h.Close()
		return nil, err
	}
	h.current = h.readState()
	if _, ok := h.open[h.current]; !ok {
		list := h.infos()
		h.current = list[0].ID
	}
	log.Info("workspaces open", "dir", cfg.DataDir, "count", len(h.open), "current", h.current)
	return h, nil
}

// loadKey loads the data key once for every workspace. It also returns a
// box for a secret.key file that is not the data key (nil when there is
// none): provider keys sealed in models.json by older versions open with it.
func (h *Home) loadKey() (old *secret.Box, err error) {
	key, where, note, err := secret.LoadKey(h.cfg.DataDir, secret.KeyOptions{Keychain: h.cfg.Keychain})
	if err != nil {
		return nil, fmt.Errorf("load the key of the workspace variables: %w", err)
	}
	if h.box, err = secret.NewBox(key); err != nil {
		return nil, fmt.Errorf("load the key of the workspace variables: %w", err)
	}
	h.keyStore, h.keyNote = where, note
	h.log.Info("data key loaded", "store", string(where))
	if b, err := os.ReadFile(filepath.Join(h.cfg.DataDir, "secret.key")); err == nil && where != secret.KeyStoreFile {
		if old, err := secret.NewBox(b); err == nil {
			return old, nil
		}
	}
	return nil, nil
}

// KeyStore says where the data key that seals the variables is kept, with a
// sentence for Settings → Variables.
func (h *Home) KeyStore() (secret.KeyStore, string) { return h.keyStore, h.keyNote }

// Logger is the home's logger: it never writes a value of a variable of an
// open workspace. Transports should log through it.
func (h *Home) Logger() *slog.Logger { return h.log }

// redact masks every value of every open workspace's variables in s.
func (h *Home) redact(s string) string {
	if vars := h.variables.Load(); vars != nil {
		for _, v := range *vars {
			s = v.Redact(s)
		}
	}
	return s
}

// keepVariables refreshes the list redact reads; h.mu is held.
func (h *Home) keepVariables() {
	vars := make([]*secret.Variables, 0, len(h.open))
	for _, w := range h.open {
		vars = append(vars, w.Variables)
	}
	h.variables.Store(&vars)
}

// workspaces returns the open workspaces.
func (h *Home) workspaces() []*Workspace {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Workspace, 0, len(h.open))
	for _, w := range h.open {
		out = append(out, w)
	}
	return out
}

// DataDir is the data directory.
func (h *Home) DataDir() string { return h.cfg.DataDir }

// Events is the bus every workspace's changes are published on.
func (h *Home) Events() *event.Bus { return &h.bus }

func (h *Home) workspacesDir() string { return filepath.Join(h.cfg.DataDir, "workspaces") }
func (h *Home) statePath() string     { return filepath.Join(h.cfg.DataDir, "state.json") }

func cleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fault.Invalid("a workspace needs a name")
	case utf8.RuneCountInString(name) > 64:
		return "", fault.Invalid("workspace name is %d characters; keep it to 64", utf8.RuneCountInString(name))
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", fault.Invalid("workspace name contains a control character; use plain text")
	}
	return name, nil
}

// openWorkspace opens (migrating) one workspace folder and wires its services.
func (h *Home) openWorkspace(ctx context.Context, id string) (*Workspace, error) {
	return h.openWorkspaceThen(ctx, id, nil)
}

// openWorkspaceThen opens workspace id and, when ready is set, calls it
// before the workspace is listed or served (a restored copy settles its
// automations there).
func (h *Home) openWorkspaceThen(ctx context.Context, id string, ready func(*Workspace) error) (*Workspace, error) {
	dir := filepath.Join(h.workspacesDir(), id)
	for _, sub := range []string{"shared", "agents", "templates"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("open workspace %s: %w", id, err)
		}
	}
	db, err := store.Open(ctx, filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", id, err)
	}
	// The shared database belongs to the agents (space_db_* tools); it has no
	// schema of ours, so opening it once just makes sure it exists.
	shared, err := store.Open(ctx, filepath.Join(dir, "shared.db"), nil)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s shared database: %w", id, err)
	}
	shared.Close()
	mem, err := memory.New(db, memory.Config{
		Embedder: h.embedder, VectorDir: filepath.Join(dir, "vectors"), Logger: h.log.With("workspace", id),
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s memories: %w", id, err)
	}
	vars, err := secret.NewVariables(db, h.box, id, &h.bus)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s variables: %w", id, err)
	}
	vars.Mask("app", h.cfg.appSecrets()) // masks.go
	browsers, err := h.openBrowsers(id, dir)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s browsers: %w", id, err)
	}
	w := &Workspace{
		bus:       &h.bus,
		Browsers:  browsers,
		Dir:       dir,
		DB:        db,
		Boxes:     box.NewService(db, id, &h.bus),
		Agents:    agent.NewService(db, filepath.Join(dir, "agents"), id, &h.bus),
		Keys:      apikey.NewService(db),
		Memory:    mem,
		Skills:    skill.New(db, skill.Config{AgentsDir: filepath.Join(dir, "agents")}),
		Variables: vars,
		Notify:    notify.New(db, id, &h.bus),
		Brain:     brain.New(db, id, &h.bus),
		Budgets:   budget.NewService(db, id, &h.bus),
		Models:    models.New(models.Deps{Shared: h.modelSettings, Variables: vars}),
		info:      Info{ID: id},
	}
	w.Outbox = outbox.New(outbox.Deps{
		DB: db, Workspace: id, Bus: &h.bus, Notify: w.Notify, Vars: vars,
		Logger: h.log.With("workspace", id), AppURL: h.appURL(),
	}, outbox.Config{})
	w.Notify.SetPlanner(w.Outbox)
	if w.Connectors, err = h.openApps(id, dir, db, vars, w.Notify); err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s apps: %w", id, err)
	}
	w.Runs = run.NewService(run.Deps{
		DB: db, Workspace: id, Agents: w.Agents, Boxes: w.Boxes, Models: w.Models, Bus: &h.bus,
		Logger: h.log.With("workspace", id), SharedDir: filepath.Join(dir, "shared"), SharedDB: filepath.Join(dir, "shared.db"),
		Memory: w.Memory, Skills: w.Skills, Brain: w.Brain, Budgets: w.Budgets,
		Vars: vars, Notifier: runNotifier{w.Notify},
		Apps:    w.Connectors,
		Sources: []run.ToolSource{browserTools{w.Browsers}, h.rerunTools(w), foremanTools{w}}, Browsers: browserTools{w.Browsers},
	}, h.cfg.Runtime)
	log := h.log.With("workspace", id)
	tz := h.cfg.Timezone
	if tz == "" {
		tz = "UTC"
	}
	w.Schedules = schedule.NewService(schedule.Deps{
		DB: db, Workspace: id, Runs: automationRuns{w.Runs, run.SourceSchedule}, Bus: &h.bus, Logger: log,
		Active: func() bool { return w.Replica == nil || w.Replica.Active() },
	}, schedule.Config{DefaultTimezone: tz})
	w.Triggers = trigger.NewService(trigger.Deps{
		DB: db, Workspace: id, Runs: automationRuns{w.Runs, run.SourceTrigger}, Secrets: vars, Bus: &h.bus, Logger: log,
	}, trigger.Config{})
	w.Templates = template.New(template.Deps{
		DB: db, Dir: filepath.Join(dir, "templates"), Workspace: id, Bus: &h.bus, Logger: log,
		Agents: w.Agents, Boxes: w.Boxes, Skills: w.Skills, Schedules: w.Schedules, Triggers: w.Triggers,
		Connectors: w.Connectors, Variables: vars, Cards: templateCards{w.Runs}, Notify: w.Notify, Budgets: w.Budgets,
	})
	w.Foreman = h.openForeman(w, id)
	if w.Replica, err = h.openReplica(ctx, w, id); err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s sync: %w", id, err)
	}
	if err := h.ensureBuiltins(ctx, w); err != nil { // builtins.go
		db.Close()
		return nil, fmt.Errorf("open workspace %s: %w", id, err)
	}
	if w.Relay, err = h.openRelay(ctx, w, id); err != nil {
		db.Close()
		return nil, fmt.Errorf("open workspace %s: %w", id, err)
	}
	w.Outbox.SetPhones(w.Relay) // cards reach the paired phones through the relay
	w.Search = search.New(db, vars)
	w.AgentFiles = agentfile.New(agentfile.Deps{DB: db, Agents: w.Agents, Templates: w.Templates, Variables: vars, Remove: w.DeleteAgent})
	rc := h.cfg.Retention
	rc.Bus, rc.Workspace = &h.bus, id
	w.Retention = retention.New(db, retention.Dirs{Workspace: dir, Agents: filepath.Join(dir, "agents")}, log, rc)
	if err := keepUpgradedHistory(ctx, db); err != nil { // retention.go
		db.Close()
		return nil, fmt.Errorf("open workspace %s retention: %w", id, err)
	}
	var name, created string
	_ = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'name'`).Scan(&name)
	_ = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'created_at'`).Scan(&created)
	if name == "" {
		name = id
	}
	w.info.Name, w.info.CreatedAt = name, store.ParseTime(created)
	if ready != nil {
		if err := ready(w); err != nil {
			db.Close()
			return nil, fmt.Errorf("open workspace %s: %w", id, err)
		}
	}
	w.Outbox.Start()
	h.mu.Lock()
	h.open[id] = w
	h.keepVariables()
	if h.serving != nil {
		h.serve(h.serving, w)
	}
	h.mu.Unlock()
	return w, nil
}

// appURL is the local app's address mails and hooks link to ("" when the
// server's address is not known, as in tests).
func (h *Home) appURL() string {
	if h.cfg.LocalAddr == "" {
		return ""
	}
	return "http://" + h.cfg.LocalAddr
}

// Create makes a new workspace with one box, and opens it.
func (h *Home) Create(ctx context.Context, name string) (Info, error) {
	name, err := cleanName(name)
	if err != nil {
		return Info{}, err
	}
	id := store.NewID("ws")
	w, err := h.newWorkspace(ctx, id, name)
	if err != nil {
		return Info{}, fmt.Errorf("create workspace %q: %w", name, err)
	}
	if _, err := w.Boxes.Create(ctx, DefaultBoxName); err != nil {
		return Info{}, fmt.Errorf("create workspace %q: %w", name, err)
	}
	h.log.Info("workspace created", "id", id)
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.created", ID: id})
	h.autoOnboard(ctx, w) // builtins.go
	return w.Info(), nil
}

// newWorkspace makes the folder of workspace id, opens it and names it.
func (h *Home) newWorkspace(ctx context.Context, id, name string) (*Workspace, error) {
	w, err := h.openWorkspace(ctx, id)
	if err != nil {
		os.RemoveAll(filepath.Join(h.workspacesDir(), id))
		return nil, err
	}
	now := time.Now().UTC()
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('name', ?), ('created_at', ?)`, name, store.FormatTime(now)); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.info = Info{ID: id, Name: name, CreatedAt: now}
	w.mu.Unlock()
	return w, nil
}

// Close closes every workspace.
func (h *Home) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	for id, w := range h.open {
		w.Connectors.Close() // ends the stdio servers it started
		w.Relay.Close()
		w.Outbox.Close()
		if err := w.Browsers.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close workspace %s browsers: %w", id, err))
		}
		if err := w.DB.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close workspace %s: %w", id, err))
		}
		delete(h.open, id)
	}
	h.keepVariables()
	if h.unlock != nil {
		h.unlock()
		h.unlock = nil
	}
	return errors.Join(errs...)
}
