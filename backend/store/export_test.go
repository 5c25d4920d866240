package store

import (
	"encoding/binary"
	"os"
)

// WALFrames reads from the wal-index, shm (the -shm file, opened by the
// test and closed only after the database: closing a descriptor drops the
// process's locks on the file), how many frames the WAL holds and how many
// of them are in the database file (https://sqlite.org/walformat.html:
// mxFrame at byte 16 of its header, nBackfill at byte 96).
func WALFrames(shm *os.File) (frames, copied uint32) {
	var b [100]byte
	if _, err := shm.ReadAt(b[:], 0); err != nil {
		return 0, 0
	}
	return binary.NativeEndian.Uint32(b[16:]), binary.NativeEndian.Uint32(b[96:])
}
