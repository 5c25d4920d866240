package httpapi

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// pauseRoutes serve the cards agents raise. Answering is this app's alone:
// the MCP API and the agents' tools have no way to answer a card.
func (s *Server) pauseRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/pauses", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]run.Pause, error) {
		q := r.URL.Query()
		status := q.Get("status")
		switch status {
		case "", pause.Open, pause.Answered, pause.Dismissed, pause.Cancelled:
		default:
			return nil, fault.Invalid("status %q is unknown; use open, answered, dismissed or cancelled", status)
		}
		ps, err := ws.Runs.Pauses(ctx, run.PauseFilter{AgentID: q.Get("agent_id"), Status: status})
		if ps == nil {
			ps = []run.Pause{}
		}
		return ps, err
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/pauses/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (run.Pause, error) {
		return ws.Runs.GetPause(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/pauses/{id}/answer", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in json.RawMessage) (run.Pause, error) {
		p, err := ws.Runs.Answer(ctx, r.PathValue("id"), in)
		if err == nil {
			s.log.Info("card answered in the app", "workspace", ws.Info().ID, "pause", p.ID, "kind", p.Kind, "status", p.Status)
		}
		return p, err
	}))
}
