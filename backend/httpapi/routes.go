package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (any, error) {
		return map[string]any{"workspaces": s.cfg.Home.List(), "current": s.cfg.Home.Current()}, nil
	}))
	m.HandleFunc("POST /api/workspaces", endpoint(s, 201, func(ctx context.Context, r *http.Request, in nameBody) (workspace.Info, error) {
		return s.cfg.Home.Create(ctx, in.Name)
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}", endpoint(s, 200, func(ctx context.Context, r *http.Request, in nameBody) (workspace.Info, error) {
		return s.cfg.Home.Rename(ctx, r.PathValue("ws"), in.Name)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/switch", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (any, error) {
		err := s.cfg.Home.Switch(r.PathValue("ws"))
		return map[string]string{"current": s.cfg.Home.Current()}, err
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/board", inWorkspace(s, 200, s.board))
	m.HandleFunc("GET /api/boot", endpoint(s, 200, s.boot))
	// Whether agents' commands run sandboxed on this computer (the agent
	// Settings say so when not; every command then asks first).
	m.HandleFunc("GET /api/sandbox", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (any, error) {
		ok, why := sandbox.Available()
		return map[string]any{"sandboxed": ok, "detail": why}, nil
	}))

	m.HandleFunc("POST /api/workspaces/{ws}/boxes", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in nameBody) (box.Box, error) {
		return ws.Boxes.Create(ctx, in.Name)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/boxes/order", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		IDs []string `json:"ids"`
	}) ([]box.Box, error) {
		return ws.Boxes.Reorder(ctx, in.IDs)
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/boxes/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in nameBody) (box.Box, error) {
		return ws.Boxes.Rename(ctx, r.PathValue("id"), in.Name)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/boxes/{id}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.Boxes.Delete(ctx, r.PathValue("id"))
	}))

	m.HandleFunc("POST /api/workspaces/{ws}/agents", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in agent.NewAgent) (agent.Agent, error) {
		if err := refuseSecrets(ws, r, "the soul", "a soul", &in.Soul); err != nil {
			return agent.Agent{}, err
		}
		return ws.Agents.Create(ctx, in)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (agent.Agent, error) {
		return ws.Agents.Get(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("PATCH /api/workspaces/{ws}/agents/{id}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in agent.Update) (agent.Agent, error) {
		if err := refuseSecrets(ws, r, "the soul", "a soul", in.Soul); err != nil {
			return agent.Agent{}, err
		}
		return ws.Agents.Update(ctx, r.PathValue("id"), in)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/agents/{id}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		return none{}, ws.DeleteAgent(ctx, r.PathValue("id"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/souls", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]agent.SoulVersion, error) {
		return ws.Agents.Souls(ctx, r.PathValue("id"))
	}))

	m.HandleFunc("GET /api/handle", endpoint(s, 200, s.suggestHandle))
	m.HandleFunc("GET /api/info", endpoint(s, 200, func(_ context.Context, r *http.Request, _ none) (map[string]string, error) {
		info := map[string]string{"version": s.cfg.Version, "commit": s.cfg.Commit, "build_date": s.cfg.BuildDate,
			"local_url": s.cfg.LocalURL, "mcp_url": "", "data_dir": s.cfg.DataDir}
		if s.cfg.LocalURL != "" && s.cfg.MCP != nil {
			info["mcp_url"] = s.cfg.LocalURL + mcpapi.Path
		}
		if t := s.screenToken(r); t != "" {
			info["screen_token"] = t // desktop.go
		}
		if s.cfg.PickFolder != nil {
			info["folder_picker"] = "native" // POST /api/ui/pick-folder
		}
		return info, nil
	}))
	m.HandleFunc("GET /api/capabilities", endpoint(s, 200, func(context.Context, *http.Request, none) ([]agent.Capability, error) {
		return agent.Capabilities, nil
	}))
	s.runRoutes()
	s.memoryRoutes()
	s.pauseRoutes()        // pauses.go
	s.notificationRoutes() // notifications.go: notifications, delivery settings, variables
	s.outboxRoutes()       // outbox.go: email and hook settings, deliveries
	s.automationRoutes()   // automations.go: schedules, triggers, the /hooks/ intake
	s.appRoutes()          // apps.go: catalog, installed apps, custom MCP servers, the OAuth callback
	s.desktopRoutes()      // desktop.go: each agent's browser, its screen WebSocket
	s.templateRoutes()     // templates.go: the template library, save as template, install, export, import
	s.brainRoutes()        // brain.go: the workspace's Brain pages and their versions
	s.backupRoutes()       // backups.go: back up, restore, delete a workspace
	s.budgetRoutes()       // budgets.go: spend limits of the workspace and its agents, spend per day
	s.relayRoutes()        // relay.go: the link to a rerun-relay, dead letters, pairing
	s.onboardingRoutes()   // onboarding.go: the Foreman's onboarding: state, start, skip
	s.syncExtraRoutes()    // sync_extras.go: runs on other devices, the variable sync opt-in
	s.backgroundRoutes()   // background.go: start at login, pause all coworkers
	s.updateRoutes()       // update.go: check the release feed for a newer Rerun
	s.searchRoutes()       // search.go: full-text search, retention settings, pins, disk use
	if s.cfg.MCP != nil {
		// MCP tools show webhook URLs: they need this server's address.
		m.Handle(mcpapi.Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.cfg.MCP.ServeHTTP(w, r.WithContext(mcpapi.WithLocalURL(r.Context(), s.localURL(r))))
		}))
	}
	m.HandleFunc("GET /api/events", s.events)
	// The page says once when the board has painted: the log line a launch
	// is timed by (make bench) and a clue when a start feels slow.
	m.HandleFunc("POST /api/ui/painted", endpoint(s, 204, func(_ context.Context, _ *http.Request, in struct {
		PageMS   float64 `json:"page_ms"`
		ScriptMS float64 `json:"script_ms"` // the bundle runs
		DataMS   float64 `json:"data_ms"`   // the workspace's data is in
		FrameMS  float64 `json:"frame_ms"`  // the first frame with the board drawn
	}) (none, error) {
		for _, v := range []struct {
			name string
			ms   float64
		}{{"page_ms", in.PageMS}, {"script_ms", in.ScriptMS}, {"data_ms", in.DataMS}, {"frame_ms", in.FrameMS}} {
			if v.ms < 0 || v.ms > 24*3600*1000 {
				return none{}, fault.Invalid("%s %v is not a time since the page opened, in milliseconds", v.name, v.ms)
			}
		}
		s.log.Info("ui board painted", "page_ms", int64(in.PageMS), "script_ms", int64(in.ScriptMS), "data_ms", int64(in.DataMS), "frame_ms", int64(in.FrameMS))
		return none{}, nil
	}))
	m.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})
	m.Handle("/", s.assets())
}

// none is the input of a route that takes no body (and the output of one that
// answers 204).
type none struct{}

type nameBody struct {
	Name string `json:"name"`
}

// endpoint adapts a service call to HTTP: decode the JSON body into In
// (unless In is none), call, then encode the result with status or translate
// the error. Transports do nothing else.
func endpoint[In, Out any](s *Server, status int, call func(context.Context, *http.Request, In) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in In
		if _, empty := any(in).(none); !empty {
			if err := decode(r, &in); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		out, err := call(r.Context(), r, in)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if status == http.StatusNoContent {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, out)
	}
}

// inWorkspace is endpoint for routes under /api/workspaces/{ws}/: an unknown
// workspace is a 404 before the call.
func inWorkspace[In, Out any](s *Server, status int, call func(context.Context, *workspace.Workspace, *http.Request, In) (Out, error)) http.HandlerFunc {
	return endpoint(s, status, func(ctx context.Context, r *http.Request, in In) (Out, error) {
		ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
		if err != nil {
			var zero Out
			return zero, err
		}
		return call(ctx, ws, r, in)
	})
}

// Board is everything the board draws for one workspace.
type Board struct {
	Workspace workspace.Info          `json:"workspace"`
	Boxes     []box.Box               `json:"boxes"`
	Agents    []agent.Agent           `json:"agents"`
	Activity  map[string]run.Activity `json:"activity"` // by agent id: running now, last result
	// NotificationsOpen counts what waits for the person (the bell): open
	// notifications, those of open pauses included.
	NotificationsOpen int `json:"notifications_open"`
	// Held says all coworkers are paused (the toolbar's Pause all).
	Held bool `json:"held"`
	// Automations counts each agent's schedules and triggers (the clock
	// badge); agents without any are left out.
	Automations map[string]Automations `json:"automations"`
}

// Automations is how many scheduled tasks and webhook triggers an agent has.
// The paused ones (after a template install, or switched off) are counted
// apart too: the board draws their badges muted.
type Automations struct {
	Schedules       int `json:"schedules"`
	Triggers        int `json:"triggers"`
	SchedulesPaused int `json:"schedules_paused,omitempty"`
	TriggersPaused  int `json:"triggers_paused,omitempty"`
}

func (s *Server) board(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (Board, error) {
	boxes, err := ws.Boxes.List(ctx)
	if err != nil {
		return Board{}, err
	}
	agents, err := ws.Agents.List(ctx)
	if err != nil {
		return Board{}, err
	}
	activity, err := ws.Runs.Activity(ctx)
	if err != nil {
		return Board{}, err
	}
	open, _, err := ws.Notify.Open(ctx)
	if err != nil {
		return Board{}, err
	}
	schedules, err := ws.Schedules.CountByAgent(ctx)
	if err != nil {
		return Board{}, err
	}
	triggers, err := ws.Triggers.CountByAgent(ctx)
	if err != nil {
		return Board{}, err
	}
	pausedSchedules, err := ws.Schedules.PausedByAgent(ctx)
	if err != nil {
		return Board{}, err
	}
	pausedTriggers, err := ws.Triggers.PausedByAgent(ctx)
	if err != nil {
		return Board{}, err
	}
	automations := map[string]Automations{}
	for id, n := range schedules {
		automations[id] = Automations{Schedules: n, SchedulesPaused: pausedSchedules[id]}
	}
	for id, n := range triggers {
		a := automations[id]
		a.Triggers = n
		a.TriggersPaused = pausedTriggers[id]
		automations[id] = a
	}
	return Board{Workspace: ws.Info(), Boxes: boxes, Agents: agents, Activity: activity, NotificationsOpen: open, Held: ws.Runs.Held(),
		Automations: automations}, nil
}

// Boot is what the page needs before it can paint the board, in one answer:
// index.html asks for it while the app's script loads, and one answer
// waiting there beats a chain of three (the board needs the current
// workspace's id first).
type Boot struct {
	Workspaces   []workspace.Info   `json:"workspaces"`
	Current      string             `json:"current"`
	Capabilities []agent.Capability `json:"capabilities"`
	// Board is the current workspace's; null when there is none.
	Board *Board `json:"board"`
}

func (s *Server) boot(ctx context.Context, r *http.Request, _ none) (Boot, error) {
	b := Boot{Workspaces: s.cfg.Home.List(), Current: s.cfg.Home.Current(), Capabilities: agent.Capabilities}
	if b.Current == "" {
		return b, nil
	}
	ws, err := s.cfg.Home.Workspace(b.Current)
	if err != nil {
		return Boot{}, err
	}
	board, err := s.board(ctx, ws, r, none{})
	if err != nil {
		return Boot{}, err
	}
	b.Board = &board
	return b, nil
}

// suggestHandle previews the handle a new agent would get (?name=, ?ws=,
// default the current workspace).
func (s *Server) suggestHandle(ctx context.Context, r *http.Request, _ none) (map[string]string, error) {
	id := r.URL.Query().Get("ws")
	if id == "" {
		id = s.cfg.Home.Current()
	}
	ws, err := s.cfg.Home.Workspace(id)
	if err != nil {
		return nil, err
	}
	h, err := ws.Agents.SuggestHandle(ctx, r.URL.Query().Get("name"))
	return map[string]string{"handle": h}, err
}
