package httpapi

import (
	"context"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// backupRoutes are Settings → Backups and the pill menu's restore and
// delete. Passphrases pass through, never logged nor stored.
func (s *Server) backupRoutes() {
	m := s.mux
	m.HandleFunc("GET /api/workspaces/{ws}/backups/last", endpoint(s, 200, func(ctx context.Context, r *http.Request, _ none) (any, error) {
		last, err := s.cfg.Home.LastBackup(ctx, r.PathValue("ws"))
		return map[string]any{"last": last}, err
	}))
	m.HandleFunc("POST /api/workspaces/{ws}/backups", endpoint(s, 201, func(ctx context.Context, r *http.Request, in struct {
		Folder     string `json:"folder"`
		Passphrase string `json:"passphrase"`
		Keep       int    `json:"keep"`
	}) (workspace.FolderBackup, error) {
		return s.cfg.Home.BackupToFolder(ctx, r.PathValue("ws"), in.Folder, in.Passphrase, s.cfg.Version, in.Keep)
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
