package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/agentfile"
	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// backupRoutes are Settings → Backups and the pill menu's restore and
// delete. Passphrases pass through, never logged nor stored.
func (s *Server) backupRoutes() {
	s.agentFileRoutes()
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/backups/last", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (any, error) {
		b, err := s.cfg.Home.Backups(r.PathValue("ws"))
		if err != nil {
			return nil, err
		}
		last, err := b.Last(ctx)
		return map[string]any{"last": last}, err
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/backups", endpoint(s, 201, func(ctx context.Context, r *http.Request, in struct {
		Folder     string `json:"folder"`
		Passphrase string `json:"passphrase"`
		Keep       int    `json:"keep"`
	}) (backup.Made, error) {
		b, err := s.cfg.Home.Backups(r.PathValue("ws"))
		if err != nil {
			return backup.Made{}, err
		}
		return b.ToFolder(ctx, in.Folder, in.Passphrase, s.cfg.Version, in.Keep)
	}))
	m.HandleFunc("GET /api/workspaces/{ws}/backups/schedule", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (backup.Schedule, error) {
		b, err := s.cfg.Home.Backups(r.PathValue("ws"))
		if err != nil {
			return backup.Schedule{}, err
		}
		return b.Schedule(ctx)
	}))
	m.HandleFunc("PUT /api/workspaces/{ws}/backups/schedule", endpoint(s, 200, func(ctx context.Context, r *http.Request, in backup.ScheduleChange) (backup.Schedule, error) {
		b, err := s.cfg.Home.Backups(r.PathValue("ws"))
		if err != nil {
			return backup.Schedule{}, err
		}
		return b.SetSchedule(ctx, in)
	}))
	m.HandleFunc("POST /api/workspaces/restore", endpoint(s, 201, func(ctx context.Context, r *http.Request, in struct {
		Path       string `json:"path"`
		Passphrase string `json:"passphrase"`
		Name       string `json:"name"`
	}) (workspace.Info, error) {
		return s.cfg.Home.Restore(ctx, in.Path, in.Passphrase, in.Name)
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/delete", endpoint(s, 200, func(ctx context.Context, r *http.Request, in struct {
		Confirm string `json:"confirm"`
	}) (any, error) {
		err := s.cfg.Home.Delete(ctx, r.PathValue("ws"), in.Confirm)
		return map[string]string{"current": s.cfg.Home.Current()}, err
	}))
}

// agentFileRoutes export one agent with its memories as a .rerun-agent
// download, and import such a file (the body is the file itself).
func (s *Server) agentFileRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/agents/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		a, err := ws.Agents.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			s.fail(w, r, err)
			return
		}
		data, err := ws.AgentFiles.Export(r.Context(), a.ID)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", `attachment; filename="`+a.Handle+agentfile.Extension+`"`)
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Header().Set("Cache-Control", "no-store")
		w.Write(data)
	})
	m.HandleFunc("POST /api/workspaces/{ws}/agents/import", inWorkspace(s, 201, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (agent.Agent, error) {
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return agent.Agent{}, err // too large: 413 at the edge
		}
		return ws.AgentFiles.Import(ctx, data, r.URL.Query().Get("box"))
	}))
}
