package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
)

var workspaceID = regexp.MustCompile(`^ws_[a-z0-9]{1,60}$`)

// Join makes this device a member of the synced workspace id, named name
// until the other devices' records arrive: a workspace with that id, no
// box of its own (they come from the other devices), and sync enabled
// without a snapshot. The caller links it to the relay and serves it.
func (h *Home) Join(ctx context.Context, id, name string) (Info, error) {
	name, err := cleanName(name)
	if err != nil {
		return Info{}, err
	}
	if !workspaceID.MatchString(id) {
		return Info{}, fault.Invalid("workspace id %q is not one (ws_ and lowercase letters or digits); copy it from the other device", id)
	}
	if _, err := h.Workspace(id); err == nil {
		return Info{}, fault.Conflict("workspace %s is already on this device", id)
	}
	dir := filepath.Join(h.workspacesDir(), id)
	if _, err := os.Stat(dir); err == nil {
		return Info{}, fault.Conflict("a folder for workspace %s already exists in %s; remove it first", id, h.workspacesDir())
	}
	w, err := h.newWorkspace(ctx, id, name)
	if err != nil {
		return Info{}, fmt.Errorf("join workspace %s: %w", id, err)
	}
	if err := w.Replica.Enable(ctx, false); err != nil {
		return Info{}, fmt.Errorf("join workspace %s: %w", id, err)
	}
	h.log.Info("workspace joined", "id", id)
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.created", ID: id})
	return w.Info(), nil
}
