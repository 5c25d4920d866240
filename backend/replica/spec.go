package replica

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/event"
)

// Table says how one table syncs. Its columns are read from the schema when
// sync is enabled (every column but Exclude), so a column added by a later
// migration syncs without a change here.
type Table struct {
	Name string
	// Key names the row across devices when the table's primary key is
	// this database's own (memories: n is the rowid the keyword index
	// uses; id is the key). The columns must be UNIQUE together; ""
	// means the primary key.
	Key []string
	// Where limits the synced rows: an SQL condition on the row, written
	// with %[1]s as its alias (e.g. "%[1]s.key = 'name'"). "" syncs all.
	Where string
	// Exclude are device-local columns: never sent, never overwritten.
	Exclude []string
	// Quiet are synced columns whose change alone is not captured (a
	// schedule's updated_at moves on every fire).
	Quiet []string
	// Parent is the table a row needs first (a foreign key) and the
	// column naming the parent's primary key: a record that arrives before
	// its parent is parked, and dropped once the parent is a tombstone.
	Parent, ParentColumn string
	// Folder is the folder (slash path under Config.Dir) whose files ride
	// inside the record, given the primary key; nil for none.
	Folder func(pk []any) string
	// Event is what the UI is told after a remote change; nil for nothing.
	Event func(a Applied) event.Change
}

// Tables is what syncs (see the package doc). A table missing from the
// schema (an older database) is skipped.
var Tables = []Table{
	{Name: "meta", Where: "%[1]s.key = 'name'", Event: fixed("workspace.updated", "")},
	{Name: "sync_settings", Event: fixed("sync.settings", "")},
	{Name: "boxes", Event: crud("box", "id", "")},
	{Name: "agents", Parent: "boxes", ParentColumn: "box_id", Event: crud("agent", "id", "")},
	{Name: "souls", Parent: "agents", ParentColumn: "agent_id", Event: fixed("agent.updated", "agent_id")},
	{Name: "skill_versions", Parent: "agents", ParentColumn: "agent_id", Event: fixed("skill.changed", "agent_id")},
	{Name: "skill_removals", Parent: "agents", ParentColumn: "agent_id", Event: fixed("skill.changed", "agent_id")},
	{Name: "schedules", Parent: "agents", ParentColumn: "agent_id",
		Exclude: []string{"next_fire_at", "last_fired_at"}, Quiet: []string{"updated_at"}, Event: crud("schedule", "id", "agent_id")},
	{Name: "triggers", Parent: "agents", ParentColumn: "agent_id", Event: crud("trigger", "id", "agent_id")},
	{Name: "trigger_tokens", Parent: "triggers", ParentColumn: "trigger_id", Event: fixed("trigger.updated", "trigger_id")},
	{Name: "templates", Folder: func(pk []any) string { return "templates/" + fmt.Sprint(pk[0]) }, Event: crud("template", "id", "")},
	{Name: "brain_pages", Event: crud("brain.page", "id", "")},
	{Name: "brain_versions", Parent: "brain_pages", ParentColumn: "page_id", Event: fixed("brain.page.updated", "page_id")},
	// Memories travel as text: the vector index and the model that filled
	// it stay on each device (the workspace re-embeds what arrives), and a
	// recall's reinforcement alone is not a change worth a record.
	{Name: "memories", Key: []string{"id"}, Parent: "agents", ParentColumn: "agent_id",
		Exclude: []string{"n", "embed_model"}, Quiet: []string{"strength", "recalls", "reinforced_at", "last_recalled_at"},
		Event: ofAgent("memory.changed")},
	// Runs stay on the device that ran them; their summaries travel.
	{Name: "run_summaries", Parent: "agents", ParentColumn: "agent_id", Event: ofAgent("run.summary")},
	// Variables' values are sealed with each device's own data key: they
	// leave only through the workspace's Transform, and only when the
	// person opted in (sync_settings sync_variables).
	{Name: "variables"},
}

// crud tells created / updated / deleted of the row whose id is in column
// id (and its agent in column agent, if any).
func crud(noun, id, agent string) func(Applied) event.Change {
	return func(a Applied) event.Change {
		kind := noun + ".updated"
		switch {
		case a.Deleted:
			kind = noun + ".deleted"
		case a.Old == nil:
			kind = noun + ".created"
		}
		return event.Change{Kind: kind, ID: a.Value(id), Agent: a.Value(agent), Session: a.Value("session_id")}
	}
}

// fixed tells kind about the row named by column id.
func fixed(kind, id string) func(Applied) event.Change {
	return func(a Applied) event.Change { return event.Change{Kind: kind, ID: a.Value(id)} }
}

// ofAgent tells kind about the agent of the row (id and agent: its id).
func ofAgent(kind string) func(Applied) event.Change {
	return func(a Applied) event.Change {
		id := a.Value("agent_id")
		return event.Change{Kind: kind, ID: id, Agent: id}
	}
}

// table is a Table as found in the schema.
type table struct {
	Table
	pk      []string // primary key columns, in key order
	columns []string // synced columns, the key included
	watched []string // columns whose change is captured
	parent  *table
}

// readSchema resolves the spec against the database: tables that exist,
// with their key and synced columns.
func readSchema(ctx context.Context, db *sql.DB, spec []Table) ([]*table, error) {
	var out []*table
	byName := map[string]*table{}
	for _, s := range spec {
		rows, err := db.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, s.Name)
		if err != nil {
			return nil, fmt.Errorf("read the columns of %s: %w", s.Name, err)
		}
		t := &table{Table: s}
		keys := map[int]string{}
		for rows.Next() {
			var name string
			var pk int
			if err := rows.Scan(&name, &pk); err != nil {
				rows.Close()
				return nil, err
			}
			if pk > 0 {
				keys[pk] = name
			}
			if slices.Contains(s.Exclude, name) {
				continue
			}
			t.columns = append(t.columns, name)
			if !slices.Contains(s.Quiet, name) {
				t.watched = append(t.watched, name)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(t.columns) == 0 {
			continue // not in this schema
		}
		for i := 1; i <= len(keys); i++ {
			t.pk = append(t.pk, keys[i])
		}
		if len(s.Key) > 0 {
			for _, c := range s.Key {
				if !slices.Contains(t.columns, c) {
					return nil, fmt.Errorf("table %s: key column %s is not a synced column", s.Name, c)
				}
			}
			t.pk = slices.Clone(s.Key)
		}
		if len(t.pk) == 0 {
			return nil, fmt.Errorf("table %s has no primary key: it cannot sync", s.Name)
		}
		out = append(out, t)
		byName[s.Name] = t
	}
	for _, t := range out {
		t.parent = byName[t.Parent]
	}
	return out, nil
}

// where is the table's row filter for alias, "1" when it has none.
func (t *table) where(alias string) string {
	if t.Where == "" {
		return "1"
	}
	return fmt.Sprintf(t.Where, alias)
}

// keyOf is the SQL of the row's key as a JSON array, for alias.
func (t *table) keyOf(alias string) string {
	parts := make([]string, len(t.pk))
	for i, c := range t.pk {
		parts[i] = alias + "." + quote(c)
	}
	return "json_array(" + strings.Join(parts, ", ") + ")"
}

// matchKey is a WHERE clause matching the row whose key is the JSON array
// bound as parameter n.
func (t *table) matchKey(n int) string {
	parts := make([]string, len(t.pk))
	for i, c := range t.pk {
		parts[i] = fmt.Sprintf("%s IS json_extract(?%d, '$[%d]')", quote(c), n, i)
	}
	return strings.Join(parts, " AND ")
}

// rowJSON is the SQL of the synced columns as one JSON object.
func (t *table) rowJSON() string {
	parts := make([]string, 0, 2*len(t.columns))
	for _, c := range t.columns {
		parts = append(parts, "'"+c+"'", quote(c))
	}
	return "json_object(" + strings.Join(parts, ", ") + ")"
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
