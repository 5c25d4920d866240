package relaylink

// Device sync (package replica): the engine of each workspace, and what
// follows a change another device made — the agent's folder, a skill's
// file, a schedule's next fire time, the workspace's name.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// OpenReplica makes the workspace's sync engine and hooks it to the
// workspace's services. A workspace that syncs gets its capture triggers
// installed again (the synced table list may have grown since).
func OpenReplica(ctx context.Context, d Deps) (*replica.Engine, error) {
	dev, err := replica.Device(d.DataDir)
	if err != nil {
		return nil, err
	}
	log := d.Logger
	e := replica.New(d.DB, replica.Config{Workspace: d.Workspace, Dir: d.Dir, Device: dev, Bus: d.Bus, Logger: log})
	d.Skills.OnChange(func(ctx context.Context, agentID, name string, deleted bool) {
		if err := noteSkill(ctx, d.DB, agentID, name, deleted); err != nil {
			log.Warn("record a skill's removal for sync", "agent", agentID, "skill", name, "err", err)
		}
	})
	e.OnApply("meta", func(ctx context.Context, a replica.Applied) {
		if name := a.Value("value"); !a.Deleted && name != "" && d.Renamed != nil {
			d.Renamed(name)
		}
	})
	e.OnApply("agents", func(ctx context.Context, a replica.Applied) {
		id := a.Value("id")
		if !safeID.MatchString(id) {
			return
		}
		if err := agentArrivedOrLeft(ctx, d, id, a.Deleted); err != nil {
			log.Warn("sync: agent folder", "agent", id, "err", err)
		}
	})
	skillFile := func(ctx context.Context, a replica.Applied) {
		if err := syncSkillFile(ctx, d, a.Value("agent_id"), a.Value("name")); err != nil {
			log.Warn("sync: skill file", "agent", a.Value("agent_id"), "err", err)
		}
	}
	e.OnApply("skill_versions", skillFile)
	e.OnApply("skill_removals", skillFile)
	e.OnApply("schedules", func(ctx context.Context, a replica.Applied) {
		if !a.Deleted {
			if err := d.Schedules.Reschedule(ctx, a.Value("id")); err != nil {
				log.Warn("sync: plan a schedule", "err", err)
			}
		}
	})
	e.OnApply("sync_settings", func(ctx context.Context, a replica.Applied) {
		// This device may have just become the one that fires: plan from now.
		if e.Active() {
			if err := d.Schedules.Reschedule(ctx, ""); err != nil {
				log.Warn("sync: plan the schedules", "err", err)
			}
		}
	})
	syncExtras(ctx, d, e) // extras.go: memories, run summaries, variables
	if e.Enabled(ctx) {
		if err := e.Enable(ctx, false); err != nil {
			return nil, err
		}
	}
	return e, nil
}

var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// noteSkill keeps skill_removals: a deleted skill is recorded with its
// newest version, a written one is not removed any more.
func noteSkill(ctx context.Context, db *store.DB, agentID, name string, deleted bool) error {
	if !deleted {
		_, err := db.ExecContext(ctx, `DELETE FROM skill_removals WHERE agent_id = ? AND name = ?`, agentID, name)
		return err
	}
	_, err := db.ExecContext(ctx, `INSERT INTO skill_removals (agent_id, name, version)
		SELECT ?, ?, coalesce(max(version), 0) FROM skill_versions WHERE agent_id = ? AND name = ?
		ON CONFLICT (agent_id, name) DO UPDATE SET version = excluded.version`, agentID, name, agentID, name)
	return err
}

// agentArrivedOrLeft lays out the folder of an agent another device made,
// or removes what this device kept of one it deleted.
func agentArrivedOrLeft(ctx context.Context, d Deps, id string, deleted bool) error {
	dir := d.Agents.Dir(id)
	if deleted {
		if err := d.Browsers.Forget(id); err != nil {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		return d.Memory.ForgetAgent(ctx, id)
	}
	for _, sub := range []string{"files", "skills"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, "agent.db")
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	db, err := store.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	return db.Close()
}

// syncSkillFile makes an agent's skill folder what the synced rows say: the
// newest SKILL.md, or no folder once removed. Reference files stay local.
func syncSkillFile(ctx context.Context, d Deps, agentID, name string) error {
	if !safeID.MatchString(agentID) {
		return fmt.Errorf("bad agent id %q", agentID)
	}
	if err := skill.CheckName(name); err != nil {
		return err
	}
	var version, removed int
	var body string
	err := d.DB.QueryRowContext(ctx, `SELECT version, body FROM skill_versions WHERE agent_id = ? AND name = ?
		ORDER BY version DESC LIMIT 1`, agentID, name).Scan(&version, &body)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	if err := d.DB.QueryRowContext(ctx, `SELECT version FROM skill_removals WHERE agent_id = ? AND name = ?`,
		agentID, name).Scan(&removed); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	dir := filepath.Join(d.Skills.Dir(agentID), name)
	if version == 0 || (removed > 0 && removed >= version) {
		return os.RemoveAll(dir)
	}
	file := filepath.Join(dir, skill.FileName)
	if old, err := os.ReadFile(file); err == nil && string(old) == body {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
