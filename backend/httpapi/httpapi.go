// Package httpapi is the UI's transport: a JSON API over the workspace services,
// a live change stream (Server-Sent Events) and the built frontend, behind one
// guard that keeps other web pages and other users of this computer out.
//
// The same Handler serves the Wails window (through its AssetServer) and a
// browser opened by `rerun serve`. It only decodes, calls a service and
// encodes; the domain lives in backend/.
package httpapi

import (
	"context"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/autostart"
	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/update"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// MaxBodyBytes is the largest request body accepted (413 beyond).
const MaxBodyBytes = 1 << 20

// MaxImportBytes is the largest skill archive accepted by the import route:
// a skill holds at most 10 MiB (skill.MaxTotalBytes), plus room for the zip's
// own headers when its files do not compress.
const MaxImportBytes = 12 << 20

// HeartbeatInterval is how often an idle event stream gets a comment line, so
// dead clients are noticed (by the failed write) and proxies keep it open.
const HeartbeatInterval = 15 * time.Second

// Config is what the handler serves and whom it lets in.
type Config struct {
	Home *workspace.Home
	// Token is the per-launch UI token every /api request must carry.
	Token string
	// Assets is the built frontend (index.html at its root); nil serves a page
	// saying the frontend is not built.
	Assets fs.FS
	// ExtraHosts are Host names accepted besides loopback ones (the Wails
	// window's "wails").
	ExtraHosts []string
	// ExtraOrigins are Origin values accepted besides the server's own.
	ExtraOrigins []string
	Logger       *slog.Logger
	// LocalURL is the server's own address on this computer (e.g.
	// http://127.0.0.1:7777), for pages that cannot see it themselves (the
	// desktop window's origin is wails://wails). Version, Commit and
	// BuildDate are the build's (set by the Makefile's -ldflags).
	LocalURL, Version, Commit, BuildDate string
	// DataDir is the data directory, shown in the About box.
	DataDir string
	// Updates checks the release feed, on a click (GET /api/update) and
	// daily unless the preferences say only on a click, and remembers the
	// last result (GET /api/update/last); nil: checks are off. Its Serve
	// is the caller's to run.
	Updates *update.Watch
	// MCP serves the MCP endpoint (mcpapi.Handler) at mcpapi.Path; it checks
	// API keys itself, so the UI token is not asked there. Nil: no endpoint.
	MCP http.Handler
	// Autostart is the start-at-login entry of this binary (nil: not
	// available here, as in tests and on other systems).
	Autostart *autostart.Entry
	// OpenFile hands a verified update package to the system (xdg-open,
	// open, start); nil: opening is not available (rerun serve, tests).
	OpenFile func(path string) error
	// OpenURL opens an address in the person's default browser: the desktop
	// window pops an agent's Desktop out with it (POST /api/ui/open-desktop);
	// nil where there is no one at this computer to see it (rerun serve, tests).
	OpenURL func(url string) error
	// PickFolder asks the person for a folder with the system's own dialog
	// (POST /api/ui/pick-folder), starting in start; "" when they cancel.
	// nil where the page is not the desktop window (rerun serve, tests):
	// the UI then takes a typed path only.
	PickFolder func(ctx context.Context, title, start string) (string, error)
	// Window says the desktop window shows this handler, so the preference
	// of what closing it does applies (GET /api/preferences).
	Window bool
	// Heartbeat overrides HeartbeatInterval (tests).
	Heartbeat time.Duration
}

// Server is the UI's HTTP handler.
type Server struct {
	cfg   Config
	log   *slog.Logger
	mux   *http.ServeMux
	prefs *prefs.Store // this computer's preferences, in the data directory
	// dataDir is the data directory ("" in some tests): preferences, updates.
	dataDir string

	updateMu   sync.Mutex
	downloaded update.Downloaded // the last verified update package

	logins logins // one-time codes of addresses opened by other programs (login.go)
}

// New returns the handler for cfg.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = HeartbeatInterval
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux()}
	dir := cfg.DataDir
	if dir == "" && cfg.Home != nil {
		dir = cfg.Home.DataDir()
	}
	s.prefs, s.dataDir = prefs.Open(dir), dir
	// The person's choice of MCP registry wins over the one Rerun was
	// started with.
	if reg := s.prefs.Get().MCPRegistry; reg != "" && cfg.Home != nil {
		if err := cfg.Home.SetMCPRegistry(reg); err != nil {
			s.log.Warn("saved MCP registry not used", "err", err)
		}
	}
	// The daily update check follows the person's choice.
	if cfg.Updates != nil {
		cfg.Updates.SetDaily(s.prefs.Get().UpdateChecks == prefs.Daily)
	}
	s.routes()
	return s
}

// ServeHTTP checks Host, Origin and the token before any routing.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guard(s.mux).ServeHTTP(w, r)
}
