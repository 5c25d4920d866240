package store

import (
	"context"
	"time"
)

// checkpointAt is how many frames the WAL may hold before the checkpointer
// holds this process's writers back for its last pass, so that the next
// commit starts the WAL over (SQLite's own automatic checkpoint is at 1000).
const checkpointAt = 1000

// checkpointGap is the least time between two passes woken by commits: a
// pass that copies frames ends with an fsync of the database file.
const checkpointGap = 100 * time.Millisecond

// checkpointEvery is how often a pass runs when no commit of Tx wakes the
// checkpointer (writes made outside Tx).
const checkpointEvery = time.Second

// serveCheckpoints copies the WAL into the database file, in place of
// SQLite's automatic checkpoint (wal_autocheckpoint is 0, see dsn). That one
// runs inside the commit that crosses 1000 frames, with the writer lock
// held: copying ~1000 pages and two fsyncs made that commit, and every
// webhook call waiting on it, 10–60 ms late. Here the copying happens beside
// the writers. It returns when ctx ends (Close).
//
// It learns the WAL's length from SQLite (what wal_checkpoint answers),
// never by opening the -shm file: closing any descriptor of a file drops
// every POSIX lock this process holds on it, SQLite's included, and another
// process then takes the wal-index for unused and rebuilds it under this
// one's feet (SQLITE_IOERR_IN_PAGE).
func (db *DB) serveCheckpoints(ctx context.Context) {
	defer close(db.checkpointed)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	gap := time.NewTimer(0)
	defer gap.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-db.committed:
		case <-tick.C:
		}
		db.checkpoint(ctx)
		// The commits meanwhile wait for the next pass.
		gap.Reset(checkpointGap)
		select {
		case <-ctx.Done():
			return
		case <-gap.C:
		}
	}
}

// checkpoint copies the WAL into the database file beside the writers. When
// the WAL has grown long (the writers outran the copying), it copies what
// came meanwhile, then the last few frames with this process's writers held
// back, so that the next commit starts the WAL over instead of growing it.
// A reader still using the WAL may keep it from starting over; a later pass
// tries again.
func (db *DB) checkpoint(ctx context.Context) {
	conn, err := db.Conn(ctx) // taken before the writer lock: Tx takes them in the other order
	if err != nil {
		return
	}
	defer conn.Close()
	var busy, frames, copied int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied); err != nil || frames < checkpointAt {
		return
	}
	if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
		return
	}
	db.writer.Lock()
	defer db.writer.Unlock()
	conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
}
