package httpapi

import (
	"context"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// templateRoutes are the template library's routes: list, save an agent as
// a template (with its preview), edit, install, export and import.
func (s *Server) templateRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/templates", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]template.Template, error) {
		return ws.Templates.List(ctx)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/templates/{tid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (template.Template, error) {
		return ws.Templates.Get(ctx, r.PathValue("tid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/templates", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		template.Patch
		FromAgent string `json:"from_agent"`
	}) (template.Template, error) {
		if in.FromAgent != "" {
			return ws.Templates.FromAgent(ctx, in.FromAgent, in.Patch)
		}
		return ws.Templates.Create(ctx, in.Patch)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/template-preview", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (template.Preview, error) {
		return ws.Templates.Preview(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/templates/{tid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in template.Patch) (template.Template, error) {
		return ws.Templates.Update(ctx, r.PathValue("tid"), in)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/templates/{tid}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Templates.Delete(ctx, r.PathValue("tid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/templates/{tid}/install", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in template.InstallOptions) (template.Installed, error) {
		return ws.Templates.Install(ctx, r.PathValue("tid"), in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/templates/{tid}/export", s.exportTemplate)
	// The body is the package itself, not JSON: up to template.MaxPackageBytes
	// (the guard lets this route through with that limit).
	m.HandleFunc("POST /api/workspaces/{ws}/templates/import", inWorkspace(s, 201, s.importTemplate))
}

func (s *Server) importTemplate(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (template.Template, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if !strings.Contains(mt, "zip") && mt != "application/octet-stream" {
			return template.Template{}, fault.Invalid("send the %s file itself as the body with Content-Type: application/zip, not %s", template.Extension, mt)
		}
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return template.Template{}, err // too large: 413 at the edge
	}
	return ws.Templates.Import(ctx, data)
}

// unsafeFileName is what a download's file name may not hold.
var unsafeFileName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// exportTemplate answers the template as a .rerun-template download. The
// package is built whole first, so a failure is a JSON error, not half a
// file.
func (s *Server) exportTemplate(w http.ResponseWriter, r *http.Request) {
	ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t, err := ws.Templates.Get(r.Context(), r.PathValue("tid"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	data, err := ws.Templates.Export(r.Context(), t.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := strings.Trim(unsafeFileName.ReplaceAllString(t.Name, "-"), "-.")
	if name == "" {
		name = "template"
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+template.Extension+`"`)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data)
}
