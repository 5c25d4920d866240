package backup

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Scheduled backups: once turned on, a workspace is backed up daily into its
// folder. The passphrase has to be at hand without the person, so it is
// kept sealed with this machine's data key in the meta table (and left out
// of every backup, like the relay link).

const (
	scheduleKey = "backup.schedule"
	// Every is how often a scheduled backup is made.
	Every = 24 * time.Hour
	// checkEvery is how often the loop looks whether one is due; after a
	// laptop sleep the next tick comes at once.
	checkEvery = 10 * time.Minute
)

// Schedule is Settings → Backups' schedule, as the UI sees it.
type Schedule struct {
	Enabled bool   `json:"enabled"`
	Folder  string `json:"folder"`
	Keep    int    `json:"keep"`
	// HasPassphrase says a passphrase is kept (never the passphrase).
	HasPassphrase bool `json:"has_passphrase"`
}

// ScheduleChange turns the schedule on or off; a new passphrase
// replaces the kept one ("" keeps it).
type ScheduleChange struct {
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

func (w Workspace) loadSchedule(ctx context.Context) (storedSchedule, error) {
	var raw string
	err := w.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, scheduleKey).Scan(&raw)
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

// Schedule is w's backup schedule.
func (w Workspace) Schedule(ctx context.Context) (Schedule, error) {
	s, err := w.loadSchedule(ctx)
	return Schedule{Enabled: s.Enabled, Folder: s.Folder, Keep: s.Keep, HasPassphrase: s.Sealed != ""}, err
}

// SetSchedule saves w's backup schedule.
func (w Workspace) SetSchedule(ctx context.Context, c ScheduleChange) (Schedule, error) {
	s, err := w.loadSchedule(ctx)
	if err != nil {
		return Schedule{}, err
	}
	if c.Passphrase != "" {
		if len([]rune(c.Passphrase)) < MinPassphrase {
			return Schedule{}, fault.Invalid("the backup passphrase is too short: use at least %d characters", MinPassphrase)
		}
		s.Sealed = w.Box.Seal(c.Passphrase, scheduleLabel(w.ID))
	}
	if c.Keep < 0 || c.Keep > 999 {
		return Schedule{}, fault.Invalid("keep %d backups? Choose 0 (all) to 999", c.Keep)
	}
	s.Enabled, s.Folder, s.Keep = c.Enabled, c.Folder, c.Keep
	if s.Enabled && s.Sealed == "" {
		return Schedule{}, fault.Invalid("set a passphrase to back up on a schedule")
	}
	if s.Enabled {
		if _, err := checkFolder(s.Folder); err != nil {
			return Schedule{}, err
		}
	}
	b, _ := json.Marshal(s)
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, scheduleKey, string(b)); err != nil {
		return Schedule{}, fmt.Errorf("save the backup schedule: %w", err)
	}
	return Schedule{Enabled: s.Enabled, Folder: s.Folder, Keep: s.Keep, HasPassphrase: s.Sealed != ""}, nil
}

// IfDue makes w's scheduled backup when the schedule is on and the last
// successful one is older than Every at now. made says whether it tried.
func (w Workspace) IfDue(ctx context.Context, app string, now time.Time) (made bool, err error) {
	s, err := w.loadSchedule(ctx)
	if err != nil || !s.Enabled || s.Sealed == "" {
		return false, err
	}
	if last, _ := w.Last(ctx); last != nil && last.Error == "" && now.Sub(last.Finished) < Every {
		return false, nil
	}
	pass, err := w.Box.Open(s.Sealed, scheduleLabel(w.ID))
	if err != nil {
		return true, fmt.Errorf("open the kept backup passphrase: %w; set it again in Settings → Backups", err)
	}
	_, err = w.ToFolder(ctx, s.Folder, pass, app, s.Keep)
	return true, err
}

// Keep makes the scheduled backups of the workspace current returns until
// ctx ends: it looks every few minutes, and at once after a laptop sleep.
// current is called each time, so a renamed workspace's backups take its
// new name.
func Keep(ctx context.Context, current func() Workspace) {
	tick := time.NewTicker(checkEvery)
	defer tick.Stop()
	for {
		w := current()
		if made, err := w.IfDue(ctx, "", time.Now()); made && err != nil && ctx.Err() == nil {
			w.Logger.Warn("scheduled backup failed", "workspace", w.ID, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
