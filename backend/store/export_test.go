package store

import "os"

// WALFrames is what the checkpointer reads of the WAL: the frames it holds
// and how many of them are in the database file.
func (db *DB) WALFrames() (frames, copied uint32) {
	f, err := os.Open(db.path + "-shm")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	frames, copied, _ = walFrames(f)
	return frames, copied
}
