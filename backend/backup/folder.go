package backup

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

// lastKey is the meta row of the last backup's result.
const lastKey = "backup.last"

// Made is a backup made into a folder, as Settings shows it.
type Made struct {
	Result
	Path  string `json:"path"`
	Error string `json:"error,omitempty"`
	// Removed are the older backups deleted to keep the last Keep.
	Removed []string `json:"removed,omitempty"`
}

// ToFolder backs w up into folder (absolute, existing) and keeps the
// newest keep backups of it there (0: all). The result, or the failure, is
// remembered for Last.
func (w Workspace) ToFolder(ctx context.Context, folder, passphrase, app string, keep int) (Made, error) {
	res, err := w.toFolder(ctx, folder, passphrase, app, keep)
	if err != nil {
		res.Error, res.Finished = err.Error(), time.Now().UTC()
	}
	b, _ := json.Marshal(res)
	if _, werr := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, lastKey, string(b)); werr != nil {
		w.Logger.Warn("remember the last backup", "err", werr)
	}
	return res, err
}

func (w Workspace) toFolder(ctx context.Context, folder, passphrase, app string, keep int) (Made, error) {
	if _, err := checkFolder(folder); err != nil {
		return Made{}, err
	}
	name := FileName(w.Name, time.Now())
	final := filepath.Join(folder, name)
	tmp := final + ".part"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Made{}, fault.Invalid("cannot write in the backup folder: %v", err)
	}
	res, err := w.Backup(ctx, passphrase, app, f)
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
		return Made{}, err
	}
	out := Made{Result: res, Path: final}
	if keep > 0 {
		prefix := strings.TrimSuffix(name, name[len(name)-len(stamp+Ext):])
		entries, _ := os.ReadDir(folder)
		var mine []string
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), Ext) {
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

// Last is w's last backup into a folder (nil: none yet).
func (w Workspace) Last(ctx context.Context) (*Made, error) {
	var raw string
	if err := w.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, lastKey).Scan(&raw); err != nil {
		return nil, nil
	}
	var b Made
	if err := json.Unmarshal([]byte(raw), &b); err != nil {
		return nil, fmt.Errorf("read the last backup: %w", err)
	}
	return &b, nil
}

// checkFolder refuses a backup folder that is not a full path to an
// existing folder.
func checkFolder(folder string) (string, error) {
	if !filepath.IsAbs(folder) {
		return "", fault.Invalid("the backup folder %q is not a full path: pick a folder such as /home/you/Backups", folder)
	}
	if st, err := os.Stat(folder); err != nil || !st.IsDir() {
		return "", fault.Invalid("the backup folder %q does not exist: create it or pick another", folder)
	}
	return folder, nil
}
