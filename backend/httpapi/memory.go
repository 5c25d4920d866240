package httpapi

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// memoryRoutes are the Memory and Skills tabs' routes. Each write publishes
// memory.changed or skill.changed (id: the agent) so open tabs refresh.
func (s *Server) memoryRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/memories", inWorkspace(s, 200, s.listMemories))
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/memories", inWorkspace(s, 201, s.remember))
	m.HandleFunc("PATCH /api/workspaces/{ws}/memories/{mid}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		Text string `json:"text"`
	}) (memory.Memory, error) {
		mem, err := ws.Memory.Update(ctx, r.PathValue("mid"), in.Text)
		if err == nil {
			s.changed(ws, "memory.changed", mem.AgentID)
		}
		return mem, err
	}))
	// "Useful" in the Memory tab: the person says a memory helped, which
	// reinforces it as a run's use does.
	m.HandleFunc("POST /api/workspaces/{ws}/memories/{mid}/useful", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (memory.Memory, error) {
		mem, err := ws.Memory.Get(ctx, r.PathValue("mid"))
		if err != nil {
			return memory.Memory{}, err
		}
		if mem.State != memory.Active {
			return memory.Memory{}, fault.Conflict("memory %s is %s: only an active memory can be marked useful", mem.ID, mem.State)
		}
		used, err := ws.Memory.Use(ctx, mem.AgentID, mem.ID)
		if err != nil {
			return memory.Memory{}, err
		}
		s.changed(ws, "memory.changed", mem.AgentID)
		if len(used) == 1 {
			return used[0], nil
		}
		return ws.Memory.Get(ctx, mem.ID)
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/memories/{mid}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		mem, err := ws.Memory.Get(ctx, r.PathValue("mid"))
		if err != nil {
			return none{}, err
		}
		if err := ws.Memory.Forget(ctx, mem.ID); err != nil {
			return none{}, err
		}
		s.changed(ws, "memory.changed", mem.AgentID)
		return none{}, nil
	}))

	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/skills", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]skill.Summary, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return nil, err
		}
		return ws.Skills.List(ctx, id)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/skills/{name}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (skill.Loaded, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return skill.Loaded{}, err
		}
		return ws.Skills.Load(ctx, id, r.PathValue("name"))
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/skills/{name}/versions", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]skill.Version, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return nil, err
		}
		vs, err := ws.Skills.Versions(ctx, id, r.PathValue("name"))
		if vs == nil && err == nil {
			vs = []skill.Version{}
		}
		return vs, err
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/agents/{id}/skills/{name}", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
		SkillMD string `json:"skill_md"`
	}) (skill.Loaded, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return skill.Loaded{}, err
		}
		if err := refuseSecrets(ws, r, "SKILL.md", "a skill", &in.SkillMD); err != nil {
			return skill.Loaded{}, err
		}
		// ?new=1: the editor creates a skill and must not overwrite one.
		save := ws.Skills.Upsert
		if r.URL.Query().Get("new") == "1" {
			save = func(ctx context.Context, id, name, md string, _ map[string][]byte) (skill.Skill, error) {
				return ws.Skills.Create(ctx, id, name, md)
			}
		}
		if _, err := save(ctx, id, r.PathValue("name"), in.SkillMD, nil); err != nil {
			return skill.Loaded{}, err
		}
		s.changed(ws, "skill.changed", id)
		return ws.Skills.Load(ctx, id, r.PathValue("name"))
	}))
	m.HandleFunc("DELETE /api/workspaces/{ws}/agents/{id}/skills/{name}", inWorkspace(s, 204, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (none, error) {
		id, err := agentOf(ctx, ws, r)
		if err != nil {
			return none{}, err
		}
		if err := ws.Skills.Delete(ctx, id, r.PathValue("name")); err != nil {
			return none{}, err
		}
		s.changed(ws, "skill.changed", id)
		return none{}, nil
	}))
	// The body is the archive itself, not JSON: up to MaxImportBytes (the
	// guard lets this route through with that limit).
	m.HandleFunc("POST /api/workspaces/{ws}/agents/{id}/skills/import", inWorkspace(s, 201, s.importSkill))
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/skills/{name}/export", s.exportSkill)
}

// changed tells the UI an agent's memories or skills changed.
func (s *Server) changed(ws *workspace.Workspace, kind, agentID string) {
	s.cfg.Home.Events().Publish(event.Change{Workspace: ws.Info().ID, Kind: kind, ID: agentID, Agent: agentID})
}

// agentOf is the {id} of the path, once it is known to be an agent of ws.
func agentOf(ctx context.Context, ws *workspace.Workspace, r *http.Request) (string, error) {
	a, err := ws.Agents.Get(ctx, r.PathValue("id"))
	return a.ID, err
}

func (s *Server) listMemories(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) ([]memory.Memory, error) {
	id, err := agentOf(ctx, ws, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	o := memory.ListOptions{Query: q.Get("q"), IncludeRetired: q.Get("retired") == "1" || q.Get("retired") == "true"}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fault.Invalid("limit %q must be a positive number", v)
		}
		o.Limit = n
	}
	return ws.Memory.List(ctx, id, o)
}

// rememberAnswer is memory.Remembered with reason and existing always
// present, as the UI expects them.
type rememberAnswer struct {
	Memory     memory.Memory  `json:"memory"`
	Superseded *memory.Memory `json:"superseded,omitempty"`
	Reason     string         `json:"reason"`
	Existing   bool           `json:"existing"`
}

func (s *Server) remember(ctx context.Context, ws *workspace.Workspace, r *http.Request, in struct {
	Text       string `json:"text"`
	Supersedes string `json:"supersedes"`
}) (rememberAnswer, error) {
	id, err := agentOf(ctx, ws, r)
	if err != nil {
		return rememberAnswer{}, err
	}
	if err := refuseSecrets(ws, r, "the memory", "a memory", &in.Text); err != nil {
		return rememberAnswer{}, err
	}
	// A zero Source: written by a person.
	got, err := ws.Memory.Remember(ctx, id, in.Text, memory.Source{}, memory.RememberOptions{Supersedes: in.Supersedes})
	if err != nil {
		return rememberAnswer{}, err
	}
	s.changed(ws, "memory.changed", id)
	return rememberAnswer{got.Memory, got.Superseded, got.Reason, got.Existing}, nil
}

func (s *Server) importSkill(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (skill.Loaded, error) {
	id, err := agentOf(ctx, ws, r)
	if err != nil {
		return skill.Loaded{}, err
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		if !strings.Contains(mt, "zip") && mt != "application/octet-stream" {
			return skill.Loaded{}, fault.Invalid("send the .zip itself as the body with Content-Type: application/zip, not %s", mt)
		}
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return skill.Loaded{}, err // too large: 413 at the edge
	}
	sk, err := ws.Skills.ImportZip(ctx, id, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return skill.Loaded{}, err
	}
	s.changed(ws, "skill.changed", id)
	return ws.Skills.Load(ctx, id, sk.Name)
}

// exportSkill answers the skill's folder as a .zip download. The archive is
// built in memory first so a failure is a JSON error, not half a file.
func (s *Server) exportSkill(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id, err := agentOf(ctx, ws, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	name := r.PathValue("name")
	var buf bytes.Buffer
	if err := ws.Skills.ExportZip(ctx, id, name, &buf); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	// name passed skill.CheckName: lowercase letters, digits and hyphens only.
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.zip"`)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}
