// Package retention keeps a workspace's disk from only growing: it prunes
// runs (and their steps, cards and search entries) older than the
// workspace keeps them, trims long tool outputs of older runs while keeping
// their steps, gives the freed pages back to the file system a little at a
// time, and says how much disk each agent and the workspace use.
//
// Pinned runs are never pruned or trimmed, and neither are runs in flight
// (queued, running) or paused: only runs that ended are touched. Pruning
// runs in the background in small transactions, so runs and the UI keep
// writing between them.
package retention

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Settings are how long a workspace keeps what its runs did.
type Settings struct {
	// KeepDays is how many days runs and their steps are kept; 0 = forever.
	KeepDays int `json:"keep_days"`
	// TrimDays is after how many days tool outputs longer than TrimChars
	// are cut to that length (the step stays); 0 = never.
	TrimDays  int `json:"trim_days"`
	TrimChars int `json:"trim_chars"`
}

// Limits of the settings.
const (
	MaxDays      = 3650
	MinTrimChars = 256
	MaxTrimChars = 64 << 10 // tool outputs are capped there anyway
)

// Config tunes the service; zero values take the defaults.
type Config struct {
	Interval time.Duration    // between prune passes; default 1 h
	Batch    int              // runs (or notifications) per transaction; default 100
	Now      func() time.Time // default time.Now

	// Bus (may be nil) hears "settings.changed" (ID SettingsID) when the
	// settings change
	// and "run.updated" when a run is pinned or unpinned, so every window
	// shows them; Workspace names the workspace in those changes.
	Bus       *event.Bus
	Workspace string
}

// Service prunes one workspace's database.
type Service struct {
	db   *store.DB
	dirs Dirs
	cfg  Config
	log  *slog.Logger
	kick chan struct{}
}

// Dirs are where the workspace keeps its files (DiskUse reads them).
type Dirs struct {
	Workspace string // the workspace's folder: workspace.db, shared/, shared.db
	Agents    string // agents/<id>/ folders
}

// New returns the retention of db.
func New(db *store.DB, dirs Dirs, log *slog.Logger, cfg Config) *Service {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Hour
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: db, dirs: dirs, cfg: cfg, log: log, kick: make(chan struct{}, 1)}
}

// Settings returns the workspace's retention settings.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	var st Settings
	err := s.db.QueryRowContext(ctx, `SELECT keep_days, trim_days, trim_chars FROM retention WHERE id = 1`).Scan(&st.KeepDays, &st.TrimDays, &st.TrimChars)
	if err != nil {
		return Settings{}, fmt.Errorf("read retention settings: %w", err)
	}
	return st, nil
}

// SetSettings stores new settings; the next prune pass starts at once.
func (s *Service) SetSettings(ctx context.Context, st Settings) (Settings, error) {
	switch {
	case st.KeepDays < 0 || st.KeepDays > MaxDays:
		return Settings{}, fault.Invalid("keep runs between 1 and %d days, or 0 to keep them forever", MaxDays)
	case st.TrimDays < 0 || st.TrimDays > MaxDays:
		return Settings{}, fault.Invalid("trim tool outputs after 1 to %d days, or 0 never to trim them", MaxDays)
	case st.TrimChars < MinTrimChars || st.TrimChars > MaxTrimChars:
		return Settings{}, fault.Invalid("tool outputs are trimmed to between %d and %d characters", MinTrimChars, MaxTrimChars)
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var old int
		if err := tx.QueryRowContext(ctx, `SELECT trim_chars FROM retention WHERE id = 1`).Scan(&old); err != nil {
			return err
		}
		through := "trimmed_through"
		if st.TrimChars < old {
			through = "''" // a shorter length applies to what was trimmed longer
		}
		_, err := tx.ExecContext(ctx, `UPDATE retention SET keep_days = ?, trim_days = ?, trim_chars = ?, trimmed_through = `+through+`,
			updated_at = ? WHERE id = 1`, st.KeepDays, st.TrimDays, st.TrimChars, store.FormatTime(s.cfg.Now()))
		return err
	})
	if err != nil {
		return Settings{}, fmt.Errorf("save retention settings: %w", err)
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	s.publish(event.Change{Kind: "settings.changed", ID: SettingsID})
	return st, nil
}

// SettingsID is the ID of the "settings.changed" published when the
// settings change.
const SettingsID = "retention"

func (s *Service) publish(c event.Change) {
	if s.cfg.Bus != nil {
		c.Workspace = s.cfg.Workspace
		s.cfg.Bus.Publish(c)
	}
}

// Pin keeps a run (pinned) from ever being pruned or trimmed, or lets it
// go again.
func (s *Service) Pin(ctx context.Context, runID string, pinned bool) error {
	var agentID, sessionID string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT agent_id, session_id FROM runs WHERE id = ?`, runID).Scan(&agentID, &sessionID); errors.Is(err, sql.ErrNoRows) {
			return fault.NotFound("no run with id %q", runID)
		} else if err != nil {
			return fmt.Errorf("pin run %s: %w", runID, err)
		}
		var err error
		if pinned {
			_, err = tx.ExecContext(ctx, `INSERT OR IGNORE INTO run_pins (run_id, pinned_at) VALUES (?, ?)`, runID, store.FormatTime(s.cfg.Now()))
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM run_pins WHERE run_id = ?`, runID)
		}
		if err != nil {
			return fmt.Errorf("pin run %s: %w", runID, err)
		}
		return nil
	})
	if err == nil {
		s.publish(event.Change{Kind: "run.updated", ID: runID, Agent: agentID, Session: sessionID})
	}
	return err
}

// Pinned says whether a run is pinned.
func (s *Service) Pinned(ctx context.Context, runID string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM run_pins WHERE run_id = ?`, runID).Scan(&n); err != nil {
		return false, fmt.Errorf("read pin of %s: %w", runID, err)
	}
	return n > 0, nil
}

// Report is what one prune pass did.
type Report struct {
	Runs          int `json:"runs"`          // runs deleted, steps and all
	Trimmed       int `json:"trimmed"`       // tool outputs cut
	Notifications int `json:"notifications"` // handled notifications deleted
}

// ended is the statuses a run may be pruned or trimmed in.
const ended = `('done', 'failed', 'cancelled')`

// vacuumPages is how many free pages each batch gives back.
const vacuumPages = 512

// Prune runs one pass: it deletes the runs older than KeepDays, trims the
// tool outputs of runs older than TrimDays and deletes the handled
// notifications older than KeepDays whose run is gone, each in
// transactions of Batch rows, vacuuming between them.
func (s *Service) Prune(ctx context.Context) (Report, error) {
	var rep Report
	st, err := s.Settings(ctx)
	if err != nil {
		return rep, err
	}
	now := s.cfg.Now()
	if st.KeepDays > 0 {
		cutoff := store.FormatTime(now.AddDate(0, 0, -st.KeepDays))
		for {
			n, err := s.batch(ctx, `DELETE FROM runs WHERE id IN (SELECT id FROM runs
				WHERE status IN `+ended+` AND created_at < ? AND coalesce(ended_at, created_at) < ?
				AND id NOT IN (SELECT run_id FROM run_pins) LIMIT ?)`, cutoff, cutoff, s.cfg.Batch)
			rep.Runs += n
			if err != nil {
				return rep, fmt.Errorf("prune runs: %w", err)
			}
			if n < s.cfg.Batch {
				break
			}
		}
		for {
			n, err := s.batch(ctx, `DELETE FROM notifications WHERE id IN (SELECT id FROM notifications
				WHERE handled_at IS NOT NULL AND created_at < ? AND (run_id = '' OR run_id NOT IN (SELECT id FROM runs)) LIMIT ?)`,
				cutoff, s.cfg.Batch)
			rep.Notifications += n
			if err != nil {
				return rep, fmt.Errorf("prune notifications: %w", err)
			}
			if n < s.cfg.Batch {
				break
			}
		}
	}
	if st.TrimDays > 0 {
		n, err := s.trim(ctx, st, store.FormatTime(now.AddDate(0, 0, -st.TrimDays)))
		rep.Trimmed += n
		if err != nil {
			return rep, fmt.Errorf("trim tool outputs: %w", err)
		}
	}
	return rep, nil
}

// batch runs one pruning statement in its own transaction, then gives
// freed pages back.
func (s *Service) batch(ctx context.Context, q string, args ...any) (int, error) {
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, err
	}
	if n > 0 {
		if err := s.db.IncrementalVacuum(ctx, vacuumPages); err != nil {
			return int(n), err
		}
	}
	return int(n), nil
}

// trim cuts the long tool outputs of ended, unpinned runs created before
// cutoff, Batch runs at a time, from where the last pass stopped. The
// step keeps the output's start and says how long it was (trimmed).
func (s *Service) trim(ctx context.Context, st Settings, cutoff string) (int, error) {
	total := 0
	for {
		var n int
		var through string
		err := s.db.Tx(ctx, func(tx *sql.Tx) error {
			if err := tx.QueryRowContext(ctx, `SELECT trimmed_through FROM retention WHERE id = 1`).Scan(&through); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT id, created_at FROM runs WHERE status IN `+ended+`
				AND created_at < ? AND created_at > ? ORDER BY created_at LIMIT ?`, cutoff, through, s.cfg.Batch)
			if err != nil {
				return err
			}
			var ids []string
			for rows.Next() {
				var id string
				if err := rows.Scan(&id, &through); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, id)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, id := range ids {
				res, err := tx.ExecContext(ctx, `UPDATE steps SET data = json_set(data,
						'$.output', substr(json_extract(data, '$.output'), 1, ?1) || '… [trimmed by retention]',
						'$.trimmed', length(json_extract(data, '$.output')))
					WHERE run_id = ?2 AND kind = 'tool_result' AND length(data) > ?1 AND json_valid(data)
					AND length(json_extract(data, '$.output')) > ?1 + 30
					AND ?2 NOT IN (SELECT run_id FROM run_pins)`, st.TrimChars, id)
				if err != nil {
					return err
				}
				c, _ := res.RowsAffected()
				n += int(c)
			}
			if len(ids) == 0 {
				return errDone
			}
			_, err = tx.ExecContext(ctx, `UPDATE retention SET trimmed_through = ? WHERE id = 1`, through)
			return err
		})
		if errors.Is(err, errDone) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		total += n
		if n > 0 {
			if err := s.db.IncrementalVacuum(ctx, vacuumPages); err != nil {
				return total, err
			}
		}
	}
}

var errDone = errors.New("nothing left to trim")

// Serve prunes now and every Interval (and at once after SetSettings)
// until ctx is cancelled. The first pass turns incremental vacuum on in
// a database made before it (one full VACUUM).
func (s *Service) Serve(ctx context.Context) error {
	if err := s.db.EnableIncrementalVacuum(ctx); err != nil && ctx.Err() == nil {
		s.log.Error("enable incremental vacuum", "err", err)
	}
	for {
		rep, err := s.Prune(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			s.log.Error("prune", "err", err)
		case rep != Report{}:
			s.log.Info("pruned", "runs", rep.Runs, "trimmed", rep.Trimmed, "notifications", rep.Notifications)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-s.kick:
		case <-time.After(s.cfg.Interval):
		}
	}
}
