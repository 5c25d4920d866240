// Package box owns the boxes of a workspace: the named rectangles agents sit on.
//
// A box groups agents and holds nothing of its own, so creating, renaming and
// reordering are free; deleting is refused while an agent sits on it.
package box

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// MaxNameLen is the longest box name, in characters.
const MaxNameLen = 64

// Box is a named group of agents on the board.
type Box struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Position  int       `json:"position"`
	CreatedAt time.Time `json:"created_at"`
	// System is set on the hidden box of the built-in agents (SystemID).
	System bool `json:"system,omitempty"`
}

// SystemID is the hidden box the built-in agents (the Rerun agent, the
// Foreman) sit on. Its id is fixed so the same record exists on every device
// of a workspace. It is never listed, renamed, reordered or deleted, and no
// other agent may sit on it.
const SystemID = "bx_system"

// systemCreated is the system box's fixed creation time: every device writes
// the identical record.
var systemCreated = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// errSystem is the refusal of any change to the system box.
func errSystem(action string) error {
	return fault.Invalid("the system box holds Rerun's built-in agents and cannot be %s", action)
}

// Service reads and changes the boxes of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	bus       *event.Bus
}

// NewService returns the box service of the workspace whose database is db.
// Changes are announced on bus (which may be nil).
func NewService(db *store.DB, workspaceID string, bus *event.Bus) *Service {
	return &Service{db: db, workspace: workspaceID, bus: bus}
}

func (s *Service) publish(kind, id string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: id})
	}
}

// CleanName trims a box name and checks it.
func CleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fault.Invalid("a box needs a name")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", fault.Invalid("box name is %d characters; keep it to %d", utf8.RuneCountInString(name), MaxNameLen)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", fault.Invalid("box name contains a control character; use plain text")
	}
	return name, nil
}

const columns = `id, name, position, created_at, system`

func scan(row store.Scanner) (Box, error) {
	var b Box
	var created string
	err := row.Scan(&b.ID, &b.Name, &b.Position, &created, &b.System)
	b.CreatedAt = store.ParseTime(created)
	return b, err
}

// List returns the boxes in board order; the system box is not among them.
func (s *Service) List(ctx context.Context) ([]Box, error) {
	boxes, err := store.QueryPrepared(ctx, s.db, scan, `SELECT `+columns+` FROM boxes WHERE system = 0 ORDER BY position, created_at`)
	if err != nil {
		return nil, fmt.Errorf("list boxes: %w", err)
	}
	return boxes, nil
}

// Get returns one box (the system box too: its agents name it).
func (s *Service) Get(ctx context.Context, id string) (Box, error) {
	b, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM boxes WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Box{}, fault.NotFound("no box with id %q", id)
	}
	if err != nil {
		return Box{}, fmt.Errorf("get box %q: %w", id, err)
	}
	return b, nil
}

// Create adds a box at the end of the board.
func (s *Service) Create(ctx context.Context, name string) (Box, error) {
	name, err := CleanName(name)
	if err != nil {
		return Box{}, err
	}
	b := Box{ID: store.NewID("bx"), Name: name, CreatedAt: time.Now().UTC()}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(position), -1) + 1 FROM boxes WHERE system = 0`).Scan(&b.Position); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO boxes (`+columns+`) VALUES (?, ?, ?, ?, 0)`,
			b.ID, b.Name, b.Position, store.FormatTime(b.CreatedAt))
		return err
	})
	if err != nil {
		return Box{}, fmt.Errorf("create box %q: %w", name, err)
	}
	s.publish("box.created", b.ID)
	return b, nil
}

// Rename changes a box's name.
func (s *Service) Rename(ctx context.Context, id, name string) (Box, error) {
	name, err := CleanName(name)
	if err != nil {
		return Box{}, err
	}
	if id == SystemID {
		return Box{}, errSystem("renamed")
	}
	res, err := s.db.ExecContext(ctx, `UPDATE boxes SET name = ? WHERE id = ? AND system = 0`, name, id)
	if err != nil {
		return Box{}, fmt.Errorf("rename box %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Box{}, fault.NotFound("no box with id %q", id)
	}
	s.publish("box.updated", id)
	return s.Get(ctx, id)
}

// Reorder sets the board order; ids must name every box exactly once.
func (s *Service) Reorder(ctx context.Context, ids []string) ([]Box, error) {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM boxes WHERE system = 0`).Scan(&count); err != nil {
			return err
		}
		seen := make(map[string]bool, len(ids))
		for _, id := range ids {
			if seen[id] {
				return fault.Invalid("box %q appears twice in the new order; list each box once", id)
			}
			seen[id] = true
		}
		if len(ids) != count {
			return fault.Invalid("the new order lists %d boxes but the workspace has %d; list every box once", len(ids), count)
		}
		for i, id := range ids {
			res, err := tx.ExecContext(ctx, `UPDATE boxes SET position = ? WHERE id = ? AND system = 0`, i, id)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fault.NotFound("no box with id %q", id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reorder boxes: %w", err)
	}
	s.publish("boxes.reordered", "")
	return s.List(ctx)
}

// Delete removes an empty box. It is refused while agents sit on it, and
// refused for the last box (agents always need somewhere to stand).
func (s *Service) Delete(ctx context.Context, id string) error {
	if id == SystemID {
		return errSystem("deleted")
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var name string
		err := tx.QueryRowContext(ctx, `SELECT name FROM boxes WHERE id = ?`, id).Scan(&name)
		if errors.Is(err, sql.ErrNoRows) {
			return fault.NotFound("no box with id %q", id)
		}
		if err != nil {
			return err
		}
		var agents, boxes int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE box_id = ?`, id).Scan(&agents); err != nil {
			return err
		}
		if agents > 0 {
			if agents == 1 {
				return fault.Conflict("Box %q still has 1 coworker on it; move it to another box first", name)
			}
			return fault.Conflict("Box %q still has %d coworkers on it; move them to another box first", name, agents)
		}
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM boxes WHERE system = 0`).Scan(&boxes); err != nil {
			return err
		}
		if boxes == 1 {
			return fault.Conflict("Box %q is the workspace's only box; create another before deleting it", name)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM boxes WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete box: %w", err)
	}
	s.publish("box.deleted", id)
	return nil
}

// EnsureSystem writes the system box if it is missing. Every device writes
// the same record (fixed id, name and time), so syncing them never
// conflicts.
func (s *Service) EnsureSystem(ctx context.Context) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO boxes (`+columns+`) VALUES (?, 'System', -1, ?, 1) ON CONFLICT (id) DO NOTHING`,
		SystemID, store.FormatTime(systemCreated))
	if err != nil {
		return fmt.Errorf("create the system box: %w", err)
	}
	return nil
}
