package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// automationRoutes are the Automations tab's routes (scheduled tasks and
// webhook triggers) and the webhook intake itself.
func (s *Server) automationRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/schedules", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]schedule.Schedule, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return nil, err
		}
		return ws.Schedules.List(ctx, id)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/schedules", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in scheduleBody) (schedule.Schedule, error) {
		if err := refuseSecrets(ws, r, "the instruction", "an instruction", &in.Instruction); err != nil {
			return schedule.Schedule{}, err
		}
		return ws.Schedules.Create(ctx, schedule.NewSchedule{AgentID: r.PathValue("id"), Name: in.Name, Instruction: in.Instruction,
			Spec: in.Spec, Enabled: in.Enabled, CatchUp: in.CatchUp, CatchUpWithin: in.CatchUpWithin})
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/schedules/{sid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in schedule.Update) (schedule.Schedule, error) {
		if err := refuseSecrets(ws, r, "the instruction", "an instruction", in.Instruction); err != nil {
			return schedule.Schedule{}, err
		}
		return ws.Schedules.Update(ctx, r.PathValue("sid"), in)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/schedules/{sid}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Schedules.Delete(ctx, r.PathValue("sid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/schedules/{sid}/run", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (schedule.Fire, error) {
		return ws.Schedules.RunNow(ctx, r.PathValue("sid"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/schedules/{sid}/history", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]schedule.Fire, error) {
		limit, err := countQuery(r, "limit")
		if err != nil {
			return nil, err
		}
		return ws.Schedules.History(ctx, r.PathValue("sid"), limit)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/schedules/{sid}/next", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]time.Time, error) {
		n, err := countQuery(r, "n")
		if err != nil {
			return nil, err
		}
		if n == 0 {
			n = 5
		}
		return ws.Schedules.NextTimes(ctx, r.PathValue("sid"), n)
	}))
	m.HandleFunc("POST /api/schedules/preview", endpoint(s, 200, func(ctx context.Context, r *http.Request, in schedule.Spec) (schedule.Preview, error) {
		ws, err := s.currentWorkspace()
		if err != nil {
			return schedule.Preview{}, err
		}
		return ws.Schedules.Preview(in, 5)
	}))

	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/triggers", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]triggerView, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return nil, err
		}
		list, err := ws.Triggers.List(ctx, id)
		out := make([]triggerView, len(list))
		for i, t := range list {
			out[i] = s.triggerView(r, t)
		}
		return out, err
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/triggers", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in triggerBody) (triggerWithURL, error) {
		if err := refuseSecrets(ws, r, "the instruction", "an instruction", &in.Instruction); err != nil {
			return triggerWithURL{}, err
		}
		token, t, err := ws.Triggers.Create(ctx, trigger.NewTrigger{AgentID: r.PathValue("id"), Name: in.Name, Instruction: in.Instruction,
			Methods: in.Methods, SigningSecretVar: in.SigningSecretVar, Enabled: in.Enabled, RateLimit: in.RateLimit})
		if err != nil {
			return triggerWithURL{}, err
		}
		return triggerWithURL{s.triggerView(r, t), s.localURL(r) + trigger.PathPrefix + token, publicURL(ws, token)}, nil
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/triggers/{tid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in trigger.Update) (triggerView, error) {
		if err := refuseSecrets(ws, r, "the instruction", "an instruction", in.Instruction); err != nil {
			return triggerView{}, err
		}
		t, err := ws.Triggers.Update(ctx, r.PathValue("tid"), in)
		return s.triggerView(r, t), err
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/triggers/{tid}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Triggers.Delete(ctx, r.PathValue("tid"))
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/triggers/{tid}/rotate", inWorkspace(s, 200, s.rotateTrigger))
	m.HandleFunc("POST /api/workspaces/{ws}/triggers/{tid}/test", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		Payload     json.RawMessage `json:"payload"`
		ContentType string          `json:"content_type"`
	}) (trigger.Delivery, error) {
		return ws.Triggers.Test(ctx, r.PathValue("tid"), samplePayload(in.Payload), in.ContentType)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/triggers/{tid}/deliveries", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]trigger.Delivery, error) {
		limit, err := countQuery(r, "limit")
		if err != nil {
			return nil, err
		}
		return ws.Triggers.Deliveries(ctx, r.PathValue("tid"), limit)
	}))

	// Any method: each trigger says which it accepts.
	m.HandleFunc(trigger.PathPrefix, s.hook)
}

// scheduleBody is what creates a schedule; the agent is in the path.
type scheduleBody struct {
	Name        string `json:"name"`
	Instruction string `json:"instruction"`
	schedule.Spec
	Enabled       *bool             `json:"enabled"`
	CatchUp       string            `json:"catch_up"`
	CatchUpWithin schedule.Duration `json:"catch_up_within"`
}

// triggerBody is what creates a trigger; the agent is in the path.
type triggerBody struct {
	Name             string   `json:"name"`
	Instruction      string   `json:"instruction"`
	Methods          []string `json:"methods"`
	SigningSecretVar string   `json:"signing_secret_var"`
	Enabled          *bool    `json:"enabled"`
	RateLimit        int      `json:"rate_limit"`
}

// triggerView is a trigger with the start of its URL, for display: the
// whole URL is shown once, when it is created or rotated.
type triggerView struct {
	trigger.Trigger
	URLPrefix string `json:"url_prefix"`
	// PublicURLPrefix starts its URL through the relay, when linked.
	PublicURLPrefix string `json:"public_url_prefix,omitempty"`
}

type triggerWithURL struct {
	Trigger   triggerView `json:"trigger"`
	URL       string      `json:"url"`
	PublicURL string      `json:"public_url,omitempty"` // through the relay (relay.go)
}

func (s *Server) triggerView(r *http.Request, t trigger.Trigger) triggerView {
	v := triggerView{Trigger: t, URLPrefix: s.localURL(r) + trigger.PathPrefix + t.TokenPrefix + "…"}
	if ws, err := s.cfg.Home.Workspace(r.PathValue("ws")); err == nil {
		if p := publicURL(ws, t.TokenPrefix); p != "" {
			v.PublicURLPrefix = p + "…"
		}
	}
	return v
}

// localURL is where this server is reached on this computer: LocalURL, else
// the address the request came to (tests, a server without one).
func (s *Server) localURL(r *http.Request) string {
	if s.cfg.LocalURL != "" {
		return strings.TrimSuffix(s.cfg.LocalURL, "/")
	}
	return "http://" + r.Host
}

// rotateTrigger takes {grace_seconds?}; an empty body means the old URL
// stops at once.
func (s *Server) rotateTrigger(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (triggerWithURL, error) {
	var in struct {
		GraceSeconds int64 `json:"grace_seconds"`
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return triggerWithURL{}, err // too large: 413 at the edge
	}
	if len(bytes.TrimSpace(body)) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := decode(r, &in); err != nil {
			return triggerWithURL{}, err
		}
	}
	if in.GraceSeconds < 0 || in.GraceSeconds > int64(trigger.MaxGrace/time.Second) {
		return triggerWithURL{}, fault.Invalid("grace_seconds is between 0 (the old URL stops at once) and %d (7 days)", int64(trigger.MaxGrace/time.Second))
	}
	token, t, err := ws.Triggers.Rotate(ctx, r.PathValue("tid"), time.Duration(in.GraceSeconds)*time.Second)
	if err != nil {
		return triggerWithURL{}, err
	}
	return triggerWithURL{s.triggerView(r, t), s.localURL(r) + trigger.PathPrefix + token, publicURL(ws, token)}, nil
}

// samplePayload is a test call's body: a JSON string is sent as its text,
// any other JSON value (an object the person typed) as written.
func samplePayload(raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return ""
	}
	return string(raw)
}

// countQuery reads an optional positive number from the query; 0 when it is
// absent.
func countQuery(r *http.Request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fault.Invalid("%s %q must be a positive number", name, v)
	}
	return n, nil
}

// hook hands a webhook call to the workspace whose trigger its token opens.
// The guard lets /hooks/ through without the UI token or an Origin check:
// services call it, and the token in the path is their credential. Logs
// show only the token's first characters.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.URL.Path, trigger.PathPrefix)
	ws, found, err := s.cfg.Home.TriggerOwner(r.Context(), token)
	switch {
	case err != nil:
		s.log.Error("webhook call", "token", trigger.Shown(token), "err", err)
		writeError(w, http.StatusInternalServerError, "the trigger could not be read; try again")
	case !found:
		writeError(w, http.StatusNotFound, "no trigger at this URL: the token is wrong, or it was rotated")
	default:
		ws.Triggers.Handler().ServeHTTP(w, r)
	}
}

// isHook reports whether r calls a webhook trigger.
func isHook(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, trigger.PathPrefix) }

// logPath is r's path as logs may show it: a webhook token cut to its
// first characters.
func logPath(r *http.Request) string {
	if isHook(r) {
		return trigger.PathPrefix + trigger.Shown(strings.TrimPrefix(r.URL.Path, trigger.PathPrefix))
	}
	return r.URL.Path
}
