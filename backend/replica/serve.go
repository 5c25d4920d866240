package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// maxBackoff is the longest wait between failed rounds.
const maxBackoff = 5 * time.Minute

// Serve syncs until ctx ends: it stamps local changes as they happen
// (online or not), pushes them, and pulls when told (Notify), after each
// push, and every Config.PullEvery; a failed round is retried with
// exponential backoff and jitter, and Status says why. key is the
// workspace's 32-byte sync key. It returns nil when ctx ends.
func (e *Engine) Serve(ctx context.Context, key []byte, t Transport) error {
	k, err := deriveKeys(key, e.cfg.Workspace)
	if err != nil {
		return err
	}
	var changes <-chan event.Change
	if e.cfg.Bus != nil {
		ch, stop := e.cfg.Bus.Subscribe()
		defer stop()
		changes = ch
	}
	pullTick := time.NewTicker(e.cfg.PullEvery)
	defer pullTick.Stop()
	stampTick := time.NewTicker(e.cfg.StampEvery)
	defer stampTick.Stop()
	retry := time.NewTimer(0) // the first round at once
	defer retry.Stop()
	var backoff time.Duration
	round := func(pull bool) {
		err := e.round(ctx, k, t, pull)
		if ctx.Err() != nil {
			return
		}
		e.setResult(err)
		if err == nil {
			backoff = 0
			return
		}
		backoff = min(max(time.Second, 2*backoff), maxBackoff)
		wait := backoff/2 + rand.N(backoff/2+1)
		e.log.Warn("sync: round failed; retrying", "in", wait.Round(time.Millisecond), "err", err)
		retry.Reset(wait)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-retry.C:
			round(true)
		case <-e.pull:
			if backoff == 0 {
				round(true)
			}
		case <-pullTick.C:
			if backoff == 0 {
				round(true)
			}
		case c, ok := <-changes:
			if !ok {
				changes = nil
				continue
			}
			if c.Workspace != e.cfg.Workspace || c.Kind == event.KindDelta || c.Kind == "run.step" {
				continue
			}
			e.local(ctx, k, t, &backoff, round)
		case <-e.stamp:
			e.local(ctx, k, t, &backoff, round)
		case <-stampTick.C:
			e.local(ctx, k, t, &backoff, round)
		}
	}
}

// local stamps what was captured and, unless the relay is failing (then
// the backoff timer retries), pushes it.
func (e *Engine) local(ctx context.Context, k *keys, t Transport, backoff *time.Duration, round func(bool)) {
	n, err := e.Stamp(ctx)
	if err != nil {
		e.log.Warn("sync: stamp local changes", "err", err)
		return
	}
	if n > 0 && *backoff == 0 {
		round(false)
	}
}

// Sync runs one round now: stamp, push everything pending, pull until
// caught up. Tests and the app's "Sync now" use it; Serve does the same in
// a loop.
func (e *Engine) Sync(ctx context.Context, key []byte, t Transport) error {
	k, err := deriveKeys(key, e.cfg.Workspace)
	if err != nil {
		return err
	}
	err = e.round(ctx, k, t, true)
	e.setResult(err)
	return err
}

func (e *Engine) round(ctx context.Context, k *keys, t Transport, pull bool) error {
	if !e.Enabled(ctx) {
		return errors.New("sync is not enabled for this workspace")
	}
	if _, err := e.Stamp(ctx); err != nil {
		return err
	}
	pushed, err := e.push(ctx, k, t)
	if err != nil {
		return fmt.Errorf("push: %w", err)
	}
	if pull || pushed > 0 {
		if err := e.pullAll(ctx, k, t); err != nil {
			return fmt.Errorf("pull: %w", err)
		}
		// Records that won over what was pulled go back to the relay.
		if _, err := e.push(ctx, k, t); err != nil {
			return fmt.Errorf("push: %w", err)
		}
	}
	return nil
}

// pushBatch is how many records one push carries (the relay's limit).
const pushBatch = protocol.MaxPush

type outgoing struct {
	tbl, pk, hlc string
}

// push seals and pushes every stamped record not pushed yet, oldest first.
func (e *Engine) push(ctx context.Context, k *keys, t Transport) (int, error) {
	total := 0
	for {
		changes, sent, err := e.nextBatch(ctx, k)
		if err != nil {
			return total, err
		}
		if len(sent) == 0 {
			return total, nil
		}
		if len(changes) > 0 {
			if _, err := t.Push(ctx, changes); err != nil {
				return total, err
			}
		}
		err = e.db.Tx(ctx, func(tx *sql.Tx) error {
			for _, o := range sent {
				// A record stamped again meanwhile stays to push.
				if _, err := tx.ExecContext(ctx, `UPDATE sync_records SET pushed = 1 WHERE tbl = ? AND pk = ? AND hlc = ?`, o.tbl, o.pk, o.hlc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, fmt.Errorf("mark pushed: %w", err)
		}
		total += len(changes)
	}
}

// nextBatch seals the oldest unpushed records, up to the relay's limits.
// sent lists what the batch settles (a record too large to ever push is
// settled without a change, and logged).
func (e *Engine) nextBatch(ctx context.Context, k *keys) (changes []protocol.Change, sent []outgoing, err error) {
	rows, err := e.db.QueryContext(ctx, `SELECT tbl, pk, hlc, device, deleted FROM sync_records WHERE pushed = 0 ORDER BY hlc LIMIT ?`, pushBatch)
	if err != nil {
		return nil, nil, err
	}
	var recs []Record
	for rows.Next() {
		var r Record
		if err := rows.Scan(&r.Table, &r.PK, &r.HLC, &r.Device, &r.Deleted); err != nil {
			rows.Close()
			return nil, nil, err
		}
		recs = append(recs, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	bytes := 0
	for _, r := range recs {
		c, err := e.sealOne(ctx, k, r)
		if err != nil {
			return nil, nil, err
		}
		if bytes+len(c.Body) > protocol.MaxPushBytes && len(changes) > 0 {
			break
		}
		sent = append(sent, outgoing{r.Table, r.PK, r.HLC})
		if c.Body == nil {
			continue
		}
		bytes += len(c.Body)
		changes = append(changes, c)
	}
	return changes, sent, nil
}

// sealOne reads the record's row as it is now (a row gone since it was
// stamped travels as a tombstone; its own deletion is stamped later) and
// seals it. A record too large for the relay comes back without a body.
func (e *Engine) sealOne(ctx context.Context, k *keys, r Record) (protocol.Change, error) {
	t := e.table(r.Table)
	if t == nil {
		return protocol.Change{}, nil
	}
	if !r.Deleted {
		var raw string
		err := e.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT %s FROM %s AS r WHERE %s AND %s`, t.rowJSON(), quote(t.Name), t.matchKey(1), t.where("r")), r.PK).Scan(&raw)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			r.Deleted = true
		case err != nil:
			return protocol.Change{}, fmt.Errorf("read %s row: %w", t.Name, err)
		default:
			r.Row = []byte(raw)
		}
	}
	if x := e.transform(t.Name).Export; x != nil {
		ok, err := x(ctx, &r)
		if err != nil {
			return protocol.Change{}, fmt.Errorf("export %s record: %w", t.Name, err)
		}
		if !ok {
			return protocol.Change{}, nil // held back on this device
		}
	}
	if t.Folder != nil && !r.Deleted {
		if err := e.readFolder(t, &r); err != nil {
			e.log.Warn("sync: read a record's folder; its row syncs without it", "table", t.Name, "err", err)
			r.Files, r.FilesOmitted = nil, true
		}
	}
	name, body, err := k.seal(r)
	if err != nil {
		return protocol.Change{}, err
	}
	if len(body) > protocol.MaxChange && r.Files != nil {
		r.Files, r.FilesOmitted = nil, true
		if name, body, err = k.seal(r); err != nil {
			return protocol.Change{}, err
		}
	}
	if len(body) > protocol.MaxChange {
		e.log.Warn("sync: a record is too large to sync; it stays on this device", "table", t.Name, "bytes", len(body))
		return protocol.Change{}, nil
	}
	return protocol.Change{Key: name, Device: r.Device, Body: body}, nil
}

// pullLimit is how many changes one pull asks for.
const pullLimit = protocol.DefaultPull

// pullAll pulls and applies pages until the device has the whole log.
func (e *Engine) pullAll(ctx context.Context, k *keys, t Transport) error {
	for {
		cur, err := e.cursor(ctx)
		if err != nil {
			return err
		}
		page, err := t.Pull(ctx, cur, pullLimit)
		if err != nil {
			return err
		}
		next := cur
		if n := len(page.Changes); n > 0 {
			next = max(next, page.Changes[n-1].Seq)
		}
		if !page.More {
			next = max(next, page.Last)
		} else if next == cur {
			// A page that says More must move the cursor, or this loop
			// would pull it again forever.
			return fmt.Errorf("the relay's page after seq %d says more but does not move past it", cur)
		}
		if next != cur || len(page.Changes) > 0 {
			if err := e.apply(ctx, e.open(k, page), next); err != nil {
				return err
			}
		}
		if !page.More || len(page.Changes) == 0 {
			return nil
		}
	}
}
