package schedule

import (
	"context"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// ClaimOnly records the fire of schedule id at t as claimed, without a run:
// what a process that queued runs apart from their claim left behind when
// it stopped in between. It returns the fire id.
func (s *Service) ClaimOnly(ctx context.Context, id string, t time.Time) (string, error) {
	fid := store.NewID("fire")
	_, err := s.db.ExecContext(ctx, `INSERT INTO schedule_fires (id, schedule_id, scheduled_for, fired_at, outcome)
		VALUES (?, ?, ?, ?, 'fired')`, fid, id, store.FormatTime(t), store.FormatTime(s.now()))
	return fid, err
}
