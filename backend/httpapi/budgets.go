package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Budget is one scope's limits with its spend per day (oldest first): what
// Settings edits and Monitoring draws against.
type Budget struct {
	Limits budget.Limits  `json:"limits"`
	Days   []run.DaySpend `json:"days"`
}

// budgetRoutes are the spend limits of the workspace and of each agent.
// Changing them publishes budget.updated.
func (s *Server) budgetRoutes() {
	m := s.mux
	read := func(ctx context.Context, ws *workspace.Workspace, r *http.Request, agentID string) (Budget, error) {
		var l budget.Limits
		var err error
		if agentID == "" {
			l, err = ws.Budgets.Workspace(ctx)
		} else if _, err = ws.Agents.Get(ctx, agentID); err == nil {
			l, err = ws.Budgets.Agent(ctx, agentID)
		}
		if err != nil {
			return Budget{}, err
		}
		days, _ := strconv.Atoi(r.URL.Query().Get("days"))
		spend, err := ws.Runs.Spend(ctx, agentID, days)
		return Budget{Limits: l, Days: spend}, err
	}
	m.HandleFunc("GET /api/workspaces/{ws}/budget", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (Budget, error) {
		return read(ctx, ws, r, "")
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/budget", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in budget.Update) (budget.Limits, error) {
		return ws.Budgets.SetWorkspace(ctx, in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/budget", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (Budget, error) {
		return read(ctx, ws, r, r.PathValue("id"))
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/agents/{id}/budget", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in budget.Update) (budget.Limits, error) {
		return ws.Budgets.SetAgent(ctx, r.PathValue("id"), in)
	}))
}
