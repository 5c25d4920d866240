package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/autostart"
	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

type enabledBody struct {
	Enabled bool `json:"enabled"`
}

type heldBody struct {
	Held bool `json:"held"`
}

// preferencesBody is this computer's preferences, and whether they apply:
// only the desktop window has a window to close.
type preferencesBody struct {
	prefs.Prefs
	Window bool `json:"window"`
	// MCPRegistryURL is the registry the Apps catalog searches, "" when
	// it is off.
	MCPRegistryURL string `json:"mcp_registry_url"`
}

func (s *Server) preferences(p prefs.Prefs) preferencesBody {
	b := preferencesBody{Prefs: p, Window: s.cfg.Window}
	if s.cfg.Home != nil {
		b.MCPRegistryURL = s.cfg.Home.MCPRegistry()
	}
	return b
}

// backgroundRoutes serve what keeps Rerun working away from the window:
// starting at login, what closing the window does and the other choices of
// this computer (not a workspace's), and the pause-all switch of a
// workspace's coworkers.
func (s *Server) backgroundRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/preferences", endpoint(s, 200, func(context.Context, *http.Request, none) (preferencesBody, error) {
		return s.preferences(s.prefs.Get()), nil
	}))
	m.HandleFunc("PUT /api/preferences", endpoint(s, 200, func(_ context.Context, _ *http.Request, in prefs.Change) (preferencesBody, error) {
		before := s.prefs.Get()
		if in.MCPRegistry != nil && s.cfg.Home != nil {
			// The registry checks the URL; a bad one changes nothing.
			if err := s.cfg.Home.SetMCPRegistry(*in.MCPRegistry); err != nil {
				return s.preferences(before), err
			}
		}
		p, err := s.prefs.Set(in)
		if err != nil {
			if in.MCPRegistry != nil && s.cfg.Home != nil {
				s.cfg.Home.SetMCPRegistry(before.MCPRegistry)
			}
			return s.preferences(p), err
		}
		if s.cfg.Updates != nil {
			s.cfg.Updates.SetDaily(p.UpdateChecks == prefs.Daily)
		}
		s.log.Info("preferences", "when_closed", p.WhenClosed, "mcp_registry", p.MCPRegistry, "update_checks", p.UpdateChecks)
		return s.preferences(p), nil
	}))
	m.HandleFunc("GET /api/autostart", endpoint(s, 200, func(context.Context, *http.Request, none) (autostart.State, error) {
		return s.cfg.Autostart.State(), nil
	}))
	m.HandleFunc("PUT /api/autostart", endpoint(s, 200, func(_ context.Context, _ *http.Request, in enabledBody) (autostart.State, error) {
		st, err := s.cfg.Autostart.Set(in.Enabled)
		if err == nil {
			s.log.Info("start at login", "enabled", st.Enabled)
		}
		return st, err
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/hold", inWorkspace(s, 200, func(_ context.Context, ws *workspace.Workspace, _ *http.Request, _ none) (heldBody, error) {
		return heldBody{ws.Runs.Held()}, nil
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/hold", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, _ *http.Request, in heldBody) (heldBody, error) {
		if err := ws.Runs.Hold(ctx, in.Held); err != nil {
			return heldBody{}, err
		}
		return heldBody{ws.Runs.Held()}, nil
	}))
}
