package schedule

import (
	"context"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Reschedule plans the next fire time of schedule id ("" for every
// schedule) from its stored definition, for a definition written by
// another device (package replica syncs definitions, not fire times) or a
// device that has just become the one that fires them. A pending fire time
// the definition still gives is kept; one in the past is not caught up
// (the other device fired it), the next is planned from now.
func (s *Service) Reschedule(ctx context.Context, id string) error {
	list, err := s.List(ctx, "")
	if err != nil {
		return err
	}
	now := s.now()
	changed := false
	for _, sch := range list {
		if id != "" && sch.ID != id {
			continue
		}
		var next *time.Time
		if sch.Enabled {
			if _, tm, err := sch.Spec.parse(); err == nil {
				if sch.NextFireAt != nil && !sch.NextFireAt.Before(now) && tm.next(sch.NextFireAt.Add(-time.Second)).Equal(*sch.NextFireAt) {
					next = sch.NextFireAt
				} else if n := tm.next(now); !n.IsZero() {
					next = &n
				}
			}
		}
		if (next == nil) == (sch.NextFireAt == nil) && (next == nil || next.Equal(*sch.NextFireAt)) {
			continue
		}
		var v any
		if next != nil {
			v = store.FormatTime(*next)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE schedules SET next_fire_at = ? WHERE id = ?`, v, sch.ID); err != nil {
			return fmt.Errorf("reschedule %q: %w", sch.ID, err)
		}
		changed = true
		s.publish("schedule.updated", sch)
	}
	if changed {
		s.Wake()
	}
	return nil
}
