package schedule_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// realClock runs at real speed from a chosen instant, so lateness in its
// time is real lateness.
type realClock struct{ offset atomic.Int64 }

func (c *realClock) Now() time.Time  { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *realClock) Set(t time.Time) { c.offset.Store(int64(time.Until(t))) }

// latenessRuns queues real runs and notes how late each was durably queued
// (its transaction committed) after the instant it was due.
type latenessRuns struct {
	scheduleRuns
	clock *realClock
	mu    sync.Mutex
	due   time.Time
	late  []time.Duration
}

func (r *latenessRuns) Started(agentID, sessionID, runID string) {
	r.scheduleRuns.Started(agentID, sessionID, runID)
	r.mu.Lock()
	r.late = append(r.late, r.clock.Now().Sub(r.due))
	r.mu.Unlock()
}

func (r *latenessRuns) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.late)
}

// BenchmarkServe10k measures how late the Serve loop queues runs (with the
// real run service) among 10,000 schedules: "spread" has one schedule per
// minute of the hour in turn (≈167 due at each minute, one minute per op);
// "burst" has all 10,000 due at the same instant (one day per op).
func BenchmarkServe10k(b *testing.B) {
	const total = 10000
	for _, mode := range []string{"spread", "burst"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			db, err := store.Open(ctx, filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			bx, _ := box.NewService(db, "ws", nil).Create(ctx, "Main")
			agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil)
			ag, err := agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: bx.ID})
			if err != nil {
				b.Fatal(err)
			}
			clock := &realClock{}
			t0 := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
			clock.Set(t0)
			rs := run.NewService(run.Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: box.NewService(db, "ws", nil)}, run.Config{Now: clock.Now})
			runs := &latenessRuns{scheduleRuns: scheduleRuns{rs}, clock: clock}
			insertSchedules(b, db, ag.ID, total, t0, mode)
			svc := schedule.NewService(schedule.Deps{DB: db, Workspace: "ws", Runs: runs}, schedule.Config{Now: clock.Now})
			sctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { svc.Serve(sctx); close(done) }()
			defer func() { stop(); <-done }()

			b.ResetTimer()
			want := 0
			for i := 0; i < b.N; i++ {
				due := t0.Add(time.Duration(i+1) * time.Minute)
				n := total / 60
				if m := (i + 1) % 60; m < total%60 {
					n++
				}
				if mode == "burst" {
					due, n = t0.Add(time.Minute+time.Duration(i)*24*time.Hour), total
				}
				runs.mu.Lock()
				runs.due = due
				runs.mu.Unlock()
				clock.Set(due.Add(-30 * time.Millisecond))
				svc.Wake()
				want += n
				for runs.count() < want {
					time.Sleep(time.Millisecond)
				}
			}
			b.StopTimer()
			late := runs.late
			slices.Sort(late)
			b.ReportMetric(float64(len(late))/float64(b.N), "fires/op")
			b.ReportMetric(ms(late[len(late)/2]), "p50-lateness-ms")
			b.ReportMetric(ms(late[len(late)*99/100]), "p99-lateness-ms")
			b.ReportMetric(ms(late[len(late)-1]), "max-lateness-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// insertSchedules writes n schedules, each with its own session as Create
// makes them, in one transaction (Create would take two each). spread:
// schedule i fires at minute i%60 of every hour; burst: all at 08:01 every
// day.
func insertSchedules(b *testing.B, db *store.DB, agentID string, n int, t0 time.Time, mode string) {
	b.Helper()
	err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		ts := store.FormatTime(t0)
		for i := 0; i < n; i++ {
			sessionID := store.NewID("ses")
			if _, err := tx.Exec(`INSERT INTO sessions (id, agent_id, kind, created_at, updated_at) VALUES (?, ?, 'schedule', ?, ?)`,
				sessionID, agentID, ts, ts); err != nil {
				return err
			}
			cron, next := "1 8 * * *", t0.Add(time.Minute)
			if mode == "spread" {
				m := i % 60
				cron, next = fmt.Sprintf("%d * * * *", m), t0.Add(time.Duration(m)*time.Minute)
				if m == 0 {
					next = t0.Add(time.Hour)
				}
			}
			if _, err := tx.Exec(`INSERT INTO schedules (id, agent_id, session_id, name, instruction, kind, cron, timezone,
				next_fire_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'Do the thing.', 'cron', ?, 'UTC', ?, ?, ?)`,
				store.NewID("sch"), agentID, sessionID, fmt.Sprintf("job %d", i), cron, store.FormatTime(next), ts, ts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
