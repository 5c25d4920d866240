package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// syncExtraRoutes are what device sync adds besides the relay link: the
// summaries of an agent's runs on the workspace's other devices, and the
// opt-in that lets variables' values sync.
func (s *Server) syncExtraRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/runs/elsewhere", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]run.Summary, error) {
		limit := 0
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fault.Invalid("limit %q must be a positive number", v)
			}
			limit = n
		}
		return ws.Relay.RunsElsewhere(ctx, r.PathValue("id"), limit)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/settings/variable-sync", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (relaylink.VariableSync, error) {
		return ws.Relay.VariableSync(ctx)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/settings/variable-sync", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in relaylink.VariableSync) (relaylink.VariableSync, error) {
		out, err := ws.Relay.SetVariableSync(ctx, in)
		if err == nil {
			s.cfg.Home.Events().Publish(event.Change{Workspace: ws.Info().ID, Kind: "sync.settings"})
		}
		return out, err
	}))
}
