package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Backups is workspace id as its backups see it (backend/backup): back it
// up to a file or into a folder, its schedule, its last result.
func (h *Home) Backups(id string) (backup.Workspace, error) {
	w, err := h.Workspace(id)
	if err != nil {
		return backup.Workspace{}, err
	}
	return h.backups(w), nil
}

func (h *Home) backups(w *Workspace) backup.Workspace {
	info := w.Info()
	return backup.Workspace{ID: info.ID, Name: info.Name, Dir: w.Dir, DB: w.DB, Variables: w.Variables, Box: h.box, Logger: h.log}
}

// Restore checks the backup file at path in full, then restores it as a new
// workspace named name (empty: the backed-up name with " (restored)"). A
// damaged file, or a wrong passphrase, is refused before anything is
// written; any later failure removes what was written. Variables are sealed
// again with this machine's key. API keys are not restored (create new
// ones), nor is the relay link (link again). Restored beside its original,
// the copy's schedules and triggers start paused (settleCopy).
func (h *Home) Restore(ctx context.Context, path, passphrase, name string) (Info, error) {
	hdr, _, err := backup.Check(path, passphrase)
	if err != nil {
		return Info{}, err
	}
	if strings.TrimSpace(name) == "" {
		name = hdr.WorkspaceName + " (restored)"
		if len([]rune(name)) > 64 {
			name = string([]rune(name)[:64])
		}
	}
	if name, err = cleanName(name); err != nil {
		return Info{}, err
	}
	staging, err := os.MkdirTemp(h.workspacesDir(), ".restore-")
	if err != nil {
		return Info{}, fmt.Errorf("restore: %w", err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(staging)
		}
	}()
	id := store.NewID("ws")
	if err := backup.Unpack(ctx, path, passphrase, staging, backup.Restored{ID: id, Name: name, Box: h.box}); err != nil {
		return Info{}, err
	}
	dir := filepath.Join(h.workspacesDir(), id)
	if err := os.Rename(staging, dir); err != nil {
		return Info{}, fmt.Errorf("restore: %w", err)
	}
	done = true
	_, beside := h.Workspace(hdr.WorkspaceID)
	w, err := h.openWorkspaceThen(ctx, id, func(w *Workspace) error {
		return h.settleCopy(ctx, w, beside == nil)
	})
	if err != nil {
		os.RemoveAll(dir)
		return Info{}, fmt.Errorf("open the restored workspace: %w", err)
	}
	h.log.Info("workspace restored", "id", id, "from", hdr.WorkspaceID)
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.created", ID: id})
	return w.Info(), nil
}

// settleCopy readies a restored workspace w before it serves. Restored
// beside its original (beside), its schedules and triggers are paused, so
// nothing the original does happens twice; turn them on in the Automations
// tab. And any webhook token it shares with a workspace here is rotated:
// the other workspace keeps its URL, the copy's trigger gets a new one,
// shown when the person rotates it again.
func (h *Home) settleCopy(ctx context.Context, w *Workspace, beside bool) error {
	if beside {
		schedules, err := w.Schedules.List(ctx, "")
		if err != nil {
			return err
		}
		for _, sc := range schedules {
			if sc.Enabled {
				if _, err := w.Schedules.SetEnabled(ctx, sc.ID, false); err != nil {
					return err
				}
			}
		}
		triggers, err := w.Triggers.List(ctx, "")
		if err != nil {
			return err
		}
		for _, t := range triggers {
			if t.Enabled {
				if _, err := w.Triggers.SetEnabled(ctx, t.ID, false); err != nil {
					return err
				}
			}
		}
	}
	for _, o := range h.workspaces() { // w is not listed yet
		ids, err := w.Triggers.SharedWith(ctx, o.Triggers)
		if err != nil {
			return err
		}
		for _, tid := range ids {
			if _, _, err := w.Triggers.Rotate(ctx, tid, 0); err != nil {
				return err
			}
		}
	}
	return nil
}
