package httpapi

import (
	"context"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// brainRoutes are the Brain view's routes. {page} is a page's id or slug.
// Everything written here is the person's: versions say "person". The
// service publishes brain.page.created / updated / deleted.
func (s *Server) brainRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/brain", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]brain.Summary, error) {
		return ws.Brain.List(ctx)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/brain", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in brain.NewPage) (brain.Page, error) {
		if err := refuseSecrets(ws, r, "the page", "a Brain page", &in.Body, &in.Summary); err != nil {
			return brain.Page{}, err
		}
		in.By = brain.Person
		return ws.Brain.Create(ctx, in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/brain/{page}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (brain.Page, error) {
		return ws.Brain.Get(ctx, r.PathValue("page"))
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/brain/{page}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in brain.Change) (brain.Page, error) {
		if in.BaseVersion <= 0 {
			return brain.Page{}, fault.Invalid("send base_version: the version of the page you started editing from (its \"version\" when you loaded it)")
		}
		if err := refuseSecrets(ws, r, "the page", "a Brain page", in.Body, in.Summary); err != nil {
			return brain.Page{}, err
		}
		in.By = brain.Person
		return ws.Brain.Update(ctx, r.PathValue("page"), in)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/brain/{page}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Brain.Delete(ctx, r.PathValue("page"), brain.Person)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/brain/{page}/versions", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]brain.Version, error) {
		return ws.Brain.Versions(ctx, r.PathValue("page"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/brain/{page}/versions/{n}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (brain.Version, error) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil || n <= 0 {
			return brain.Version{}, fault.Invalid("version %q must be a positive number", r.PathValue("n"))
		}
		return ws.Brain.Version(ctx, r.PathValue("page"), n)
	}))
}
