package run

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// A backlog behind a session waiting for a person costs no pass a second
// while nothing happens; a commit brings the passes back.
func TestIdleBacklogIsNotReadEverySecond(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	boxes := box.NewService(db, "ws", nil)
	bx, _ := boxes.Create(ctx, "Main")
	agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil)
	ag, err := agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: bx.ID})
	if err != nil {
		t.Fatal(err)
	}
	s := NewService(Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: boxes}, Config{})
	sess, _ := s.NewSession(ctx, ag.ID, SourceTrigger, "")
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, agent_id, session_id, source, status, input, created_at)
		WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 1000)
		SELECT printf('run_%08d', i), ?, ?, 'trigger', CASE i WHEN 0 THEN 'paused' ELSE 'queued' END, 'call', ?
		FROM c`, ag.ID, sess.ID, store.FormatTime(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
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
	dir := b.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	boxes := box.NewService(db, "ws", nil)
	bx, _ := boxes.Create(ctx, "Main")
	agents := agent.NewService(db, filepath.Join(dir, "agents"), "ws", nil)
	ag, err := agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: bx.ID})
	if err != nil {
		b.Fatal(err)
	}
	s := NewService(Deps{DB: db, Workspace: "ws", Agents: agents, Boxes: boxes}, Config{})
	sess, _ := s.NewSession(ctx, ag.ID, SourceTrigger, "")
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, agent_id, session_id, source, status, input, created_at)
		WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < 100000)
		SELECT printf('run_%08d', i), ?, ?, 'trigger', CASE i WHEN 0 THEN 'paused' ELSE 'queued' END, 'call',
			strftime('%Y-%m-%dT%H:%M:%f', 'now', printf('+%d seconds', i)) || 'Z'
		FROM c`, ag.ID, sess.ID)
	if err != nil {
		b.Fatal(err)
	}
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
