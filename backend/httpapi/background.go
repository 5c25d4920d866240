package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/autostart"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

type enabledBody struct {
	Enabled bool `json:"enabled"`
}

type heldBody struct {
	Held bool `json:"held"`
}

// backgroundRoutes serve what keeps Rerun working away from the window:
// starting at login (this computer's, not a workspace's) and the pause-all
// switch of a workspace's coworkers.
func (s *Server) backgroundRoutes() {
	m := s.mux
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
