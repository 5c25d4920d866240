// Package httpapi is the UI's transport: a JSON API over the workspace services,
// a live change stream (Server-Sent Events) and the built frontend, behind one
// guard that keeps other web pages and other users of this computer out.
//
// The same Handler serves the Wails window (through its AssetServer) and a
// browser opened by `rerun serve`. It only decodes, calls a service and
// encodes; the domain lives in backend/.
package httpapi

import (
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// MaxBodyBytes is the largest request body accepted (413 beyond).
const MaxBodyBytes = 1 << 20

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
	// Heartbeat overrides HeartbeatInterval (tests).
	Heartbeat time.Duration
}

// Server is the UI's HTTP handler.
type Server struct {
	cfg Config
	log *slog.Logger
	mux *http.ServeMux
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
	s.routes()
	return s
}

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces", s.listWorkspaces)
	m.HandleFunc("POST /api/workspaces", s.createWorkspace)
	m.HandleFunc("PATCH /api/workspaces/{ws}", s.renameWorkspace)
	m.HandleFunc("POST /api/workspaces/{ws}/switch", s.switchWorkspace)
	m.HandleFunc("GET /api/workspaces/{ws}/board", s.board)

	m.HandleFunc("POST /api/workspaces/{ws}/boxes", s.createBox)
	m.HandleFunc("PUT /api/workspaces/{ws}/boxes/order", s.reorderBoxes)
	m.HandleFunc("PATCH /api/workspaces/{ws}/boxes/{id}", s.renameBox)
	m.HandleFunc("DELETE /api/workspaces/{ws}/boxes/{id}", s.deleteBox)

	m.HandleFunc("POST /api/workspaces/{ws}/agents", s.createAgent)
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}", s.getAgent)
	m.HandleFunc("PATCH /api/workspaces/{ws}/agents/{id}", s.updateAgent)
	m.HandleFunc("DELETE /api/workspaces/{ws}/agents/{id}", s.deleteAgent)
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/souls", s.souls)

	m.HandleFunc("GET /api/handle", s.suggestHandle)
	m.HandleFunc("GET /api/capabilities", s.capabilities)
	m.HandleFunc("GET /api/events", s.events)
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})
	m.Handle("/", s.assets())
}

// ServeHTTP checks Host, Origin and the token before any routing.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.guard(s.mux).ServeHTTP(w, r)
}
