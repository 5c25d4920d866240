package agentfile

// Exporting one agent of a workspace with what it learned: its setup as a
// template package, its memories with strength and history, every version
// of its soul; and importing such a file as a new agent (a new handle when
// its own is taken).

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

// Deps is what exporting and importing an agent reads and writes.
type Deps struct {
	DB        *store.DB // the workspace's: souls and memories
	Agents    *agent.Service
	Templates *template.Service
	// Variables mask every variable's value in an exported soul or memory.
	Variables *secret.Variables
	// Remove deletes an agent whose import failed half way, with its
	// folder and its apps.
	Remove func(ctx context.Context, agentID string) error
}

// Service exports and imports one workspace's agents as .rerun-agent files.
type Service struct{ Deps }

// New returns the workspace's agent files.
func New(d Deps) *Service { return &Service{d} }

// Export returns agent id as a .rerun-agent file. Variables' values
// never go in: the template part is scrubbed as a template is, and every
// value of a variable in a memory or a soul version is masked.
func (w *Service) Export(ctx context.Context, id string) ([]byte, error) {
	a, err := w.Agents.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	t, err := w.Templates.FromAgent(ctx, id, template.Patch{})
	if err != nil {
		return nil, fmt.Errorf("export agent @%s: %w", a.Handle, err)
	}
	pkg, err := w.Templates.Export(ctx, t.ID)
	w.Templates.Delete(ctx, t.ID) // only the package was wanted, not a library entry
	if err != nil {
		return nil, fmt.Errorf("export agent @%s: %w", a.Handle, err)
	}
	f := File{Name: a.Name, Handle: a.Handle, ExportedAt: store.FormatTime(time.Now()), Template: pkg}
	f.Souls, err = store.Query(ctx, w.DB, func(s store.Scanner) (Soul, error) {
		var v Soul
		err := s.Scan(&v.Version, &v.Body, &v.CreatedAt)
		v.Body = w.Variables.Redact(v.Body)
		return v, err
	}, `SELECT version, body, created_at FROM souls WHERE agent_id = ? ORDER BY version`, id)
	if err != nil {
		return nil, fmt.Errorf("export the souls of @%s: %w", a.Handle, err)
	}
	f.Memories, err = store.Query(ctx, w.DB, func(s store.Scanner) (Memory, error) {
		var m Memory
		var last sql.NullString
		err := s.Scan(&m.ID, &m.Text, &m.State, &m.Supersedes, &m.SupersededBy, &m.Strength, &m.Recalls, &m.ReinforcedAt, &last, &m.CreatedAt, &m.UpdatedAt)
		m.Text, m.LastRecalledAt = w.Variables.Redact(m.Text), last.String
		return m, err
	}, `SELECT id, text, state, supersedes, superseded_by, strength, recalls, reinforced_at, last_recalled_at, created_at, updated_at
		FROM memories WHERE agent_id = ? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("export the memories of @%s: %w", a.Handle, err)
	}
	return Marshal(f)
}

// Import adds the agent a .rerun-agent file holds to this workspace,
// on box boxID ("" the first): installed from its template part (whose
// reader refuses path tricks and credentials; automations come paused),
// then given its soul versions and memories. A file that breaks a rule is
// refused whole, nothing kept.
func (w *Service) Import(ctx context.Context, data []byte, boxID string) (agent.Agent, error) {
	f, err := Read(data)
	if err != nil {
		return agent.Agent{}, err
	}
	t, err := w.Templates.Import(ctx, f.Template)
	if err != nil {
		return agent.Agent{}, err
	}
	in, err := w.Templates.Install(ctx, t.ID, template.InstallOptions{BoxID: boxID, Name: f.Name})
	w.Templates.Delete(ctx, t.ID)
	if err != nil {
		return agent.Agent{}, err
	}
	a := in.Agent
	ids := map[string]string{}
	for _, m := range f.Memories {
		ids[m.ID] = store.NewID("mem")
	}
	err = w.DB.Tx(ctx, func(tx *sql.Tx) error {
		if len(f.Souls) > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM souls WHERE agent_id = ?`, a.ID); err != nil {
				return err
			}
			for _, s := range f.Souls {
				if _, err := tx.ExecContext(ctx, `INSERT INTO souls (agent_id, version, body, created_at) VALUES (?, ?, ?, ?)`,
					a.ID, s.Version, s.Body, s.CreatedAt); err != nil {
					return err
				}
			}
		}
		for _, m := range f.Memories {
			var last any
			if m.LastRecalledAt != "" {
				last = m.LastRecalledAt
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO memories (id, agent_id, text, state, supersedes, superseded_by, strength, recalls,
				reinforced_at, last_recalled_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				ids[m.ID], a.ID, m.Text, m.State, ids[m.Supersedes], ids[m.SupersededBy], m.Strength, m.Recalls,
				m.ReinforcedAt, last, m.CreatedAt, m.UpdatedAt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		w.Remove(ctx, a.ID)
		return agent.Agent{}, fmt.Errorf("import agent %q: %w", f.Name, err)
	}
	return w.Agents.Get(ctx, a.ID)
}
