// Package storetest opens throwaway workspace databases for tests.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Open returns a migrated workspace database in t.TempDir, closed at cleanup.
func Open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatalf("open test store: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
