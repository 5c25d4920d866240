package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// outboxRoutes are Settings → Notifications → Email and Hooks, their test
// buttons, and the deliveries (mail, hook POSTs) the notifications panel
// shows with their failures.
func (s *Server) outboxRoutes() {
	m := s.mux
	base := "/api/workspaces/{ws}/settings/notifications/"
	m.HandleFunc("GET "+base+"email", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (outbox.Email, error) {
		return ws.Outbox.Email(ctx)
	}))
	m.HandleFunc("PUT "+base+"email", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in outbox.Email) (outbox.Email, error) {
		return ws.Outbox.SetEmail(ctx, in)
	}))
	m.HandleFunc("POST "+base+"email/test", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in outbox.Email) (testResult, error) {
		return tested(ws.Outbox.TestEmail(ctx, in))
	}))
	m.HandleFunc("GET "+base+"hooks", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]outbox.Hook, error) {
		return ws.Outbox.Hooks(ctx)
	}))
	m.HandleFunc("PUT "+base+"hooks", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in []outbox.Hook) ([]outbox.Hook, error) {
		return ws.Outbox.SetHooks(ctx, in)
	}))
	m.HandleFunc("POST "+base+"hooks/test", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in outbox.Hook) (testResult, error) {
		return tested(ws.Outbox.TestHook(ctx, in))
	}))
	// A mail's or hook's link opens the app on one notification.
	m.HandleFunc("GET /api/workspaces/{ws}/notifications/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (notify.Notification, error) {
		return ws.Notify.Get(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/notifications/deliveries", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]outbox.Delivery, error) {
		q := r.URL.Query()
		o := outbox.ListOptions{NotificationID: q.Get("notification_id")}
		switch v := q.Get("problems"); v {
		case "", "0", "false":
		case "1", "true":
			o.Problems = true
		default:
			return nil, fault.Invalid("problems %q must be 1 (only failed deliveries and those waiting for a retry) or 0", v)
		}
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fault.Invalid("limit %q must be a positive number (at most 500)", v)
			}
			o.Limit = n
		}
		return ws.Outbox.Deliveries(ctx, o)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/notifications/deliveries/{id}/retry", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Outbox.Retry(ctx, r.PathValue("id"))
	}))
}

// testResult is a test button's outcome: the server's own answer when it
// refused.
type testResult struct {
	OK     bool   `json:"ok"`
	Answer string `json:"answer"`
}

// tested turns a send error into the answer shown; settings that do not
// check are a 400 like any bad input.
func tested(err error) (testResult, error) {
	var refused *outbox.SendError
	switch {
	case err == nil:
		return testResult{OK: true}, nil
	case errors.As(err, &refused):
		return testResult{Answer: refused.Answer}, nil
	}
	return testResult{}, err
}
