package relaylink

// What runs while a workspace is linked: the sync engine over the relay's
// change log, the socket (webhooks on the automations device only), and a
// watch that tells the socket about token changes, moves the webhooks when
// the automations device changes, and publishes the link's status.

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/sync/client"
)

// KindSyncSettings is published (by package replica) when the synced
// settings change, here or on another device.
const KindSyncSettings = "sync.settings"

// Serve serves the link while the workspace is linked (and a link made
// later), until ctx ends.
func (r *Service) Serve(ctx context.Context) error {
	r.mu.Lock()
	r.serving = ctx
	if r.link != nil {
		r.startLocked()
	}
	r.mu.Unlock()
	<-ctx.Done()
	r.Close()
	return nil
}

// startLocked starts serving r.link under r.serving; r.mu is held.
func (r *Service) startLocked() {
	if r.serving == nil || r.stop != nil || r.serving.Err() != nil || r.link == nil {
		return
	}
	ctx, cancel := context.WithCancel(r.serving)
	done := make(chan struct{})
	r.stop, r.done = cancel, done
	l := *r.link
	go func() {
		defer close(done)
		r.runLink(ctx, &l)
	}()
}

// Close stops what serves the link, if anything does, and waits for it.
func (r *Service) Close() {
	r.mu.Lock()
	stop, done := r.stop, r.done
	r.stop, r.done = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// socket is the running client of the link.
type socket struct {
	c     *client.Client
	hooks bool
	stop  context.CancelFunc
	done  chan struct{}
}

// runLink serves link l until ctx ends. The bus subscription lives only as
// long as the link is served: an unlinked workspace holds none.
func (r *Service) runLink(ctx context.Context, l *relayLink) {
	changes, unsubscribe := r.bus.Subscribe()
	defer unsubscribe()
	if !r.replica.Enabled(ctx) {
		// A link made before device sync: this device has everything.
		if err := r.replica.Enable(ctx, true); err != nil {
			r.log.Error("enable device sync", "err", err)
		}
	}
	if err := r.nameDevice(ctx); err != nil {
		r.log.Warn("name this device in the synced settings", "err", err)
	}
	api, err := r.newClient(l, false)
	if err != nil {
		r.log.Error("start the relay client", "err", err)
		return
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { // what is remembered of the phones may be stale (one paired since)
		if _, err := r.Phones(ctx); err != nil && ctx.Err() == nil {
			r.log.Debug("list the phones", "err", err)
		}
	})
	wg.Go(func() {
		if err := r.replica.Serve(ctx, l.SyncKey, api); err != nil {
			r.log.Error("device sync stopped", "err", err)
		}
	})

	var sock *socket
	defer func() { r.stopSocket(sock) }()
	// The socket takes webhooks only on the automations device; when that
	// setting moves, the socket is made again with or without them.
	reconfigure := func() {
		hooks := r.replica.Active()
		if sock != nil && sock.hooks == hooks {
			return
		}
		r.stopSocket(sock)
		sock = r.startSocket(ctx, l, hooks)
	}
	reconfigure()

	poll := time.NewTicker(relayPoll)
	defer poll.Stop()
	refresh := time.NewTicker(relayTokenRefresh)
	defer refresh.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case c, ok := <-changes:
			if !ok {
				return
			}
			switch {
			case c.Kind == event.KindResync:
				reconfigure()
				r.tokensChanged()
			case c.Workspace != r.ws:
			case c.Kind == KindSyncSettings:
				reconfigure()
			case strings.HasPrefix(c.Kind, "trigger.") && c.Kind != "trigger.delivery":
				r.tokensChanged()
			}
		case <-refresh.C:
			r.tokensChanged()
		case <-poll.C:
			r.publishIfChanged(ctx)
		}
	}
}

// startSocket starts the link's socket, with or without the webhooks.
func (r *Service) startSocket(ctx context.Context, l *relayLink, hooks bool) *socket {
	c, err := r.newClient(l, hooks)
	if err != nil {
		r.log.Error("start the relay client", "err", err)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &socket{c: c, hooks: hooks, stop: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.client = c
	r.mu.Unlock()
	go func() {
		defer close(s.done)
		if err := c.Serve(ctx); err != nil {
			r.log.Error("relay client stopped", "err", err)
		}
	}()
	r.log.Info("relay socket started", "webhooks", hooks)
	return s
}

// stopSocket ends s (nil: nothing) and waits for it.
func (r *Service) stopSocket(s *socket) {
	if s == nil {
		return
	}
	s.stop()
	<-s.done
	r.mu.Lock()
	if r.client == s.c {
		r.client = nil
	}
	r.mu.Unlock()
}

func (r *Service) tokensChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		r.client.TokensChanged()
	}
}
