package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Applied is one remote change that committed: the row as it is now (nil
// when deleted) and as it was before (nil when it was not here).
type Applied struct {
	Table   string
	Deleted bool
	Row     map[string]any
	Old     map[string]any
	// Key holds the primary key's columns.
	Key map[string]any
	// Files are the record's folder (Table.Folder); FilesOmitted says they
	// were too large to carry, and the folder was left as it was.
	Files        map[string][]byte
	FilesOmitted bool
}

// Value is column col of the row (as it is, else as it was, else from the
// key) as text; "" when col is "" or unknown.
func (a Applied) Value(col string) string {
	if col == "" {
		return ""
	}
	for _, m := range []map[string]any{a.Row, a.Old, a.Key} {
		if v, ok := m[col]; ok && v != nil {
			return fmt.Sprint(v)
		}
	}
	return ""
}

// pulled is an opened record and its place in the relay's log.
type pulled struct {
	seq int64
	rec Record
}

// apply applies opened records in one immediate transaction: it stamps
// pending local changes first (so none is overwritten unseen), applies each
// record that is newer than what this device has, retries parked ones, and
// moves the cursor to cursor. Then it runs the hooks and publishes events.
func (e *Engine) apply(ctx context.Context, list []pulled, cursor int64) error {
	if _, err := e.schema(ctx); err != nil {
		return err
	}
	if err := e.loadClock(ctx); err != nil {
		return err
	}
	var done []Applied
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		done = done[:0]
		if _, err := e.stampTx(ctx, tx); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sync_applying SET active = 1 WHERE id = 1`); err != nil {
			return err
		}
		for _, p := range list {
			a, err := e.applyOne(ctx, tx, p)
			if err != nil {
				return err
			}
			if a != nil {
				done = append(done, *a)
			}
		}
		more, err := e.retryParked(ctx, tx)
		if err != nil {
			return err
		}
		done = append(done, more...)
		if _, err := tx.ExecContext(ctx, `UPDATE sync_applying SET active = 0 WHERE id = 1`); err != nil {
			return err
		}
		if err := setState(ctx, tx, "cursor", fmt.Sprint(cursor)); err != nil {
			return err
		}
		return setState(ctx, tx, "hlc", e.clock.now().String())
	})
	if err != nil {
		return fmt.Errorf("apply pulled changes: %w", err)
	}
	e.after(ctx, done)
	return nil
}

// retryParked applies parked records until a pass applies none.
func (e *Engine) retryParked(ctx context.Context, tx *sql.Tx) ([]Applied, error) {
	var out []Applied
	for {
		rows, err := tx.QueryContext(ctx, `SELECT seq, record FROM sync_parked ORDER BY seq`)
		if err != nil {
			return nil, err
		}
		var list []pulled
		for rows.Next() {
			var p pulled
			var raw string
			if err := rows.Scan(&p.seq, &raw); err != nil {
				rows.Close()
				return nil, err
			}
			if json.Unmarshal([]byte(raw), &p.rec) == nil {
				list = append(list, p)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(list) == 0 {
			return out, err
		}
		progress := false
		for _, p := range list {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sync_parked WHERE tbl = ? AND pk = ?`, p.rec.Table, p.rec.PK); err != nil {
				return nil, err
			}
			a, err := e.applyOne(ctx, tx, p)
			if err != nil {
				return nil, err
			}
			var still int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sync_parked WHERE tbl = ? AND pk = ?`, p.rec.Table, p.rec.PK).Scan(&still); err != nil {
				return nil, err
			}
			if still == 0 {
				progress = true
			}
			if a != nil {
				out = append(out, *a)
			}
		}
		if !progress {
			return out, nil
		}
	}
}

// applyOne applies one record if it is newer than this device's version of
// the row. A record that cannot apply yet (its parent has not arrived) is
// parked; one that can never apply (bad row) is logged and skipped. Only
// an error of the database itself is returned.
func (e *Engine) applyOne(ctx context.Context, tx *sql.Tx, p pulled) (*Applied, error) {
	r := p.rec
	h, _ := ParseHLC(r.HLC) // checked when opened
	if ahead := time.Duration(h.Wall-e.cfg.Now().UnixMilli()) * time.Millisecond; ahead > MaxDrift {
		// A device whose clock is far ahead would win every comparison
		// from now on, and drag every device's clock with it: refuse the
		// record (a later edit from a device with a sane clock applies).
		e.log.Warn("sync: skipped a record from a device whose clock is far ahead", "device", r.Device, "ahead", ahead.Round(time.Second), "seq", p.seq)
		return nil, nil
	}
	e.clock.observe(h)
	t := e.table(r.Table)
	if t == nil {
		e.log.Warn("sync: skipped a record of a table this version does not sync", "table", r.Table, "seq", p.seq)
		return nil, nil
	}
	var localHLC, localDevice string
	err := tx.QueryRowContext(ctx, `SELECT hlc, device FROM sync_records WHERE tbl = ? AND pk = ?`, r.Table, r.PK).Scan(&localHLC, &localDevice)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	case r.HLC == localHLC && r.Device == localDevice:
		return nil, nil // this device has it
	case !newer(r.HLC, r.Device, localHLC, localDevice):
		// This device has something later. The relay keeps only the newest
		// push per key, so the loser may now stand there: push the winner
		// again, or devices that pull later never see it.
		_, err := tx.ExecContext(ctx, `UPDATE sync_records SET pushed = 0 WHERE tbl = ? AND pk = ?`, r.Table, r.PK)
		return nil, err
	}
	var keyVals []any
	_ = json.Unmarshal([]byte(r.PK), &keyVals)
	if len(keyVals) != len(t.pk) {
		e.log.Warn("sync: skipped a record whose key does not fit its table", "table", r.Table, "seq", p.seq)
		return nil, nil
	}
	a := &Applied{Table: t.Name, Deleted: r.Deleted, Key: map[string]any{}, Files: r.Files, FilesOmitted: r.FilesOmitted}
	for i, c := range t.pk {
		a.Key[c] = keyVals[i]
	}
	if a.Old, err = readRow(ctx, tx, t, r.PK); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `SAVEPOINT record`); err != nil {
		return nil, err
	}
	err = e.write(ctx, tx, t, &r, a)
	if err != nil {
		if _, rbErr := tx.ExecContext(ctx, `ROLLBACK TO record`); rbErr != nil {
			return nil, rbErr
		}
		tx.ExecContext(ctx, `RELEASE record`)
		if !strings.Contains(err.Error(), "FOREIGN KEY") {
			e.log.Warn("sync: skipped a record that does not fit this database", "table", r.Table, "seq", p.seq, "err", err)
			return nil, nil
		}
		gone, perr := parentGone(ctx, tx, t, r)
		if perr != nil {
			return nil, perr
		}
		if !gone {
			raw, _ := json.Marshal(r)
			_, err := tx.ExecContext(ctx, `INSERT INTO sync_parked (tbl, pk, seq, record) VALUES (?, ?, ?, ?)
				ON CONFLICT (tbl, pk) DO UPDATE SET seq = excluded.seq, record = excluded.record`, r.Table, r.PK, p.seq, string(raw))
			return nil, err
		}
		// Its parent was deleted: the row went with it everywhere. Keep
		// the record's clock so an older copy never brings it back.
		a = nil
	} else if _, err := tx.ExecContext(ctx, `RELEASE record`); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sync_records (tbl, pk, hlc, device, deleted, pushed) VALUES (?, ?, ?, ?, ?, 1)
		ON CONFLICT (tbl, pk) DO UPDATE SET hlc = excluded.hlc, device = excluded.device, deleted = excluded.deleted, pushed = 1`,
		r.Table, r.PK, r.HLC, r.Device, r.Deleted); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sync_parked WHERE tbl = ? AND pk = ?`, r.Table, r.PK); err != nil {
		return nil, err
	}
	if a != nil && !a.Deleted {
		if a.Row, err = readRow(ctx, tx, t, r.PK); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// write deletes or upserts the record's row (synced columns only).
func (e *Engine) write(ctx context.Context, tx *sql.Tx, t *table, r *Record, a *Applied) error {
	if r.Deleted {
		// Only a row the table syncs (meta: the name, not the relay link).
		_, err := tx.ExecContext(ctx, fmt.Sprintf(`DELETE FROM %s WHERE %s AND %s`, quote(t.Name), t.matchKey(1), t.where(quote(t.Name))), r.PK)
		return err
	}
	if imp := e.transform(t.Name).Import; imp != nil {
		// On a copy: a record parked for later keeps its row as it came.
		rec := *r
		r = &rec
		fixed, err := imp(ctx, r.Row)
		if err != nil {
			return fmt.Errorf("import: %w", err)
		}
		r.Row = fixed
	}
	var row map[string]json.RawMessage
	if err := json.Unmarshal(r.Row, &row); err != nil {
		return fmt.Errorf("row: %w", err)
	}
	var cols []string
	for _, c := range t.columns {
		if _, ok := row[c]; ok {
			cols = append(cols, c)
		}
	}
	for _, c := range t.pk {
		if !slices.Contains(cols, c) {
			return fmt.Errorf("the row has no %s", c)
		}
	}
	// The row must be one this table syncs (meta: only the name).
	if t.Where != "" {
		sel := make([]string, len(cols))
		for i, c := range cols {
			sel[i] = fmt.Sprintf(`json_extract(?1, '$.%s') AS %s`, c, quote(c))
		}
		var ok int
		if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT %s) AS r WHERE %s`,
			strings.Join(sel, ", "), t.where("r")), string(r.Row)).Scan(&ok); err != nil || ok == 0 {
			return fmt.Errorf("the row is not one %s syncs", t.Name)
		}
	}
	// The key must be the record's.
	var same int
	if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT json_array(%s) IS ?2`, extractList(t.pk)), string(r.Row), r.PK).Scan(&same); err != nil || same != 1 {
		return fmt.Errorf("the row's key is not the record's")
	}
	err := upsert(ctx, tx, t, cols, string(r.Row))
	if resolve := uniqueResolver(t.Name, err); resolve != nil {
		// Two devices made rows that a unique index keeps apart (conflicts.go).
		fixed, rerr := resolve(ctx, tx, row, string(r.Row))
		if rerr != nil {
			return rerr
		}
		err = upsert(ctx, tx, t, cols, fixed)
	}
	return err
}

func extractList(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = fmt.Sprintf(`json_extract(?1, '$.%s')`, c)
	}
	return strings.Join(parts, ", ")
}

func upsert(ctx context.Context, tx *sql.Tx, t *table, cols []string, row string) error {
	quoted := make([]string, len(cols))
	var set []string
	for i, c := range cols {
		quoted[i] = quote(c)
		if !slices.Contains(t.pk, c) {
			set = append(set, fmt.Sprintf("%[1]s = excluded.%[1]s", quote(c)))
		}
	}
	pk := make([]string, len(t.pk))
	for i, c := range t.pk {
		pk[i] = quote(c)
	}
	conflict := "DO NOTHING"
	if len(set) > 0 {
		conflict = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) %s`,
		quote(t.Name), strings.Join(quoted, ", "), extractList(cols), strings.Join(pk, ", "), conflict), row)
	return err
}

// parentGone reports whether the record's parent row is a tombstone here.
func parentGone(ctx context.Context, tx *sql.Tx, t *table, r Record) (bool, error) {
	if t.parent == nil || r.Deleted {
		return false, nil
	}
	var n int
	err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM sync_records WHERE tbl = ? AND deleted = 1
		AND pk = json_array(json_extract(?, '$.%s'))`, t.ParentColumn), t.parent.Name, string(r.Row)).Scan(&n)
	return n > 0, err
}

// readRow returns the synced columns of the row whose key is pk, nil when
// there is none.
func readRow(ctx context.Context, q querier, t *table, pk string) (map[string]any, error) {
	var raw string
	err := q.QueryRowContext(ctx, fmt.Sprintf(`SELECT %s FROM %s WHERE %s`, t.rowJSON(), quote(t.Name), t.matchKey(1)), pk).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal([]byte(raw), &m)
}

// after runs what follows committed remote changes: template folders,
// the hooks, the UI's events.
func (e *Engine) after(ctx context.Context, done []Applied) {
	for _, a := range done {
		t := e.table(a.Table)
		if t == nil {
			continue
		}
		if t.Folder != nil {
			if err := e.writeFolder(t, a); err != nil {
				e.log.Warn("sync: write a record's folder", "table", a.Table, "err", err)
			}
		}
		e.mu.Lock()
		hooks := slices.Clone(e.hooks[a.Table])
		e.mu.Unlock()
		for _, h := range hooks {
			h(ctx, a)
		}
		if t.Event != nil {
			e.publish(t.Event(a))
		}
	}
}

// open opens a page's changes, skipping (and logging, without content)
// those that do not open.
func (e *Engine) open(k *keys, page protocol.ChangePage) []pulled {
	out := make([]pulled, 0, len(page.Changes))
	for _, c := range page.Changes {
		r, err := k.open(c.Key, c.Body)
		if err != nil {
			e.log.Warn("sync: refused a change", "seq", c.Seq, "from", c.Device, "err", err)
			continue
		}
		out = append(out, pulled{seq: c.Seq, rec: r})
	}
	return out
}
