package schedule_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// clock is the fake clock of the tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// queued is a run the fake queued.
type queued struct {
	ID, AgentID, SessionID, From, Input string
}

// runs is the recording fake of schedule.Runs: a run counts as queued once
// Started says its transaction committed. before lets a test fail (or
// "kill the process" during) the claim.
type runs struct {
	mu       sync.Mutex
	sessions int
	list     []queued
	pending  map[string]queued // by id: queued in a transaction not yet committed
	// before runs ahead of queuing; a non-nil error is returned instead.
	before func(ctx context.Context) error
	n      int
}

func (r *runs) NewSession(ctx context.Context, agentID string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sessions++
	return fmt.Sprintf("ses_%d", r.sessions), nil
}

func (r *runs) StartEachTx(ctx context.Context, tx *sql.Tx, starts []schedule.Start) ([]string, []error, error) {
	ids, errs := make([]string, len(starts)), make([]error, len(starts))
	for i, x := range starts {
		if r.before != nil {
			if err := r.before(ctx); err != nil {
				if fault.Is(err) {
					errs[i] = err
					continue
				}
				return nil, nil, err
			}
		}
		r.mu.Lock()
		r.n++
		q := queued{fmt.Sprintf("run_%d", r.n), x.AgentID, x.SessionID, x.From, x.Input}
		if r.pending == nil {
			r.pending = map[string]queued{}
		}
		r.pending[q.ID] = q
		r.mu.Unlock()
		ids[i] = q.ID
	}
	return ids, errs, nil
}

func (r *runs) Started(agentID, sessionID, runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, r.pending[runID])
	delete(r.pending, runID)
}

// queue adds a run as if a process had queued it and died before linking
// it to its fire.
func (r *runs) queue(sessionID, input string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	q := queued{ID: fmt.Sprintf("run_%d", r.n), SessionID: sessionID, Input: input}
	r.list = append(r.list, q)
	return q.ID
}

func (r *runs) Find(ctx context.Context, sessionID, marker string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.list {
		if q.SessionID == sessionID && strings.Contains(q.Input, marker) {
			return q.ID, nil
		}
	}
	return "", nil
}

func (r *runs) all() []queued {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]queued(nil), r.list...)
}

// bySession counts queued runs per session.
func (r *runs) bySession() map[string]int {
	out := map[string]int{}
	for _, q := range r.all() {
		out[q.SessionID]++
	}
	return out
}

// env is a workspace database with one agent, a fake clock and fake runs.
type env struct {
	t     testing.TB
	db    *store.DB
	path  string
	agent string
	clock *clock
	runs  *runs
	bus   *event.Bus
	svc   *schedule.Service
}

func newEnv(t testing.TB, start time.Time) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "workspace.db")
	db, err := store.Open(ctx, path, store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := box.NewService(db, "ws", nil).Create(ctx, "Main")
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil).Create(ctx, agent.NewAgent{Name: "Ada", BoxID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, path: path, agent: a.ID, clock: newClock(start), runs: &runs{}, bus: &event.Bus{}}
	e.svc = e.service(db)
	return e
}

// service is another Service over db with the env's clock and runs: a
// second loop, or the process after a restart.
func (e *env) service(db *store.DB) *schedule.Service {
	return schedule.NewService(schedule.Deps{DB: db, Workspace: "ws", Runs: e.runs, Bus: e.bus},
		schedule.Config{Now: e.clock.Now, DefaultTimezone: "Europe/Berlin"})
}

// reopen opens a second handle on the database, as another process would.
func (e *env) reopen() *store.DB {
	e.t.Helper()
	db, err := store.Open(context.Background(), e.path, store.WorkspaceMigrations())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	return db
}

func (e *env) create(in schedule.NewSchedule) schedule.Schedule {
	e.t.Helper()
	if in.AgentID == "" {
		in.AgentID = e.agent
	}
	if in.Instruction == "" {
		in.Instruction = "Summarise yesterday's sales."
	}
	if in.Kind == "" {
		in.Kind = schedule.KindCron
	}
	sch, err := e.svc.Create(context.Background(), in)
	if err != nil {
		e.t.Fatalf("create %q: %v", in.Name, err)
	}
	return sch
}

func (e *env) fireDue(svc *schedule.Service) {
	e.t.Helper()
	for {
		more, err := svc.FireDue(context.Background())
		if err != nil {
			e.t.Fatal(err)
		}
		if !more {
			return
		}
	}
}

func (e *env) history(id string) []schedule.Fire {
	e.t.Helper()
	h, err := e.svc.History(context.Background(), id, 1000)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// outcomes counts a schedule's history by outcome.
func (e *env) outcomes(id string) map[string]int {
	out := map[string]int{}
	for _, f := range e.history(id) {
		out[f.Outcome]++
	}
	return out
}

func mustZone(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}
