package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
)

// Transform rewrites one table's rows where they cross this device's edge,
// for columns that only this device can read (a variable's value is sealed
// with the device's own data key): Export opens them into the record, which
// the workspace's sync key then seals end to end; Import seals them again
// for this device before the row is written.
type Transform struct {
	// Export sees every record of the table before it is sealed and
	// pushed (a tombstone too, with no Row). It may rewrite r.Row, or
	// return false to keep the record on this device: it is settled
	// without a push (Requeue offers it again later). An error fails the
	// push round; return false for what a retry cannot fix.
	Export func(ctx context.Context, r *Record) (bool, error)
	// Import rewrites a pulled row before it is written, inside the apply
	// transaction. An error skips the record (it is logged, without the
	// row): never put a value in it.
	Import func(ctx context.Context, row json.RawMessage) (json.RawMessage, error)
}

// SetTransform installs t for table on this engine (the workspace does, as
// it opens: the hooks need its keys).
func (e *Engine) SetTransform(table string, t Transform) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.transforms == nil {
		e.transforms = map[string]Transform{}
	}
	e.transforms[table] = t
}

func (e *Engine) transform(table string) Transform {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.transforms[table]
}

// Requeue offers every record of table for the next push again, with the
// clock readings they have (so the edit made last still wins on every
// device), and captures the rows that have no record yet. A Transform that
// held records back calls it once they may leave (the person opted in).
func (e *Engine) Requeue(ctx context.Context, table string) error {
	if _, err := e.schema(ctx); err != nil {
		return err
	}
	t := e.table(table)
	if t == nil {
		return fmt.Errorf("requeue %s: the table does not sync", table)
	}
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE sync_records SET pushed = 0 WHERE tbl = ?`, t.Name); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO sync_outbox (tbl, pk, at)
			SELECT '%s', %s, ? FROM %s AS r WHERE %s AND NOT EXISTS (SELECT 1 FROM sync_records s WHERE s.tbl = '%[1]s' AND s.pk = %[2]s)`,
			t.Name, t.keyOf("r"), quote(t.Name), t.where("r")), e.cfg.Now().UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("requeue %s: %w", table, err)
	}
	e.poke(e.stamp)
	return nil
}
