package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// BuiltinRerun is the built-in workspace assistant: the Rerun agent.
const BuiltinRerun = "rerun"

// Builtin is a built-in agent as every workspace gets it. Its id, handle and
// first soul are fixed, so the record is identical on every device of a
// workspace (they sync by record id, and handles are unique).
type Builtin struct {
	Kind         string // the agents.builtin value, e.g. BuiltinRerun
	ID           string
	Handle       string
	Name         string
	Soul         string
	Capabilities []string
	// BoxID is the box it sits on: the hidden system box.
	BoxID string
}

// builtinCreated is the built-in agents' fixed creation time.
var builtinCreated = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// errBuiltin refuses a change a built-in agent does not allow.
func errBuiltin(a Agent, action string) error {
	return fault.Invalid("@%s is built into Rerun and cannot be %s; you can change its soul and model", a.Handle, action)
}

// checkBuiltinUpdate refuses renaming or moving a built-in agent. Sending its
// current name or box back (a settings form saving every field) is fine.
func checkBuiltinUpdate(cur Agent, u Update) error {
	if cur.Builtin == "" {
		return nil
	}
	if u.Name != nil && *u.Name != cur.Name {
		return errBuiltin(cur, "renamed")
	}
	if u.BoxID != nil && *u.BoxID != cur.BoxID {
		return errBuiltin(cur, "moved to a box")
	}
	return nil
}

// EnsureBuiltin writes the built-in agent b if the workspace does not have it
// yet, with its private folder, and returns it. An existing one is left as
// the person changed it (soul, model). Its box must exist.
//
// When an agent of the person already holds b's handle (made before the
// handle was reserved), the built-in one gets the first free "<handle>-N"
// instead, and log says so.
func (s *Service) EnsureBuiltin(ctx context.Context, b Builtin, log *slog.Logger) (Agent, error) {
	if a, err := s.Get(ctx, b.ID); err == nil {
		return a, nil
	} else if !errors.Is(err, fault.ErrNotFound) {
		return Agent{}, err
	}
	caps, err := normalizeCapabilities(b.Capabilities)
	if err != nil {
		return Agent{}, fmt.Errorf("built-in agent %s: %w", b.Kind, err)
	}
	handle := b.Handle
	for n := 2; ; n++ {
		var taken int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE handle = ?`, handle).Scan(&taken); err != nil {
			return Agent{}, fmt.Errorf("create built-in agent @%s: %w", b.Handle, err)
		}
		if taken == 0 {
			break
		}
		handle = withSuffix(b.Handle, n)
	}
	if handle != b.Handle && log != nil {
		log.Warn("an agent already has the built-in agent's handle; the built-in one gets another", "want", b.Handle, "got", handle)
	}
	if err := s.makeDir(ctx, b.ID); err != nil {
		return Agent{}, err
	}
	capsJSON, _ := json.Marshal(caps)
	askJSON, _ := json.Marshal(DefaultAskFirst())
	ts := store.FormatTime(builtinCreated)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, provider, model, capabilities, ask_first, builtin, created_at, updated_at)
			VALUES (?, ?, ?, ?, '', '', ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			b.ID, b.Name, handle, b.BoxID, string(capsJSON), string(askJSON), b.Kind, ts, ts)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // written meanwhile
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO souls (agent_id, version, body, created_at) VALUES (?, 1, ?, ?)`, b.ID, b.Soul, ts)
		return err
	})
	if err != nil {
		return Agent{}, fmt.Errorf("create built-in agent @%s: %w", b.Handle, err)
	}
	s.publish("agent.created", b.ID)
	return s.Get(ctx, b.ID)
}
