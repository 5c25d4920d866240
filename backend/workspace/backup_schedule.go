package workspace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Scheduled backups: once turned on, a workspace is backed up daily into its
// folder. The passphrase has to be at hand without the person, so it is
// kept sealed with this machine's data key in the meta table (and left out
// of every backup, like the relay link).

const (
	backupScheduleKey = "backup.schedule"
	// BackupEvery is how often a scheduled backup is made.
	BackupEvery = 24 * time.Hour
	// backupCheck is how often the loop looks whether one is due; after a
	// laptop sleep the next tick comes at once.
	backupCheck = 10 * time.Minute
)

// BackupSchedule is Settings → Backups' schedule, as the UI sees it.
type BackupSchedule struct {
	Enabled bool   `json:"enabled"`
	Folder  string `json:"folder"`
	Keep    int    `json:"keep"`
	// HasPassphrase says a passphrase is kept (never the passphrase).
	HasPassphrase bool `json:"has_passphrase"`
}

// BackupScheduleChange turns the schedule on or off; a new passphrase
// replaces the kept one ("" keeps it).
type BackupScheduleChange struct {
	Enabled    bool   `json:"enabled"`
	Folder     string `json:"folder"`
	Keep       int    `json:"keep"`
	Passphrase string `json:"passphrase"`
}

type storedSchedule struct {
	Enabled bool   `json:"enabled"`
	Folder  string `json:"folder"`
	Keep    int    `json:"keep"`
	Sealed  string `json:"sealed"`
}

func scheduleLabel(ws string) string { return "backup-passphrase/" + ws }

func (h *Home) loadSchedule(ctx context.Context, w *Workspace) (storedSchedule, error) {
	var raw string
	err := w.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, backupScheduleKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return storedSchedule{Keep: 7}, nil
	}
	if err != nil {
		return storedSchedule{}, fmt.Errorf("read the backup schedule: %w", err)
	}
	var s storedSchedule
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return storedSchedule{}, fmt.Errorf("read the backup schedule: %w", err)
	}
	return s, nil
}

// GetBackupSchedule is workspace id's backup schedule.
func (h *Home) GetBackupSchedule(ctx context.Context, id string) (BackupSchedule, error) {
	w, err := h.Workspace(id)
	if err != nil {
		return BackupSchedule{}, err
	}
	s, err := h.loadSchedule(ctx, w)
	return BackupSchedule{Enabled: s.Enabled, Folder: s.Folder, Keep: s.Keep, HasPassphrase: s.Sealed != ""}, err
}

// SetBackupSchedule saves workspace id's backup schedule.
func (h *Home) SetBackupSchedule(ctx context.Context, id string, c BackupScheduleChange) (BackupSchedule, error) {
	w, err := h.Workspace(id)
	if err != nil {
		return BackupSchedule{}, err
	}
	s, err := h.loadSchedule(ctx, w)
	if err != nil {
		return BackupSchedule{}, err
	}
	if c.Passphrase != "" {
		if len([]rune(c.Passphrase)) < backup.MinPassphrase {
			return BackupSchedule{}, fault.Invalid("the backup passphrase is too short: use at least %d characters", backup.MinPassphrase)
		}
		s.Sealed = h.box.Seal(c.Passphrase, scheduleLabel(id))
	}
	if c.Keep < 0 || c.Keep > 999 {
		return BackupSchedule{}, fault.Invalid("keep %d backups? Choose 0 (all) to 999", c.Keep)
	}
	s.Enabled, s.Folder, s.Keep = c.Enabled, c.Folder, c.Keep
	if s.Enabled && s.Sealed == "" {
		return BackupSchedule{}, fault.Invalid("set a passphrase to back up on a schedule")
	}
	if s.Enabled {
		if _, err := h.backupToFolderCheck(s.Folder); err != nil {
			return BackupSchedule{}, err
		}
	}
	b, _ := json.Marshal(s)
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, backupScheduleKey, string(b)); err != nil {
		return BackupSchedule{}, fmt.Errorf("save the backup schedule: %w", err)
	}
	return BackupSchedule{Enabled: s.Enabled, Folder: s.Folder, Keep: s.Keep, HasPassphrase: s.Sealed != ""}, nil
}

// BackUpIfDue makes workspace id's scheduled backup when the schedule is on
// and the last successful one is older than BackupEvery at now. made says
// whether it tried.
func (h *Home) BackUpIfDue(ctx context.Context, id, app string, now time.Time) (made bool, err error) {
	w, err := h.Workspace(id)
	if err != nil {
		return false, err
	}
	s, err := h.loadSchedule(ctx, w)
	if err != nil || !s.Enabled || s.Sealed == "" {
		return false, err
	}
	if last, _ := h.LastBackup(ctx, id); last != nil && last.Error == "" && now.Sub(last.Finished) < BackupEvery {
		return false, nil
	}
	pass, err := h.box.Open(s.Sealed, scheduleLabel(id))
	if err != nil {
		return true, fmt.Errorf("open the kept backup passphrase: %w; set it again in Settings → Backups", err)
	}
	_, err = h.BackupToFolder(ctx, id, s.Folder, pass, app, s.Keep)
	return true, err
}

// keepBackups makes w's scheduled backups until ctx ends.
func (h *Home) keepBackups(ctx context.Context, w *Workspace) {
	tick := time.NewTicker(backupCheck)
	defer tick.Stop()
	for {
		if made, err := h.BackUpIfDue(ctx, w.Info().ID, "", time.Now()); made && err != nil && ctx.Err() == nil {
			h.log.Warn("scheduled backup failed", "workspace", w.Info().ID, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
