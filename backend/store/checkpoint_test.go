package store_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// TestCheckpointerStartsTheWALOver: with SQLite's automatic checkpoint off,
// the checkpointer copies a WAL grown past a thousand frames into the
// database file, so that a later commit starts the WAL over from its first
// frame instead of growing it.
func TestCheckpointerStartsTheWALOver(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (b BLOB NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// 3000 frames: 150 commits of 20 pages each.
	for range 150 {
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (randomblob(80000))`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	// The commits wake the checkpointer; wait until it has copied all but
	// less than a thousand frames.
	frames, copied := db.WALFrames()
	for deadline := time.Now().Add(30 * time.Second); frames-copied >= 1000 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		frames, copied = db.WALFrames()
	}
	if frames-copied >= 1000 {
		t.Fatalf("WAL not copied into the database: %d of %d frames copied", copied, frames)
	}
	if err := db.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO t VALUES (x'00')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if frames, _ = db.WALFrames(); frames >= 3000 {
		t.Errorf("WAL after 3000 frames of commits: %d frames, want it started over since", frames)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil || n != 151 {
		t.Errorf("rows = %d, %v; want 151", n, err)
	}
}
