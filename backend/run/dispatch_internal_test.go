package run

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// backlog opens a workspace whose one session holds a run waiting for a
// person (paused) and n runs queued behind it, a second apart.
func backlog(tb testing.TB, n int) (*Service, *store.DB) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	boxes := box.NewService(db, "ws", nil)
	bx, _ := boxes.Create(ctx, "Main")
	agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil)
	ag, err := agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: bx.ID})
	if err != nil {
		tb.Fatal(err)
	}
	s := NewService(Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: boxes}, Config{})
	sess, _ := s.NewSession(ctx, ag.ID, SourceTrigger, "")
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, agent_id, session_id, source, status, input, created_at)
		WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
		SELECT printf('run_%08d', i), ?, ?, 'trigger', CASE i WHEN 0 THEN 'paused' ELSE 'queued' END, 'call',
			strftime('%Y-%m-%dT%H:%M:%f', 'now', printf('+%d seconds', i)) || 'Z'
		FROM c`, n, ag.ID, sess.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return s, db
}

// A backlog behind a session waiting for a person costs no pass a second
// while nothing happens; a commit brings the passes back.
func TestIdleBacklogIsNotReadEverySecond(t *testing.T) {
	ctx := context.Background()
	s, db := backlog(t, 1000)
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { s.Serve(sctx); close(done) }()
	defer func() { stop(); <-done }()

	for s.passes.Load() == 0 { // the first pass, at start
		time.Sleep(10 * time.Millisecond)
	}
	// Three ticks go by with nothing written: no pass.
	first := s.passes.Load()
	time.Sleep(3500 * time.Millisecond)
	if n := s.passes.Load(); n != first {
		t.Errorf("%d passes over an idle backlog in 3.5 s, want none", n-first)
	}
	// A write of this process: the next tick looks again.
	if err := db.Tx(ctx, func(tx *sql.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	for s.passes.Load() == first {
		time.Sleep(10 * time.Millisecond)
	}
}

// BenchmarkDispatchBacklog times one dispatch pass over 100,000 runs
// queued behind a session that waits for a person: the pass finds nothing
// to start, and must not read the whole backlog to learn it.
func BenchmarkDispatchBacklog(b *testing.B) {
	ctx := context.Background()
	s, _ := backlog(b, 100000)
	b.ResetTimer()
	for range b.N {
		if err := s.dispatch(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if n := len(s.active); n != 0 {
		b.Fatalf("%d runs started from a session that waits for a person", n)
	}
}

// The dispatch pass reads each free session's oldest queued run, oldest
// first: a session with a run running or paused waits, and so does one
// whose oldest queued run is another agent's call (its caller runs it).
func TestDispatchQueryTakesEachFreeSessionsOldest(t *testing.T) {
	ctx := context.Background()
	s, db := backlog(t, 3) // a session waiting for a person, 3 queued behind it
	var agentID string
	if err := db.QueryRowContext(ctx, `SELECT agent_id FROM runs LIMIT 1`).Scan(&agentID); err != nil {
		t.Fatal(err)
	}
	at := func(sec int) string { return store.FormatTime(time.Now().Add(time.Duration(sec) * time.Second)) }
	sessions := map[string]string{}
	for _, name := range []string{"running", "called", "two", "one"} {
		sess, err := s.NewSession(ctx, agentID, SourceAPI, "")
		if err != nil {
			t.Fatal(err)
		}
		sessions[name] = sess.ID
	}
	for _, r := range []struct {
		id, session, status, parent string
		at                          int
	}{
		{"run_a1", "running", "running", "", -100},
		{"run_a2", "running", "queued", "", -90},
		{"run_b1", "called", "queued", "run_x", -80}, // a call its caller runs inline
		{"run_b2", "called", "queued", "", -70},
		{"run_c1", "two", "queued", "", -50},
		{"run_c2", "two", "queued", "", -60}, // older, though made later
		{"run_d1", "one", "queued", "", -55},
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO runs (id, agent_id, session_id, source, parent_run_id, status, input, created_at)
			VALUES (?, ?, ?, 'api', ?, ?, 'x', ?)`, r.id, agentID, sessions[r.session], r.parent, r.status, at(r.at)); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := store.Query(ctx, db, scanRun, dispatchQuery, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.ID)
	}
	if want := []string{"run_c2", "run_d1"}; !slices.Equal(got, want) {
		t.Errorf("dispatch candidates %v, want %v", got, want)
	}
	if runs, _ := store.Query(ctx, db, scanRun, dispatchQuery, 1); len(runs) != 1 || runs[0].ID != "run_c2" {
		t.Errorf("with one free worker: %v, want the oldest, run_c2", runs)
	}
}
