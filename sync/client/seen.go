package client

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/internal/sqldb"
)

// DBFile is the client's SQLite file in Config.Dir.
const DBFile = "relay-client.db"

//go:embed sql/*.sql
var migrations embed.FS

// seenSet is the durable set of delivery ids handed to Deliver.
type seenSet struct {
	db *sql.DB
}

func openSeen(ctx context.Context, dir string) (*seenSet, error) {
	sub, _ := fs.Sub(migrations, "sql")
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(dir, DBFile), sub)
	if err != nil {
		return nil, err
	}
	return &seenSet{db: db}, nil
}

func (s *seenSet) Close() error { return s.db.Close() }

// has says whether id was delivered.
func (s *seenSet) has(ctx context.Context, id string) (bool, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM seen WHERE id = ?`, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("read seen deliveries: %w", err)
	}
	return n > 0, nil
}

type seenEntry struct{ id, runID string }

// add records deliveries in one commit.
func (s *seenSet) add(ctx context.Context, list []seenEntry, now time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record seen deliveries: %w", err)
	}
	defer tx.Rollback()
	for _, e := range list {
		if _, err := tx.ExecContext(ctx, `INSERT INTO seen (id, run_id, seen_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			e.id, e.runID, now.UnixMilli()); err != nil {
			return fmt.Errorf("record seen deliveries: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("record seen deliveries: %w", err)
	}
	return nil
}

// prune forgets ids seen before before: the relay sends a delivery again
// only within its retention.
func (s *seenSet) prune(ctx context.Context, before time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM seen WHERE seen_at < ?`, before.UnixMilli()); err != nil {
		return fmt.Errorf("prune seen deliveries: %w", err)
	}
	return nil
}
