package httpapi

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// oauthCallbackPath is where a provider sends the browser back after an
// app's sign-in. The guard lets it through without the UI token or an
// Origin check — the browser arriving there has neither — and the state in
// its query is its only credential.
const oauthCallbackPath = "/oauth/callback"

// appRoutes are the Apps tab's routes: the catalog, the apps installed on
// an agent, custom MCP servers, sign-ins (forms and OAuth) and reviews.
func (s *Server) appRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/apps/catalog", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (connector.CatalogResult, error) {
		limit := 50
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return connector.CatalogResult{}, fault.Invalid("limit %q must be a positive number", v)
			}
			limit = n
		}
		return ws.Connectors.SearchApps(ctx, r.URL.Query().Get("q"), limit), nil
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/apps", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]connector.Connector, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return nil, err
		}
		return ws.Connectors.List(ctx, id)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/apps", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		CatalogID string `json:"catalog_id"`
	}) (connector.Installed, error) {
		return ws.Connectors.Install(ctx, r.PathValue("id"), in.CatalogID)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/apps/custom", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in connector.Custom) (connector.Connector, error) {
		inst, err := ws.Connectors.AddCustom(ctx, r.PathValue("id"), in)
		return inst.Connector, err
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/apps/try", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in connector.Custom) (triedTools, error) {
		tools, err := ws.Connectors.TryCustom(ctx, in)
		out := triedTools{Tools: []triedTool{}}
		for _, t := range tools {
			out.Tools = append(out.Tools, triedTool{Name: t.Name, Description: t.Definition.Description})
		}
		return out, upstream(err)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/apps/{cid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (connector.Connector, error) {
		return ws.Connectors.Status(ctx, r.PathValue("cid"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/apps/{cid}/form", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (pause.ConnectorRequest, error) {
		return ws.Connectors.Form(ctx, r.PathValue("cid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/apps/{cid}/sign-in", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		Values map[string]string `json:"values"`
	}) (connector.Connector, error) {
		return ws.Connectors.SignIn(ctx, r.PathValue("cid"), in.Values)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/apps/{cid}/oauth", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (map[string]string, error) {
		u, err := ws.Connectors.StartAuth(ctx, r.PathValue("cid"), s.localURL(r)+oauthCallbackPath)
		return map[string]string{"url": u}, upstream(err)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/apps/{cid}/test", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (connector.Connector, error) {
		// A failed test is an answer, not an error: the app's status and
		// error say what went wrong.
		if _, err := ws.Connectors.Test(ctx, r.PathValue("cid")); errors.Is(err, fault.ErrNotFound) {
			return connector.Connector{}, err
		}
		return ws.Connectors.Get(ctx, r.PathValue("cid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/apps/{cid}/approve", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (connector.Connector, error) {
		c, err := ws.Connectors.Approve(ctx, r.PathValue("cid"))
		return c, upstream(err)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/apps/{cid}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Connectors.Uninstall(ctx, r.PathValue("cid"))
	}))
	m.HandleFunc("GET "+oauthCallbackPath, s.oauthCallback)
}

type triedTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

type triedTools struct {
	Tools []triedTool `json:"tools"`
}

// upstreamError is an app's server failing (unreachable, broken): a 502,
// not a fault of ours.
type upstreamError struct{ err error }

func (e upstreamError) Error() string { return e.err.Error() }
func (e upstreamError) Unwrap() error { return e.err }

// upstream marks err, unless it is nil or says what the person got wrong.
func upstream(err error) error {
	if err == nil || fault.Is(err) || errors.Is(err, context.Canceled) {
		return err
	}
	return upstreamError{err}
}

// isOAuthCallback reports whether r is the browser coming back from an
// app's sign-in.
func isOAuthCallback(r *http.Request) bool { return r.URL.Path == oauthCallbackPath }

// callbackPage is the small page the browser shows after an app's
// sign-in: the title and the text, escaped. Not html/template: executing a
// template makes the linker keep every exported method of every type (17 MB
// of the binary; backend/deps_test.go refuses it).
const callbackPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>%[1]s — Rerun</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style>
</head><body><h1>%[1]s</h1><p>%[2]s</p></body></html>
`

// writeCallbackPage answers the page with title and text, escaped (an
// app's name and a provider's error are not ours).
func writeCallbackPage(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, callbackPage, html.EscapeString(title), html.EscapeString(text))
}

// oauthCallback finishes an app's browser sign-in in the workspace that
// started it, and tells the person in a small page.
func (s *Server) oauthCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	page := func(status int, title, text string) { writeCallbackPage(w, status, title, text) }
	ws, ok := s.cfg.Home.AuthOwner(q.Get("state"))
	if !ok {
		page(http.StatusNotFound, "Sign-in link expired", "This sign-in is unknown or expired. Start it again from the agent's Apps tab in Rerun.")
		return
	}
	c, err := ws.Connectors.FinishAuth(r.Context(), q.Get("state"), q.Get("code"))
	switch {
	case err == nil && c.Status == connector.StatusConnected:
		page(http.StatusOK, "Connected", c.Name+" is connected. You can close this tab and go back to Rerun.")
	case err == nil:
		page(http.StatusOK, "Signed in", "You are signed in to "+c.Name+", but it is not usable yet: "+c.Next)
	case fault.Is(err):
		page(http.StatusBadRequest, "Not connected", fault.Message(err))
	default:
		s.log.Error("finish an app sign-in", "workspace", ws.Info().ID, "err", err)
		page(http.StatusBadGateway, "Not connected", "The sign-in could not be completed: "+err.Error()+". Try again from the agent's Apps tab in Rerun.")
	}
}
