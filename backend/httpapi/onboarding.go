package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// onboardingRoutes are the Foreman's onboarding of a workspace: its state,
// start (or resume, or run again) and skip. Each change is published as
// onboarding.updated.
func (s *Server) onboardingRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/onboarding", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, _ *http.Request, _ none) (foreman.Onboarding, error) {
		return ws.Foreman.Onboarding(ctx)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/onboarding/start", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, _ *http.Request, _ none) (foreman.Onboarding, error) {
		return ws.Foreman.StartOnboarding(ctx)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/onboarding/skip", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, _ *http.Request, _ none) (foreman.Onboarding, error) {
		return ws.Foreman.SkipOnboarding(ctx)
	}))
}
