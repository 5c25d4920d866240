package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
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

// JoinWithPairing makes this device a member of the workspace a pairing
// code names (made by relaylink.Service.Pairing on another device), named
// name (or the code's name) until the other devices' records arrive. It
// checks the code and the relay before anything is made here; then the
// workspace fills from the relay's change log while served.
func (h *Home) JoinWithPairing(ctx context.Context, code, name string) (Info, error) {
	inv, err := relaylink.ReadPairing(code, name)
	if err != nil {
		return Info{}, err
	}
	if !workspaceID.MatchString(inv.Workspace) {
		return Info{}, fault.Invalid("the pairing code names workspace %.80q, which is not a workspace id; make a new code on the other device", inv.Workspace)
	}
	if w, err := h.Workspace(inv.Workspace); err == nil {
		return Info{}, fault.Conflict("workspace %q (%s) is already on this device; switch to it instead", w.Info().Name, inv.Workspace)
	}
	if err := inv.Check(ctx, h.cfg.DataDir); err != nil {
		return Info{}, err
	}
	info, err := h.Join(ctx, inv.Workspace, inv.Name)
	if err != nil {
		return Info{}, err
	}
	w, err := h.Workspace(info.ID)
	if err != nil {
		return Info{}, err
	}
	if err := w.Relay.Join(ctx, inv); err != nil {
		return Info{}, fmt.Errorf("joined workspace %s, but keeping its relay link failed (link it in Settings → Relay): %w", info.ID, err)
	}
	return info, nil
}
