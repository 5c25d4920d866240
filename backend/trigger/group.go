package trigger

import (
	"context"
	"database/sql"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// group commits the small writes of concurrent calls together. Each commit
// waits for an fsync (synchronous=FULL); a call's delivery and its run are
// one write, and the calls that arrive while a commit is under way share
// the next one, so a burst costs a fraction of an fsync a call. The calls
// of a batch are written together too (accept, the service's acceptAll):
// a few statements for all of them rather than a few each.
//
// There is no worker goroutine: the first writer to arrive leads, commits
// everything queued so far in one transaction, and hands the lead to the
// next writer that queued meanwhile.
type group struct {
	db      *store.DB
	accept  func(ctx context.Context, tx *sql.Tx, calls []*acceptance) error
	mu      sync.Mutex
	queue   []*write
	leading bool
}

// write is a function of its own to run in the transaction, or a call to
// accept with the batch's other calls.
type write struct {
	fn   func(tx *sql.Tx) error
	call *acceptance
	done chan result // buffered: a lead hand-over, then the result
}

type result struct {
	lead bool
	err  error
}

// do runs fn in a transaction shared with other writers and returns its
// error. fn may run twice (alone, after a shared transaction failed
// because of another writer), so it must not keep state between runs.
func (g *group) do(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return g.run(ctx, &write{fn: fn, done: make(chan result, 2)})
}

// doCall accepts a call in a transaction shared with other writers; like
// fn, it may be written twice.
func (g *group) doCall(ctx context.Context, a *acceptance) error {
	return g.run(ctx, &write{call: a, done: make(chan result, 2)})
}

func (g *group) run(ctx context.Context, w *write) error {
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.leading
	g.leading = true
	g.mu.Unlock()
	if !lead {
		if r := <-w.done; !r.lead {
			return r.err
		}
	}
	g.mu.Lock()
	batch := g.queue
	g.queue = nil
	g.mu.Unlock()
	g.commit(ctx, batch)
	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- result{lead: true}
	} else {
		g.leading = false
	}
	g.mu.Unlock()
	return (<-w.done).err
}

// commit runs batch in one transaction; when that fails, each write alone,
// so one bad write fails only its own call.
func (g *group) commit(ctx context.Context, batch []*write) {
	// The leader's caller may hang up; the others' writes must still land.
	ctx = context.WithoutCancel(ctx)
	err := g.db.Tx(ctx, func(tx *sql.Tx) error { return g.write(ctx, tx, batch) })
	if err == nil || len(batch) == 1 {
		for _, w := range batch {
			w.done <- result{err: err}
		}
		return
	}
	for _, w := range batch {
		w.done <- result{err: g.db.Tx(ctx, func(tx *sql.Tx) error { return g.write(ctx, tx, []*write{w}) })}
	}
}

func (g *group) write(ctx context.Context, tx *sql.Tx, batch []*write) error {
	var calls []*acceptance
	for _, w := range batch {
		if w.call != nil {
			calls = append(calls, w.call)
		} else if err := w.fn(tx); err != nil {
			return err
		}
	}
	if len(calls) == 0 {
		return nil
	}
	return g.accept(ctx, tx, calls)
}
