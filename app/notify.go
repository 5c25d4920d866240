package app

import (
	"context"
	"log/slog"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// sendFunc shows one OS notification.
type sendFunc func(id, title, body string) error

// forwardNotifications subscribes to home's changes now and, until ctx
// ends, shows an OS notification ("Agent name: title") for every new
// notification whose workspace's delivery settings want one for its origin.
// It is best effort: a failure is logged and the next one tried, and the
// event bus never waits for it. done closes when it has stopped.
func forwardNotifications(ctx context.Context, home *workspace.Home, send sendFunc, log *slog.Logger) (done <-chan struct{}) {
	changes, stop := home.Events().Subscribe()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer stop()
		for {
			select {
			case <-ctx.Done():
				return
			case c, ok := <-changes:
				if !ok {
					return
				}
				if c.Kind != "notification.created" {
					continue
				}
				id, title, body, ok := osNotification(ctx, home, c, log)
				if !ok {
					continue
				}
				if err := send(id, title, body); err != nil {
					log.Warn("show an OS notification", "workspace", c.Workspace, "notification", c.ID, "err", err)
				}
			}
		}
	}()
	return finished
}

// osNotification is what to show for the created notification c, if its
// delivery settings want an OS notification.
func osNotification(ctx context.Context, home *workspace.Home, c event.Change, log *slog.Logger) (id, title, body string, ok bool) {
	ws, err := home.Workspace(c.Workspace)
	if err != nil {
		return "", "", "", false
	}
	n, err := ws.Notify.Get(ctx, c.ID)
	if err != nil {
		log.Warn("read a notification for the OS", "workspace", c.Workspace, "notification", c.ID, "err", err)
		return "", "", "", false
	}
	d, err := ws.Notify.Delivery(ctx)
	if err != nil {
		log.Warn("read notification delivery", "workspace", c.Workspace, "err", err)
		return "", "", "", false
	}
	if !d.Wants(n, notify.OS) {
		return "", "", "", false
	}
	title = n.Title
	if a, err := ws.Agents.Get(ctx, n.AgentID); err == nil {
		title = a.Name + ": " + n.Title
	}
	return n.ID, title, n.Body, true
}
