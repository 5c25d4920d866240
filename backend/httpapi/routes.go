package httpapi

import (
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// ws resolves the {ws} path value, answering 404 itself when it is unknown.
func (s *Server) ws(w http.ResponseWriter, r *http.Request) *workspace.Workspace {
	ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
	if err != nil {
		s.fail(w, r, err)
		return nil
	}
	return ws
}

type nameBody struct {
	Name string `json:"name"`
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"workspaces": s.cfg.Home.List(), "current": s.cfg.Home.Current()})
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) {
	var in nameBody
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	info, err := s.cfg.Home.Create(r.Context(), in.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, info)
}

func (s *Server) renameWorkspace(w http.ResponseWriter, r *http.Request) {
	var in nameBody
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	info, err := s.cfg.Home.Rename(r.Context(), r.PathValue("ws"), in.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) switchWorkspace(w http.ResponseWriter, r *http.Request) {
	if err := s.cfg.Home.Switch(r.PathValue("ws")); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"current": s.cfg.Home.Current()})
}

// Board is everything the board draws for one workspace.
type Board struct {
	Workspace workspace.Info `json:"workspace"`
	Boxes     []box.Box      `json:"boxes"`
	Agents    []agent.Agent  `json:"agents"`
}

func (s *Server) board(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	boxes, err := ws.Boxes.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	agents, err := ws.Agents.List(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, Board{ws.Info(), boxes, agents})
}

func (s *Server) createBox(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	var in nameBody
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := ws.Boxes.Create(r.Context(), in.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, b)
}

func (s *Server) renameBox(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	var in nameBody
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := ws.Boxes.Rename(r.Context(), r.PathValue("id"), in.Name)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, b)
}

func (s *Server) reorderBoxes(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	var in struct {
		IDs []string `json:"ids"`
	}
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	boxes, err := ws.Boxes.Reorder(r.Context(), in.IDs)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, boxes)
}

func (s *Server) deleteBox(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	if err := ws.Boxes.Delete(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	var in agent.NewAgent
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := ws.Agents.Create(r.Context(), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	a, err := ws.Agents.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	var in agent.Update
	if err := decode(r, &in); err != nil {
		s.fail(w, r, err)
		return
	}
	a, err := ws.Agents.Update(r.Context(), r.PathValue("id"), in)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	if err := ws.Agents.Delete(r.Context(), r.PathValue("id")); err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) souls(w http.ResponseWriter, r *http.Request) {
	ws := s.ws(w, r)
	if ws == nil {
		return
	}
	v, err := ws.Agents.Souls(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) suggestHandle(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("ws")
	if id == "" {
		id = s.cfg.Home.Current()
	}
	ws, err := s.cfg.Home.Workspace(id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	h, err := ws.Agents.SuggestHandle(r.Context(), r.URL.Query().Get("name"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"handle": h})
}

func (s *Server) capabilities(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, agent.Capabilities)
}
