package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// notificationRoutes are the notifications panel's and the agent's "To
// handle" tab's routes, the delivery settings, and the workspace variables.
// No route ever answers a variable's value.
func (s *Server) notificationRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/notifications", inWorkspace(s, 200, s.listNotifications))
	m.HandleFunc("POST /api/workspaces/{ws}/notifications/{id}/dismiss", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (notify.Notification, error) {
		return ws.Notify.Dismiss(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/notifications/dismiss", inWorkspace(s, 200, s.dismissAll))
	m.HandleFunc("GET /api/workspaces/{ws}/settings/notifications", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (notify.Delivery, error) {
		return ws.Notify.Delivery(ctx)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/settings/notifications", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in notify.Delivery) (notify.Delivery, error) {
		return ws.Notify.SetDelivery(ctx, in)
	}))

	m.HandleFunc("GET /api/workspaces/{ws}/variables", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (variables, error) {
		list, err := ws.Variables.List(ctx)
		where, note := s.cfg.Home.KeyStore()
		return variables{KeyStore: where, KeyStoreNote: note, Variables: list}, err
	}))
	// A value, hosts or both: hosts alone change an existing variable's
	// hosts (the value is never shown, so it need not be typed again).
	m.HandleFunc("PUT /api/workspaces/{ws}/variables/{name}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in secret.Change) (secret.Info, error) {
		v, err := ws.Variables.Update(ctx, r.PathValue("name"), in)
		if err == nil {
			s.log.Info("variable set", "workspace", ws.Info().ID, "name", v.Name)
		}
		return v, err
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/variables/{name}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Variables.Delete(ctx, r.PathValue("name"))
	}))
}

// variables is Settings → Variables: the names, never the values, and where
// the key that seals them is kept.
type variables struct {
	KeyStore     secret.KeyStore `json:"key_store"`
	KeyStoreNote string          `json:"key_store_note"`
	Variables    []secret.Info   `json:"variables"`
}

func (s *Server) listNotifications(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]notify.Notification, error) {
	q := r.URL.Query()
	o := notify.ListOptions{AgentID: q.Get("agent_id")}
	if o.AgentID != "" {
		if _, err := ws.Agents.Get(ctx, o.AgentID); err != nil {
			return nil, err
		}
	}
	switch v := q.Get("open"); v {
	case "", "0", "false":
	case "1", "true":
		o.Open = true
	default:
		return nil, fault.Invalid("open %q must be 1 (only what waits) or 0", v)
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fault.Invalid("limit %q must be a positive number (at most %d)", v, notify.MaxLimit)
		}
		o.Limit = n
	}
	return ws.Notify.List(ctx, o)
}

// dismissAll takes {agent_id?}; an empty body means every agent.
func (s *Server) dismissAll(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (map[string]int, error) {
	var in struct {
		AgentID string `json:"agent_id"`
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err // too large: 413 at the edge
	}
	if len(bytes.TrimSpace(body)) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := decode(r, &in); err != nil {
			return nil, err
		}
	}
	n, err := ws.Notify.DismissAll(ctx, in.AgentID)
	return map[string]int{"dismissed": n}, err
}

// currentWorkspace is the workspace shown at launch, for the routes outside
// /api/workspaces/{ws}/ that act on one (Settings → Models).
func (s *Server) currentWorkspace() (*workspace.Workspace, error) {
	return s.cfg.Home.Workspace(s.cfg.Home.Current())
}
