// Package connector owns agents' apps: the embedded catalog of MCP servers
// (catalog.yaml, each entry with the SKILL.md that explains its tools), the
// apps and custom MCP servers installed per agent (tables connectors and
// connector_tools), and the MCP client that reaches them — stdio commands,
// Streamable HTTP and legacy SSE through mark3labs/mcp-go — with their tools
// handed to the agent as tool.Tool values named <app>__<tool>.
//
// Credentials never live here. A connector's configuration holds ${NAME}
// references to workspace variables, resolved through Deps.Vars only when a
// connection opens. Install declares an app and returns the setup form
// (pause.ConnectorRequest) whose secret fields are named so that the card's
// standard storage (pause.ConnectorRequest.SecretVariable) writes exactly the
// variables the app references: variable <PREFIX>_<FIELD> ↔ field <field>,
// where PREFIX is the app id (or custom slug) in upper case with - written _
// (app google-maps, field api_key ↔ GOOGLE_MAPS_API_KEY). SignIn writes a
// form's values the same way. Remote servers that use OAuth are signed in
// with StartAuth (the authorization URL to open in a browser) and FinishAuth
// (called by the loopback redirect); the token is kept, sealed like any
// variable, in <PREFIX>_OAUTH_TOKEN.
//
// Tool pinning defends against tool poisoning: the definitions (name,
// description, input schema) of an app's tools are hashed the first time it
// connects and again on Approve. The agent only ever sees the pinned
// definitions. When a server later changes one, calling it returns an error
// telling the person to re-approve in the app, and the app's status becomes
// blocked_changed; tools the server adds wait for approval.
//
// Connections open lazily, per installed app, on the first call (or when a
// never-pinned app's tools are listed), and are dropped and reopened when the
// server goes away. Stdio servers run in their own process group, with a
// small environment (no secrets of the app's own), and the whole group is
// killed on Uninstall, on Close and after IdleTimeout without calls. Serve
// runs the idle sweep.
package connector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Statuses of an installed app.
const (
	// StatusUntested: set up, never connected yet.
	StatusUntested = "untested"
	// StatusConnected: the last connection worked and every tool matches
	// its pinned definition.
	StatusConnected = "connected"
	// StatusNeedsSignIn: a variable it references is not set (an API key, a
	// URL, an OAuth token), or the server refused the credentials.
	StatusNeedsSignIn = "needs_sign_in"
	// StatusError: the last connection failed.
	StatusError = "error"
	// StatusBlockedChanged: the server changed the definition of a pinned
	// tool; that tool is blocked until the person approves again.
	StatusBlockedChanged = "blocked_changed"
)

// Family is the capability id connector tools belong to.
const Family = "connectors"

// Event kinds published on the bus.
const (
	KindCreated = "connector.created"
	KindUpdated = "connector.updated"
	KindDeleted = "connector.deleted"
)

// oauthTokenSuffix ends the name of the variable holding an app's OAuth
// token: LINEAR_OAUTH_TOKEN.
const oauthTokenSuffix = "_OAUTH_TOKEN"

// Variables is the workspace's variables (*secret.Variables).
type Variables interface {
	Lookup(name string) (string, bool)
	Resolve(text string) (string, error)
	Set(ctx context.Context, name, value string) (secret.Info, error)
}

// Deps is what the service is wired with.
type Deps struct {
	DB        *store.DB
	Workspace string
	Vars      Variables    // nil: no variables (apps needing one stay needs_sign_in)
	Catalog   *Catalog     // nil: the embedded catalog
	Bus       *event.Bus   // nil: no change events
	Logger    *slog.Logger // nil: discard
	// OnBlocked is told when an app's server changed a pinned tool
	// definition, so the person can be asked to review it (nil: nobody).
	OnBlocked func(ctx context.Context, c Connector)
}

// Config tunes the service. Zero values take the defaults.
type Config struct {
	// AgentsDir is the workspace's agents/ folder; a stdio server of agent
	// X starts in AgentsDir/X/files when that folder exists.
	AgentsDir string
	// ConnectTimeout bounds starting a server and the MCP handshake
	// (default 90 s: npx and uvx may download the package first).
	ConnectTimeout time.Duration
	// CallTimeout bounds one tool call (default 5 min).
	CallTimeout time.Duration
	// IdleTimeout closes a connection (and ends its process) unused that
	// long (default 10 min).
	IdleTimeout time.Duration
	// HTTPClient reaches remote servers and OAuth endpoints (default: a
	// client with no overall timeout; calls are bounded by CallTimeout).
	HTTPClient *http.Client
	// ClientName and ClientVersion introduce us to servers (default
	// "Rerun", "1").
	ClientName    string
	ClientVersion string
	Now           func() time.Time // default time.Now
}

func (c Config) withDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 90 * time.Second
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = 5 * time.Minute
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 10 * time.Minute
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	if c.ClientName == "" {
		c.ClientName = "Rerun"
	}
	if c.ClientVersion == "" {
		c.ClientVersion = "1"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Service manages the apps installed on a workspace's agents and their
// connections.
type Service struct {
	db        *store.DB
	workspace string
	vars      Variables
	catalog   *Catalog
	registry  *Registry
	bus       *event.Bus
	log       *slog.Logger
	onBlocked func(context.Context, Connector)
	cfg       Config

	// ctx lives as long as the service: long-lived transports (stdio
	// readers, SSE streams) are started with it, never with a caller's.
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	slots  map[string]*slot // connector id → its connection
	closed bool

	authMu  sync.Mutex
	pending map[string]*authFlow // OAuth state → flow in progress
}

// New returns the connector service. It fails only when the catalog is
// malformed.
func New(d Deps, cfg Config) (*Service, error) {
	cat := d.Catalog
	if cat == nil {
		var err error
		if cat, err = LoadCatalog(); err != nil {
			return nil, err
		}
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{db: d.DB, workspace: d.Workspace, vars: d.Vars, catalog: cat, bus: d.Bus, log: log,
		onBlocked: d.OnBlocked, cfg: cfg.withDefaults(), ctx: ctx, cancel: cancel, slots: map[string]*slot{}, pending: map[string]*authFlow{}}, nil
}

// Catalog is the app catalog the service installs from.
func (s *Service) Catalog() *Catalog { return s.catalog }

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

func (s *Service) publish(kind string, c Connector) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: c.ID, Agent: c.AgentID})
	}
}

// lookup reads a variable; with no variables nothing is set.
func (s *Service) lookup(name string) (string, bool) {
	if s.vars == nil {
		return "", false
	}
	return s.vars.Lookup(name)
}

// resolve fills the ${NAME} references of text.
func (s *Service) resolve(text string) (string, error) {
	if s.vars == nil {
		return secret.Resolve(text, func(string) (string, bool) { return "", false })
	}
	return s.vars.Resolve(text)
}

// redact masks variable values in text kept or shown outside a run (error
// messages from servers may echo their configuration).
func (s *Service) redact(text string) string {
	if r, ok := s.vars.(interface{ Redact(string) string }); ok && s.vars != nil {
		return r.Redact(text)
	}
	return text
}

// Naming. A slug is an app's tool prefix: [a-z0-9_], starting with a letter,
// no double or edge underscores, so pause.ConnectorRequest{Connector: slug}
// maps field f to variable SLUG_F.

const (
	maxSlugLen     = 24
	maxToolNameLen = 64
)

var (
	fieldNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	nonSlug     = regexp.MustCompile(`[^a-z0-9]+`)
)

// slugOf is a catalog app's tool prefix.
func slugOf(appID string) string { return strings.ReplaceAll(appID, "-", "_") }

// customSlug makes a tool prefix from a custom server's name; "" when the
// name has no letter or digit.
func customSlug(name string) string {
	s := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(name), "_"), "_")
	if s == "" {
		return ""
	}
	if s[0] < 'a' || s[0] > 'z' {
		s = "mcp_" + s
	}
	if len(s) > maxSlugLen {
		s = strings.TrimRight(s[:maxSlugLen], "_")
	}
	return s
}

// varPrefix is how the variables of an app with that slug start.
func varPrefix(slug string) string { return strings.ToUpper(slug) + "_" }

// fieldOf is the setup form field of a variable: GOOGLE_MAPS_API_KEY → api_key.
func fieldOf(prefix, variable string) string {
	return strings.ToLower(strings.TrimPrefix(variable, prefix))
}

// toolName is the name an agent calls a server's tool by:
// <slug>__<tool> in [a-z0-9_], at most 64 characters. taken holds names
// already given out for this app; a clash (or a cut) gets a short hash of the
// server's name so names stay distinct and stable.
func toolName(slug, tool string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range strings.ToLower(tool) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := slug + "__" + b.String()
	if len(name) <= maxToolNameLen && !taken[name] && b.Len() > 0 {
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxToolNameLen {
		name = name[:maxToolNameLen-len(suffix)]
	}
	return name + suffix
}
