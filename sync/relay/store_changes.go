package relay

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// latestByKey drops every change whose key comes again later in changes:
// the relay keeps only a key's latest change, so an earlier one would take
// a seq for nothing.
func latestByKey(changes []protocol.Change) []protocol.Change {
	last := make(map[string]int, len(changes))
	for i, c := range changes {
		last[c.Key] = i
	}
	if len(last) == len(changes) {
		return changes
	}
	out := make([]protocol.Change, 0, len(last))
	for i, c := range changes {
		if last[c.Key] == i {
			out = append(out, c)
		}
	}
	return out
}

func (s *sqlStore) PushChanges(ctx context.Context, workspaceID string, changes []protocol.Change, now time.Time) (int64, error) {
	changes = latestByKey(changes)
	if len(changes) == 0 {
		return s.LastSeq(ctx, workspaceID)
	}
	var last int64
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Raising the counter locks the workspace's row until the commit:
		// a concurrent push (another relay process) waits, so seqs commit
		// in their order and a puller never skips one still in flight.
		err := tx.QueryRowContext(ctx, s.q(`UPDATE workspaces SET change_seq = change_seq + ? WHERE id = ? RETURNING change_seq`),
			len(changes), workspaceID).Scan(&last)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("push changes: %w", err)
		}
		up, err := tx.PrepareContext(ctx, s.q(`INSERT INTO changes (workspace_id, key, seq, device, body, pushed_at)
			VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, key) DO UPDATE SET seq = excluded.seq, device = excluded.device,
				body = excluded.body, pushed_at = excluded.pushed_at`))
		if err != nil {
			return fmt.Errorf("push changes: %w", err)
		}
		defer up.Close()
		seq := last - int64(len(changes))
		for _, c := range changes {
			seq++
			if _, err := up.ExecContext(ctx, workspaceID, c.Key, seq, c.Device, c.Body, ms(now)); err != nil {
				return fmt.Errorf("push change %.8s…: %w", c.Key, err)
			}
		}
		if s.notify != "" {
			if _, err := tx.ExecContext(ctx, s.notify, changesChannel, changesPayload(workspaceID, last, changes)); err != nil {
				return fmt.Errorf("push changes: notify: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return last, nil
}

func (s *sqlStore) LastSeq(ctx context.Context, workspaceID string) (int64, error) {
	var last int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT change_seq FROM workspaces WHERE id = ?`), workspaceID).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("read the newest seq: %w", err)
	}
	return last, nil
}

func (s *sqlStore) Changes(ctx context.Context, workspaceID string, after int64, limit int) (protocol.ChangePage, error) {
	// The newest seq first, and only changes up to it: every seq up to it
	// is committed (see PushChanges), so a page without More leaves
	// nothing below Last unread.
	last, err := s.LastSeq(ctx, workspaceID)
	if err != nil {
		return protocol.ChangePage{}, err
	}
	page := protocol.ChangePage{Changes: []protocol.Change{}, Last: last}
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT seq, key, device, body FROM changes
		WHERE workspace_id = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`), workspaceID, after, last, limit+1)
	if err != nil {
		return protocol.ChangePage{}, fmt.Errorf("read changes: %w", err)
	}
	defer rows.Close()
	size := 0
	for rows.Next() {
		if len(page.Changes) == limit {
			page.More = true
			break
		}
		var c protocol.Change
		if err := rows.Scan(&c.Seq, &c.Key, &c.Device, &c.Body); err != nil {
			return protocol.ChangePage{}, fmt.Errorf("read changes: %w", err)
		}
		if size += len(c.Body); size > protocol.MaxPullBytes && len(page.Changes) > 0 {
			page.More = true
			break
		}
		page.Changes = append(page.Changes, c)
	}
	if err := rows.Err(); err != nil {
		return protocol.ChangePage{}, fmt.Errorf("read changes: %w", err)
	}
	return page, nil
}

// changesPayload is the NOTIFY payload of a push: "<workspace> <last>
// <device>,<device>…" (ids have no spaces or commas; PostgreSQL bounds a
// payload to 8000 bytes, far above a push's few devices).
func changesPayload(workspaceID string, last int64, changes []protocol.Change) string {
	devices := pushers(changes)
	return workspaceID + " " + strconv.FormatInt(last, 10) + " " + strings.Join(devices, ",")
}

func parseChangesPayload(p string) (Notice, bool) {
	parts := strings.SplitN(p, " ", 3)
	if len(parts) != 3 {
		return Notice{}, false
	}
	last, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Notice{}, false
	}
	n := Notice{WorkspaceID: parts[0], Changes: true, Last: last}
	if parts[2] != "" {
		n.From = strings.Split(parts[2], ",")
	}
	return n, true
}

// pushers returns the distinct devices of changes.
func pushers(changes []protocol.Change) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range changes {
		if !seen[c.Device] {
			seen[c.Device] = true
			out = append(out, c.Device)
		}
	}
	return out
}
