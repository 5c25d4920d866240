// Package searchtest writes agents, runs, steps and notifications straight
// into a workspace database, as the run recorder and notify store them, for
// the tests and benchmarks of search and retention.
package searchtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Agent adds an agent (its box too, once).
func Agent(t testing.TB, db *store.DB, id string) {
	t.Helper()
	now := store.FormatTime(time.Now())
	if _, err := db.Exec(`INSERT OR IGNORE INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?)`, now); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO agents (id, name, handle, box_id, created_at, updated_at) VALUES (?, ?, ?, 'bx_1', ?, ?)`,
		id, id, id, now, now); err != nil {
		t.Fatal(err)
	}
}

// Step is one step to write: its kind and data (encoded as JSON).
type Step struct {
	Kind string
	Data any
}

// Run is a run to write.
type Run struct {
	ID, AgentID, Source, Status string
	At                          time.Time // created, and every step's time
	Steps                       []Step
}

// Write stores runs, each with its session and steps, in one transaction.
func Write(t testing.TB, db *store.DB, runs ...Run) {
	t.Helper()
	err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		for _, r := range runs {
			at := store.FormatTime(r.At)
			if _, err := tx.Exec(`INSERT OR IGNORE INTO sessions (id, agent_id, kind, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
				"se_"+r.AgentID+"_"+r.Source, r.AgentID, r.Source, at, at); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO runs (id, agent_id, session_id, source, status, input, steps, created_at) VALUES (?, ?, ?, ?, ?, '', ?, ?)`,
				r.ID, r.AgentID, "se_"+r.AgentID+"_"+r.Source, r.Source, r.Status, len(r.Steps), at); err != nil {
				return err
			}
			for i, st := range r.Steps {
				b, err := json.Marshal(st.Data)
				if err != nil {
					return err
				}
				if _, err := tx.Exec(`INSERT INTO steps (run_id, seq, kind, data, started_at, ended_at) VALUES (?, ?, ?, ?, ?, ?)`,
					r.ID, i+1, st.Kind, string(b), at, at); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("write runs: %v", err)
	}
}

// Notification adds a notification.
func Notification(t testing.TB, db *store.DB, id, agentID, runID, title, body string, at time.Time) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO notifications (id, agent_id, run_id, kind, title, body, created_at) VALUES (?, ?, ?, 'info', ?, ?, ?)`,
		id, agentID, runID, title, body, store.FormatTime(at)); err != nil {
		t.Fatal(err)
	}
}

// Input, Model, Call and Result are the data of the common step kinds.
func Input(text string) Step { return Step{"input", map[string]any{"text": text, "from": "person"}} }
func Model(text string) Step {
	return Step{"model", map[string]any{"text": text, "tool_calls": []any{}}}
}
func Call(id, name string, input any) Step {
	return Step{"tool_call", map[string]any{"id": id, "name": name, "input": input}}
}
func Result(id, name, output string) Step {
	return Step{"tool_result", map[string]any{"id": id, "name": name, "output": output, "is_error": false}}
}
