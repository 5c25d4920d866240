package store

import (
	"context"
	"path/filepath"
	"testing"
)

func TestNewDatabaseVacuumsIncrementally(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(ctx, path, WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	var mode int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	var jm string
	db.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&jm)
	db.Close()
	if mode != 2 || jm != "wal" {
		t.Fatalf("auto_vacuum = %d journal=%s, want 2 (incremental) wal", mode, jm)
	}
	db, err = Open(ctx, path, WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode)
	if mode != 2 {
		t.Fatalf("reopened: auto_vacuum = %d", mode)
	}
}
