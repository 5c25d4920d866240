package workspace

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Keys opens only the API keys of one workspace of dataDir — by id or name,
// or the current one when ref is empty — without taking the data directory's
// lock, so `rerun key` works while the app runs. Call close when done.
func Keys(ctx context.Context, dataDir, ref string) (keys *apikey.Service, info Info, close func(), err error) {
	entries, err := os.ReadDir(filepath.Join(dataDir, "workspaces"))
	if err != nil {
		return nil, Info{}, nil, fault.NotFound("no workspaces in %s; start Rerun once to create one", dataDir)
	}
	if ref == "" {
		h := &Home{cfg: Config{DataDir: dataDir}}
		ref = h.readState()
	}
	var names []string
	for _, e := range entries {
		path := filepath.Join(dataDir, "workspaces", e.Name(), "workspace.db")
		if _, err := os.Stat(path); err != nil || !e.IsDir() {
			continue
		}
		db, err := store.Open(ctx, path, store.WorkspaceMigrations())
		if err != nil {
			return nil, Info{}, nil, err
		}
		var name string
		db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'name'`).Scan(&name)
		names = append(names, name)
		if ref == e.Name() || strings.EqualFold(ref, name) || (ref == "" && len(entries) == 1) {
			return apikey.NewService(db), Info{ID: e.Name(), Name: name}, func() { db.Close() }, nil
		}
		db.Close()
	}
	return nil, Info{}, nil, fault.NotFound("no workspace %q; workspaces here: %s", ref, strings.Join(names, ", "))
}
