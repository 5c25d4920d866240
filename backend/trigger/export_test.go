package trigger

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// ClaimOnly records a call of trigger id as accepted, with key, without
// queuing its run: what a process that queued runs apart from their
// delivery left behind when it stopped in between.
func (s *Service) ClaimOnly(ctx context.Context, id, key string) (string, error) {
	d := store.NewID("dlv")
	_, err := s.db.ExecContext(ctx, `INSERT INTO trigger_deliveries (id, trigger_id, received_at, status, outcome, idempotency_key, method)
		VALUES (?, ?, ?, 202, 'accepted', ?, 'POST')`, d, id, store.FormatTime(s.now()), key)
	return d, err
}

// Settle runs one pass of Serve's settling.
func (s *Service) Settle(ctx context.Context) error { return s.settle(ctx, s.now()) }
