package workspace

// What every open workspace does in the background while the Home serves:
// its runs, schedules, triggers, browsers, relay link, memory upkeep and
// scheduled backups.

import (
	"context"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/backup"
	"github.com/rerun-build/rerun-desktop/backend/event"
)

// Serve executes the runs of every workspace (and of those created later),
// fires their schedules and settles their trigger deliveries until ctx is
// cancelled, then waits for them to stop.
func (h *Home) Serve(ctx context.Context) error {
	h.mu.Lock()
	h.serving = ctx
	for _, w := range h.open {
		h.serve(ctx, w)
	}
	h.mu.Unlock()
	<-ctx.Done()
	h.group.Wait()
	return nil
}

// serve starts w's run workers, schedule and trigger loops and memory
// upkeep; h.mu is held.
func (h *Home) serve(ctx context.Context, w *Workspace) {
	ctx, w.stopServing = context.WithCancel(ctx) // Delete stops one workspace
	for name, serve := range map[string]func(context.Context) error{
		"run workers":   w.Runs.Serve,
		"schedule loop": w.Schedules.Serve,
		"trigger loop":  w.Triggers.Serve,
		"browsers":      w.Browsers.Serve,
		"apps":          w.Connectors.Serve,
		"relay link":    w.Relay.Serve,
		"onboarding":    w.Foreman.Serve,
		"retention":     w.Retention.Serve,
	} {
		h.group.Add(1)
		w.served.Add(1)
		go func() {
			defer h.group.Done()
			defer w.served.Done()
			if err := serve(ctx); err != nil {
				h.log.Error(name+" stopped", "workspace", w.Info().ID, "err", err)
			}
		}()
	}
	h.group.Add(1)
	w.served.Add(1)
	go func() {
		defer h.group.Done()
		defer w.served.Done()
		h.keepMemory(ctx, w)
	}()
	h.group.Add(1)
	w.served.Add(1)
	go func() {
		defer h.group.Done()
		defer w.served.Done()
		backup.Keep(ctx, func() backup.Workspace { return h.backups(w) })
	}()
}

// SweepInterval is how often faded memories are marked retired.
const SweepInterval = time.Hour

// keepMemory re-embeds the memories left without a vector of the current
// embedding model (all of them after the model changed), publishing its
// progress as "memory.reembed" changes with Text "done/total", then retires
// faded memories every SweepInterval until ctx ends.
func (h *Home) keepMemory(ctx context.Context, w *Workspace) {
	id := w.Info().ID
	log := h.log.With("workspace", id)
	if stale, err := w.Memory.Stale(ctx); err != nil {
		log.Warn("count memories to re-embed", "err", err)
	} else if stale > 0 {
		log.Info("re-embedding memories", "count", stale)
		err := w.Memory.Reembed(ctx, func(done, total int) {
			log.Info("re-embedding memories", "done", done, "total", total)
			h.bus.Publish(event.Change{Workspace: id, Kind: "memory.reembed", Text: fmt.Sprintf("%d/%d", done, total)})
		})
		if err != nil && ctx.Err() == nil {
			// Keyword recall still works; the next start resumes.
			log.Warn("re-embed memories", "err", err)
		}
	}
	tick := time.NewTicker(SweepInterval)
	defer tick.Stop()
	for {
		if n, err := w.Memory.Sweep(ctx); err != nil && ctx.Err() == nil {
			log.Warn("retire faded memories", "err", err)
		} else if n > 0 {
			log.Info("retired faded memories", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
