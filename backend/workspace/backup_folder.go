package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Settings → Backups: backups made into a folder the person picks, the
// last few kept, the last result remembered in the meta table.

// backupMetaKey is the meta row of the last backup's result.
const backupMetaKey = "backup.last"

// FolderBackup is a backup made into a folder, as Settings shows it.
type FolderBackup struct {
	BackupResult
	Path  string `json:"path"`
	Error string `json:"error,omitempty"`
	// Removed are the older backups deleted to keep the last Keep.
	Removed []string `json:"removed,omitempty"`
}

// BackupToFolder backs workspace id up into folder (absolute, existing)
// and keeps the newest keep backups of it there (0: all). The result, or
// the failure, is remembered for LastBackup.
func (h *Home) BackupToFolder(ctx context.Context, id, folder, passphrase, app string, keep int) (FolderBackup, error) {
	w, err := h.Workspace(id)
	if err != nil {
		return FolderBackup{}, err
	}
	res, err := h.backupToFolder(ctx, w, folder, passphrase, app, keep)
	if err != nil {
		res.Error, res.Finished = err.Error(), time.Now().UTC()
	}
	b, _ := json.Marshal(res)
	if _, werr := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, backupMetaKey, string(b)); werr != nil {
		h.log.Warn("remember the last backup", "err", werr)
	}
	return res, err
}

func (h *Home) backupToFolder(ctx context.Context, w *Workspace, folder, passphrase, app string, keep int) (FolderBackup, error) {
	if _, err := h.backupToFolderCheck(folder); err != nil {
		return FolderBackup{}, err
	}
	name := BackupFileName(w.Info().Name, time.Now())
	final := filepath.Join(folder, name)
	tmp := final + ".part"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return FolderBackup{}, fault.Invalid("cannot write in the backup folder: %v", err)
	}
	res, err := h.Backup(ctx, w.Info().ID, passphrase, app, f)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if _, serr := os.Stat(final); err == nil && serr == nil {
		err = fault.Conflict("a backup named %s is already in the folder", name)
	}
	if err == nil {
		err = os.Rename(tmp, final) // a half-written backup never has the final name
	}
	if err != nil {
		os.Remove(tmp)
		return FolderBackup{}, err
	}
	out := FolderBackup{BackupResult: res, Path: final}
	if keep > 0 {
		prefix := strings.TrimSuffix(name, name[len(name)-len(backupStamp+BackupExt):])
		entries, _ := os.ReadDir(folder)
		var mine []string
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), BackupExt) {
				mine = append(mine, e.Name())
			}
		}
		slices.Sort(mine) // the date in the name sorts them oldest first
		for len(mine) > keep {
			if err := os.Remove(filepath.Join(folder, mine[0])); err == nil {
				out.Removed = append(out.Removed, mine[0])
			}
			mine = mine[1:]
		}
	}
	return out, nil
}

// LastBackup is the last folder backup of workspace id (nil: none yet).
func (h *Home) LastBackup(ctx context.Context, id string) (*FolderBackup, error) {
	w, err := h.Workspace(id)
	if err != nil {
		return nil, err
	}
	var raw string
	if err := w.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, backupMetaKey).Scan(&raw); err != nil {
		return nil, nil
	}
	var b FolderBackup
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return nil, fmt.Errorf("read the last backup: %w", err)
	}
	return &b, nil
}

// backupToFolderCheck refuses a backup folder that is not a full path to
// an existing folder.
func (h *Home) backupToFolderCheck(folder string) (string, error) {
	if !filepath.IsAbs(folder) {
		return "", fault.Invalid("the backup folder %q is not a full path: pick a folder such as /home/you/Backups", folder)
	}
	if st, err := os.Stat(folder); err != nil || !st.IsDir() {
		return "", fault.Invalid("the backup folder %q does not exist: create it or pick another", folder)
	}
	return folder, nil
}
