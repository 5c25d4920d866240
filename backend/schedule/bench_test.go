package schedule_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// latenessRuns queues real runs and notes how late each was durably queued
// (its transaction committed) after the instant it was due, and how many
// times each session got a run in the current round.
type latenessRuns struct {
	scheduleRuns
	mu     sync.Mutex
	due    time.Time
	late   []time.Duration
	round  map[string]int // session → runs queued this round
	double int            // runs beyond one per session and round
}

func (r *latenessRuns) Started(agentID, sessionID, runID string) {
	r.scheduleRuns.Started(agentID, sessionID, runID)
	at := time.Now()
	r.mu.Lock()
	r.late = append(r.late, at.Sub(r.due))
	if r.round[sessionID]++; r.round[sessionID] > 1 {
		r.double++
	}
	r.mu.Unlock()
}

func (r *latenessRuns) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.late)
}

// BenchmarkServe10k measures, on the wall clock, how late the Serve loop
// durably queues runs (with the real run service) among 10,000 schedules,
// each with its own session. Each op moves the next fire time of some
// schedules to an instant one second ahead and wakes the loop, as an edit
// of a schedule does; the loop goes back to sleep and its own timer fires
// them. "burst": all 10,000 are due at that instant; "spread": the share
// of one minute of the hour (≈167, one minute per op) is. Lateness runs
// from the due instant to the commit of the run's transaction; every
// schedule must fire exactly once per op (double-fires counts the rest).
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
			rs := run.NewService(run.Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: box.NewService(db, "ws", nil)}, run.Config{})
			runs := &latenessRuns{scheduleRuns: scheduleRuns{rs}}
			insertSchedules(b, db, ag.ID, total)
			svc := schedule.NewService(schedule.Deps{DB: db, Workspace: "ws", Runs: runs}, schedule.Config{})
			sctx, stop := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { svc.Serve(sctx); close(done) }()
			defer func() { stop(); <-done }()

			b.ResetTimer()
			want := 0
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				due := time.Now().Add(time.Second)
				q, args := `UPDATE schedules SET next_fire_at = ?`, []any{store.FormatTime(due)}
				if mode == "spread" {
					q, args = q+` WHERE rowid % 60 = ?`, append(args, i%60)
				}
				res, err := db.ExecContext(ctx, q, args...)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := res.RowsAffected()
				runs.mu.Lock()
				runs.due, runs.round = due, map[string]int{}
				runs.mu.Unlock()
				svc.Wake() // the loop reads the new times and sleeps until due
				b.StartTimer()
				want += int(n)
				for runs.count() < want {
					time.Sleep(time.Millisecond)
				}
			}
			b.StopTimer()
			late := runs.late
			slices.Sort(late)
			b.ReportMetric(float64(len(late))/float64(b.N), "fires/op")
			b.ReportMetric(float64(runs.double), "double-fires")
			b.ReportMetric(ms(late[len(late)/2]), "p50-lateness-ms")
			b.ReportMetric(ms(late[len(late)*99/100]), "p99-lateness-ms")
			b.ReportMetric(ms(late[len(late)-1]), "max-lateness-ms")
		})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// insertSchedules writes n schedules, each with its own session as Create
// makes them (ids in the order they were made, as NewSession and Create
// make theirs), in one transaction (Create would take two each). They fire
// once a year, at new year: the benchmark sets the times it wants.
func insertSchedules(b *testing.B, db *store.DB, agentID string, n int) {
	b.Helper()
	err := db.Tx(context.Background(), func(tx *sql.Tx) error {
		now := time.Now()
		ts, next := store.FormatTime(now), store.FormatTime(time.Date(now.Year()+1, 1, 1, 0, 0, 0, 0, time.UTC))
		for i := 0; i < n; i++ {
			sessionID := store.NewSortedID("ses")
			if _, err := tx.Exec(`INSERT INTO sessions (id, agent_id, kind, created_at, updated_at) VALUES (?, ?, 'schedule', ?, ?)`,
				sessionID, agentID, ts, ts); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO schedules (id, agent_id, session_id, name, instruction, kind, cron, timezone,
				next_fire_at, created_at, updated_at) VALUES (?, ?, ?, ?, 'Do the thing.', 'cron', '0 0 1 1 *', 'UTC', ?, ?, ?)`,
				store.NewSortedID("sch"), agentID, sessionID, fmt.Sprintf("job %d", i), next, ts, ts); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
