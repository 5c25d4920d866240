package replica

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// triggerPrefix names the capture triggers, so they can all be dropped.
const triggerPrefix = "sync_capture_"

// notApplying is the capture triggers' guard: rows the engine writes while
// applying pulled records are not captured again.
const notApplying = `(SELECT active FROM sync_applying WHERE id = 1) = 0`

// nowMS is SQLite's wall clock in Unix milliseconds: when the change was
// made, which its clock reading keeps even if it is stamped later.
const nowMS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`

// installTriggers (re)creates the capture triggers of every table.
func installTriggers(ctx context.Context, tx *sql.Tx, tables []*table) error {
	if err := dropTriggers(ctx, tx); err != nil {
		return err
	}
	for _, t := range tables {
		for _, q := range triggerSQL(t) {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("install the capture of %s: %w", t.Name, err)
			}
		}
	}
	return nil
}

func triggerSQL(t *table) []string {
	name := triggerPrefix + t.Name
	insert := func(alias string) string {
		return fmt.Sprintf(`INSERT INTO sync_outbox (tbl, pk, at) VALUES ('%s', %s, %s);`, t.Name, t.keyOf(alias), nowMS)
	}
	changed := make([]string, len(t.watched))
	for i, c := range t.watched {
		changed[i] = fmt.Sprintf("OLD.%[1]s IS NOT NEW.%[1]s", quote(c))
	}
	return []string{
		fmt.Sprintf(`CREATE TRIGGER %s_insert AFTER INSERT ON %s WHEN %s AND %s BEGIN %s END`,
			name, quote(t.Name), notApplying, t.where("NEW"), insert("NEW")),
		// Only a real change of a watched column is captured: a statement
		// that sets a column to its value (the schedule loop does) is not.
		fmt.Sprintf(`CREATE TRIGGER %s_update AFTER UPDATE ON %s WHEN %s AND (%s OR %s) AND (%s) BEGIN %s
			INSERT INTO sync_outbox (tbl, pk, at) SELECT '%s', %s, %s WHERE %s IS NOT %s; END`,
			name, quote(t.Name), notApplying, t.where("NEW"), t.where("OLD"), strings.Join(changed, " OR "), insert("NEW"),
			t.Name, t.keyOf("OLD"), nowMS, t.keyOf("OLD"), t.keyOf("NEW")),
		fmt.Sprintf(`CREATE TRIGGER %s_delete AFTER DELETE ON %s WHEN %s AND %s BEGIN %s END`,
			name, quote(t.Name), notApplying, t.where("OLD"), insert("OLD")),
	}
}

// dropTriggers removes every capture trigger.
func dropTriggers(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?`,
		len(triggerPrefix), triggerPrefix)
	if err != nil {
		return err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range names {
		if _, err := tx.ExecContext(ctx, `DROP TRIGGER IF EXISTS `+quote(n)); err != nil {
			return fmt.Errorf("remove capture trigger %s: %w", n, err)
		}
	}
	return nil
}

// queueAll captures every row of t, as of now.
func queueAll(ctx context.Context, tx *sql.Tx, t *table, now time.Time) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO sync_outbox (tbl, pk, at) SELECT '%s', %s, ? FROM %s AS r WHERE %s ORDER BY rowid`,
		t.Name, t.keyOf("r"), quote(t.Name), t.where("r")), now.UnixMilli())
	if err != nil && strings.Contains(err.Error(), "no such column: rowid") {
		_, err = tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO sync_outbox (tbl, pk, at) SELECT '%s', %s, ? FROM %s AS r WHERE %s`,
			t.Name, t.keyOf("r"), quote(t.Name), t.where("r")), now.UnixMilli())
	}
	if err != nil {
		return fmt.Errorf("queue the rows of %s: %w", t.Name, err)
	}
	return nil
}

// Stamp gives every captured change its clock reading (from the time it
// was made) in sync_records, ready to push. Serve calls it on each local
// change and on a short ticker, online or not; apply calls it first.
func (e *Engine) Stamp(ctx context.Context) (int, error) {
	if _, err := e.schema(ctx); err != nil {
		return 0, err
	}
	if err := e.loadClock(ctx); err != nil {
		return 0, err
	}
	var n int
	err := e.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		n, err = e.stampTx(ctx, tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("stamp local changes: %w", err)
	}
	return n, nil
}

// stampTx stamps inside tx (which holds the write lock).
func (e *Engine) stampTx(ctx context.Context, tx *sql.Tx) (int, error) {
	type pending struct {
		tbl, pk string
		at      int64
	}
	rows, err := tx.QueryContext(ctx, `SELECT tbl, pk, max(at) FROM sync_outbox GROUP BY tbl, pk ORDER BY min(n)`)
	if err != nil {
		return 0, err
	}
	var list []pending
	for rows.Next() {
		var p pending
		if err := rows.Scan(&p.tbl, &p.pk, &p.at); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(list) == 0 {
		return 0, nil
	}
	for _, p := range list {
		t := e.table(p.tbl)
		if t == nil {
			continue // a table dropped from the list since it was captured
		}
		var live int
		if err := tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM %s AS r WHERE %s AND %s`,
			quote(t.Name), t.matchKey(1), t.where("r")), p.pk).Scan(&live); err != nil {
			return 0, err
		}
		h := e.clock.tick(p.at)
		if _, err := tx.ExecContext(ctx, `INSERT INTO sync_records (tbl, pk, hlc, device, deleted, pushed) VALUES (?, ?, ?, ?, ?, 0)
			ON CONFLICT (tbl, pk) DO UPDATE SET hlc = excluded.hlc, device = excluded.device, deleted = excluded.deleted, pushed = 0`,
			p.tbl, p.pk, h.String(), e.cfg.Device, live == 0); err != nil {
			return 0, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sync_outbox`); err != nil {
		return 0, err
	}
	return len(list), setState(ctx, tx, "hlc", e.clock.now().String())
}
