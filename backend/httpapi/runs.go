package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/models"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// runRoutes are the agent runtime's routes: chat, sessions, runs, models.
func (s *Server) runRoutes() {
	m := s.mux
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/messages", inWorkspace(s, http.StatusAccepted, s.sendMessage))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/sessions", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]run.Session, error) {
		if _, err := ws.Agents.Get(ctx, r.PathValue("id")); err != nil {
			return nil, err
		}
		return ws.Runs.Sessions(ctx, r.PathValue("id"), run.SourceChat)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/sessions", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ struct{}) (run.Session, error) {
		return ws.Runs.NewSession(ctx, r.PathValue("id"), run.SourceChat, "")
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/sessions/{sid}", inWorkspace(s, 200, s.transcript))
	m.HandleFunc("PATCH /api/workspaces/{ws}/sessions/{sid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in run.SessionUpdate) (run.Session, error) {
		return ws.Runs.UpdateSession(ctx, r.PathValue("sid"), in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/runs", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]run.Run, error) {
		if _, err := ws.Agents.Get(ctx, r.PathValue("id")); err != nil {
			return nil, err
		}
		o := run.ListOptions{AgentID: r.PathValue("id")}
		q := r.URL.Query()
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fault.Invalid("limit %q must be a positive number", v)
			}
			o.Limit = n
		}
		if v := q.Get("before"); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, fault.Invalid("before %q must be an RFC 3339 time, e.g. 2026-11-30T09:00:00Z", v)
			}
			o.Before = t
		}
		return ws.Runs.List(ctx, o)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/usage", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]run.DayUsage, error) {
		if _, err := ws.Agents.Get(ctx, r.PathValue("id")); err != nil {
			return nil, err
		}
		days, _ := strconv.Atoi(r.URL.Query().Get("days"))
		return ws.Runs.Usage(ctx, r.PathValue("id"), days)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/runs/{rid}", inWorkspace(s, 200, s.runLog))
	m.HandleFunc("POST /api/workspaces/{ws}/runs/{rid}/cancel", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (run.Run, error) {
		return ws.Runs.Cancel(ctx, r.PathValue("rid"))
	}))

	// API keys of the MCP endpoint: created and revoked here (and by `rerun
	// key`), never over MCP. The key itself is in the create answer only.
	m.HandleFunc("GET /api/workspaces/{ws}/keys", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]apikey.Key, error) {
		return ws.Keys.List(ctx)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/keys", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in nameBody) (any, error) {
		plain, k, err := ws.Keys.Create(ctx, in.Name)
		if err != nil {
			return nil, err
		}
		s.log.Info("API key created", "workspace", ws.Info().ID, "key", k.Prefix)
		return map[string]any{"key": plain, "record": k}, nil
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/keys/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		ToolSet string `json:"tool_set"`
	}) (apikey.Key, error) {
		return ws.Keys.SetToolSet(ctx, r.PathValue("id"), in.ToolSet)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/keys/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (apikey.Key, error) {
		return ws.Keys.Revoke(ctx, r.PathValue("id"))
	}))

	// Settings → Models acts on the current workspace: keys entered there
	// are its variables (base URLs are every workspace's).
	m.HandleFunc("GET /api/models", endpoint(s, 200, func(context.Context, *http.Request, none) (any, error) {
		ws, err := s.currentWorkspace()
		if err != nil {
			return nil, err
		}
		list := ws.Models.Configured()
		if list == nil {
			list = []llm.ProviderInfo{}
		}
		def := map[string]string{"provider": "", "model": ""}
		if _, p, model, err := ws.Models.Pick("", ""); err == nil {
			def["provider"], def["model"] = p, model
		}
		return map[string]any{"providers": list, "default": def}, nil
	}))
	m.HandleFunc("GET /api/settings/models", endpoint(s, 200, func(context.Context, *http.Request, none) ([]models.ProviderSetting, error) {
		ws, err := s.currentWorkspace()
		if err != nil {
			return nil, err
		}
		return ws.Models.Settings(), nil
	}))
	m.HandleFunc("PUT /api/settings/models/{provider}", endpoint(s, 200, func(ctx context.Context, r *http.Request, in struct {
		APIKey  string  `json:"api_key"`
		BaseURL *string `json:"base_url"` // absent: keep the saved one
	}) ([]models.ProviderSetting, error) {
		ws, err := s.currentWorkspace()
		if err != nil {
			return nil, err
		}
		if err := ws.Models.Save(ctx, r.PathValue("provider"), in.APIKey, in.BaseURL); err != nil {
			return nil, err
		}
		s.log.Info("model provider saved", "workspace", ws.Info().ID, "provider", r.PathValue("provider"), "key_set", in.APIKey != "")
		return ws.Models.Settings(), nil
	}))
	m.HandleFunc("DELETE /api/settings/models/{provider}", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) ([]models.ProviderSetting, error) {
		ws, err := s.currentWorkspace()
		if err != nil {
			return nil, err
		}
		if err := ws.Models.Forget(ctx, r.PathValue("provider")); err != nil {
			return nil, err
		}
		return ws.Models.Settings(), nil
	}))
}

type messageBody struct {
	Text      string `json:"text"`
	SessionID string `json:"session_id"`
}

// sendMessage starts a chat run: the agent answers in the background, its
// text streaming on /api/events. The run service picks the session and
// refuses while a card waits above the message box.
func (s *Server) sendMessage(ctx context.Context, ws *workspace.Workspace, r *http.Request, in messageBody) (run.Run, error) {
	return ws.Runs.Send(ctx, run.SendRequest{AgentID: r.PathValue("id"), SessionID: in.SessionID,
		Source: run.SourceChat, Input: in.Text, From: "you"})
}

// RunDetail is a run with everything it did. Its Steps list shadows the
// run's step count in JSON (the shallower field wins): the count is its length.
type RunDetail struct {
	run.Run
	Steps    []run.Step  `json:"steps"`
	Children []run.Run   `json:"children,omitempty"`
	Pauses   []run.Pause `json:"pauses"` // oldest first
	// Pinned runs are never pruned by retention (PUT …/runs/{rid}/pin).
	Pinned bool `json:"pinned"`
}

// detail reads a run's steps and pauses.
func detail(ctx context.Context, ws *workspace.Workspace, rn run.Run) (RunDetail, error) {
	steps, err := ws.Runs.Steps(ctx, rn.ID)
	if err != nil {
		return RunDetail{}, err
	}
	pauses, err := ws.Runs.Pauses(ctx, run.PauseFilter{RunID: rn.ID})
	if err != nil {
		return RunDetail{}, err
	}
	slices.Reverse(pauses)
	pinned, err := ws.Retention.Pinned(ctx, rn.ID)
	if err != nil {
		return RunDetail{}, err
	}
	return RunDetail{Run: rn, Steps: steps, Pauses: pauses, Pinned: pinned}, nil
}

func (s *Server) transcript(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (any, error) {
	sess, err := ws.Runs.Session(ctx, r.PathValue("sid"))
	if err != nil {
		return nil, err
	}
	runs, err := ws.Runs.List(ctx, run.ListOptions{SessionID: sess.ID, Limit: 1000})
	if err != nil {
		return nil, err
	}
	out := make([]RunDetail, 0, len(runs))
	for i := len(runs) - 1; i >= 0; i-- { // oldest first
		d, err := detail(ctx, ws, runs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	open, err := ws.Runs.OpenPauseIn(ctx, sess.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"session": sess, "runs": out, "pause": open}, nil
}

func (s *Server) runLog(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (RunDetail, error) {
	rn, err := ws.Runs.Get(ctx, r.PathValue("rid"))
	if err != nil {
		return RunDetail{}, err
	}
	d, err := detail(ctx, ws, rn)
	if err != nil {
		return RunDetail{}, err
	}
	if d.Children, err = ws.Runs.Children(ctx, rn.ID); err != nil {
		return RunDetail{}, err
	}
	return d, nil
}
