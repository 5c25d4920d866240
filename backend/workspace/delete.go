package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Delete removes workspace id for good, once confirm is its name: it stops
// its runs, schedules and triggers, its browsers and MCP servers, unlinks it
// from its relay (here only, when the relay cannot be reached), revokes its
// API keys and removes its folder. The last workspace cannot be deleted.
func (h *Home) Delete(ctx context.Context, id, confirm string) error {
	h.mu.Lock()
	w, ok := h.open[id]
	switch {
	case !ok:
		h.mu.Unlock()
		return fault.NotFound("no workspace with id %q", id)
	case len(h.open) == 1:
		h.mu.Unlock()
		return fault.Conflict("%q is the last workspace and cannot be deleted; create another one first", w.Info().Name)
	case strings.TrimSpace(confirm) != w.Info().Name:
		h.mu.Unlock()
		return fault.Invalid("type the workspace's name, %q, to confirm deleting it", w.Info().Name)
	}
	// Out of the list first: no request, key or webhook reaches it now.
	delete(h.open, id)
	h.keepVariables()
	switchTo := ""
	if h.current == id {
		for other := range h.open {
			if switchTo == "" || other < switchTo {
				switchTo = other
			}
		}
	}
	h.mu.Unlock()
	if switchTo != "" {
		if err := h.Switch(switchTo); err != nil {
			h.log.Warn("switch after deleting a workspace", "err", err)
		}
	}
	log := h.log.With("workspace", id)
	// Runs stop where they are, with the loops that start them.
	if w.stopServing != nil {
		w.stopServing()
	}
	w.served.Wait()
	if w.Relay.Status().Linked {
		if err := w.Relay.Unlink(ctx, true); err != nil {
			log.Warn("unlink the deleted workspace from its relay", "err", err)
		}
	}
	keys, err := w.Keys.List(ctx)
	if err == nil {
		for _, k := range keys {
			if k.RevokedAt == nil {
				if _, err := w.Keys.Revoke(ctx, k.ID); err != nil {
					log.Warn("revoke an API key of the deleted workspace", "key", k.ID, "err", err)
				}
			}
		}
	}
	w.Connectors.Close() // ends its stdio MCP servers
	w.Relay.Close()
	w.Outbox.Close()
	if err := w.Browsers.Close(); err != nil {
		log.Warn("close the browsers of the deleted workspace", "err", err)
	}
	if err := w.DB.Close(); err != nil {
		log.Warn("close the deleted workspace's database", "err", err)
	}
	// Renamed out of the workspaces first, so a crash halfway leaves no
	// half workspace for the next start to open.
	gone := filepath.Join(h.workspacesDir(), ".deleted-"+id)
	if err := os.Rename(w.Dir, gone); err != nil {
		return fmt.Errorf("remove the folder of workspace %q: %w", w.Info().Name, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return fmt.Errorf("remove the folder of workspace %q: %w (remove %s by hand)", w.Info().Name, err, gone)
	}
	log.Info("workspace deleted")
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.deleted", ID: id})
	return nil
}
