package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// keepUpgradedHistory keeps, once, the whole history of a workspace made
// before retention existed. Migration 0020 gives every workspace 90 days
// of runs and 30 before long tool outputs are trimmed; a new workspace
// keeps that default, but one upgraded with runs older than the migration
// would lose them on the first prune without the person ever having seen
// the setting. Such a workspace starts at keep forever (keep_days and
// trim_days 0), shown as such in Settings → Storage, where the person
// can choose 90 days. The settings' updated_at marks the decision made, so
// a later choice is never undone.
func keepUpgradedHistory(ctx context.Context, db *store.DB) error {
	_, err := db.ExecContext(ctx, `UPDATE retention SET keep_days = 0, trim_days = 0, updated_at = ?
		WHERE id = 1 AND updated_at = '' AND EXISTS (SELECT 1 FROM runs WHERE created_at <
			(SELECT applied_at FROM schema_migrations WHERE version = 20))`, store.FormatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("keep the history of an upgraded workspace: %w", err)
	}
	return nil
}
