package store

import (
	"context"
	"encoding/binary"
	"os"
	"time"
)

// checkpointAt is how many frames the WAL holds beyond what is copied into
// the database file before they are copied (SQLite's own automatic
// checkpoint is at 1000).
const checkpointAt = 1000

// checkpointEvery is how often the WAL is looked at when no commit of Tx
// wakes the checkpointer (writes made outside Tx).
const checkpointEvery = time.Second

// serveCheckpoints copies the WAL into the database file, in place of
// SQLite's automatic checkpoint (wal_autocheckpoint is 0, see dsn). That one
// runs inside the commit that crosses 1000 frames, with the writer lock
// held: copying ~1000 pages and two fsyncs made that commit, and every
// webhook call waiting on it, 10–60 ms late. Here the copying happens beside
// the writers, and they are held back only for the last few frames, so
// that the next one starts the WAL over instead of growing it. It returns
// when ctx ends (Close).
func (db *DB) serveCheckpoints(ctx context.Context) {
	defer close(db.checkpointed)
	tick := time.NewTicker(checkpointEvery)
	defer tick.Stop()
	var shm *os.File // kept open: it is read after every commit
	defer func() { shm.Close() }()
	for {
		ticked := false
		select {
		case <-ctx.Done():
			return
		case <-db.committed:
		case <-tick.C:
			// The file is made anew when the last connection closes.
			shm.Close()
			shm, ticked = nil, true
		}
		if shm == nil {
			shm, _ = os.Open(db.path + "-shm")
		}
		frames, copied, ok := walFrames(shm)
		if ok && frames-copied >= checkpointAt || !ok && ticked {
			db.checkpoint(ctx)
		}
	}
}

// checkpoint copies the WAL into the database file: twice beside the
// writers (the second pass takes what was committed during the first, a
// few commits), then the rest with this process's writers held back. A
// reader still using the WAL may keep it from starting over; the next
// checkpoint tries again.
func (db *DB) checkpoint(ctx context.Context) {
	conn, err := db.Conn(ctx) // taken before the writer lock: Tx takes them in the other order
	if err != nil {
		return
	}
	defer conn.Close()
	for range 2 {
		if _, err := conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`); err != nil {
			return
		}
	}
	db.writer.Lock()
	defer db.writer.Unlock()
	conn.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
}

// walFrames reads from the wal-index, shm (the -shm file), how many frames
// the WAL holds and how many of them are already in the database file
// (https://sqlite.org/walformat.html: mxFrame at byte 16 of its header,
// nBackfill at byte 96, in the machine's byte order). Read without
// SQLite's locks, it may be a moment old; ok is false when there is no
// wal-index to read.
func walFrames(shm *os.File) (frames, copied uint32, ok bool) {
	if shm == nil {
		return 0, 0, false
	}
	var b [100]byte
	if _, err := shm.ReadAt(b[:], 0); err != nil {
		return 0, 0, false
	}
	return binary.NativeEndian.Uint32(b[16:]), binary.NativeEndian.Uint32(b[96:]), true
}
