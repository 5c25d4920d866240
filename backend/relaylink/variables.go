package relaylink

// Variables' values sync only when the person opts in (Settings →
// Variables, "Sync variable values to my other devices"): the synced
// setting sync_variables. Each device seals values with its own data key,
// so a row cannot travel as stored; the table's Transform opens the value
// into the record (sealed end to end with the workspace's sync key) and
// seals it again with this device's key where it arrives.
//
// With the setting off nothing of a variable leaves the device: no value,
// and no name either. A name alone would be a row the other device cannot
// store (every stored variable must open with its data key), and a name
// can say more than it should ("ACME_BANK_PASSWORD").

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/rerun-build/rerun-desktop/backend/replica"
)

// syncVariablesKey is the sync_settings key of the opt-in.
const syncVariablesKey = "sync_variables"

// VariableSync is the opt-in as the app shows it.
type VariableSync struct {
	Enabled bool `json:"enabled"`
}

// VariableSync says whether variables' values sync to the other devices.
func (r *Service) VariableSync(ctx context.Context) (VariableSync, error) {
	on, err := variablesSynced(ctx, r.db)
	return VariableSync{Enabled: on}, err
}

// SetVariableSync turns the opt-in on or off for the workspace (on every
// device: the setting syncs). Turning it on offers every value for the next
// push; turning it off stops values leaving from the next push on (what
// the other devices already have stays there).
func (r *Service) SetVariableSync(ctx context.Context, in VariableSync) (VariableSync, error) {
	v := "0"
	if in.Enabled {
		v = "1"
	}
	if _, err := r.db.ExecContext(ctx, `INSERT INTO sync_settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, syncVariablesKey, v); err != nil {
		return VariableSync{}, fmt.Errorf("save the variable sync setting: %w", err)
	}
	if in.Enabled && r.replica.Enabled(ctx) {
		if err := r.replica.Requeue(ctx, "variables"); err != nil {
			return VariableSync{}, err
		}
	}
	return r.VariableSync(ctx)
}

func variablesSynced(ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var v string
	err := db.QueryRowContext(ctx, `SELECT value FROM sync_settings WHERE key = ?`, syncVariablesKey).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the variable sync setting: %w", err)
	}
	return v == "1", nil
}

// syncVariables installs the variables' Transform and what follows a value
// or the setting arriving.
func syncVariables(d Deps, e *replica.Engine, log *slog.Logger) {
	e.SetTransform("variables", replica.Transform{
		Export: func(ctx context.Context, r *replica.Record) (bool, error) {
			on, err := variablesSynced(ctx, d.DB)
			if err != nil || !on {
				return false, err
			}
			if r.Deleted {
				return true, nil
			}
			var row map[string]any
			if err := json.Unmarshal(r.Row, &row); err != nil {
				return false, nil
			}
			name, _ := row["name"].(string)
			sealed, _ := row["value"].(string)
			plain, err := d.Variables.Export(name, sealed)
			if err != nil {
				// Sealed with another key: it cannot leave, and retrying
				// will not change that. The error names no value.
				log.Warn("sync: a variable stays on this device", "err", err)
				return false, nil
			}
			row["value"] = plain
			r.Row, err = json.Marshal(row)
			return err == nil, err
		},
		Import: func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
			var row map[string]any
			if err := json.Unmarshal(raw, &row); err != nil {
				return nil, errors.New("the variable row is not a JSON object")
			}
			name, _ := row["name"].(string)
			plain, ok := row["value"].(string)
			if !ok {
				return nil, fmt.Errorf("variable %s arrived without a value", name)
			}
			sealed, err := d.Variables.Import(name, plain)
			if err != nil {
				return nil, err
			}
			row["value"] = sealed
			return json.Marshal(row)
		},
	})
	e.OnApply("variables", func(ctx context.Context, a replica.Applied) {
		if err := d.Variables.Reload(ctx, a.Value("name")); err != nil {
			log.Warn("sync: load an arrived variable", "err", err)
		}
	})
	e.OnApply("sync_settings", func(ctx context.Context, a replica.Applied) {
		if a.Value("key") != syncVariablesKey || a.Deleted || a.Value("value") != "1" {
			return
		}
		if a.Old != nil && fmt.Sprint(a.Old["value"]) == "1" {
			return
		}
		// Another device turned it on: this device's values go too.
		if err := e.Requeue(ctx, "variables"); err != nil {
			log.Warn("sync: offer the variables", "err", err)
		}
	})
}
