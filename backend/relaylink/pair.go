package relaylink

// Pairing another device with a linked workspace, joining one with a
// pairing code, and the workspace's devices: each names itself in the
// synced settings, and the person picks the one that takes the webhooks
// and fires the schedules.

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/sync/client"
)

// deviceNameKey prefixes a device's name in sync_settings (+ its id).
const deviceNameKey = "device:"

// Pairing returns a pairing code for another device of this workspace
// (named name there until the records arrive). The code holds the relay
// secret and the sync key: it is shown once, to the person, and never
// logged.
func (r *Service) Pairing(ctx context.Context, name string) (string, error) {
	r.mu.Lock()
	l := r.link
	r.mu.Unlock()
	if l == nil {
		return "", fault.Invalid("link this workspace to a relay first (Settings → Relay): the other device reaches it through the relay")
	}
	if !r.replica.Enabled(ctx) {
		if err := r.replica.Enable(ctx, true); err != nil {
			return "", err
		}
	}
	return client.Pairing{RelayURL: l.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, SyncKey: l.SyncKey,
		Workspace: r.ws, Name: name}.Code(), nil
}

// Invite is a pairing code read on the device that joins: the workspace it
// names and the link to keep there.
type Invite struct {
	// Workspace is the workspace's id, the same on every device; Name what
	// it is called here until the other devices' records arrive.
	Workspace string
	Name      string
	link      relayLink
}

// ReadPairing reads a pairing code made by Service.Pairing on another
// device; the workspace is named name here, or the code's name when name
// is empty.
func ReadPairing(code, name string) (*Invite, error) {
	p, err := client.ParsePairing(code)
	if err != nil {
		return nil, fault.Invalid("%v", err)
	}
	base, err := checkRelayURL(p.RelayURL)
	if err != nil {
		return nil, err
	}
	if name = strings.TrimSpace(name); name == "" {
		name = strings.TrimSpace(p.Name)
	}
	if name == "" {
		name = "Joined workspace"
	}
	if n := utf8.RuneCountInString(name); n > 64 {
		name = string([]rune(name)[:64])
	}
	return &Invite{Workspace: p.Workspace, Name: name,
		link: relayLink{URL: base, WorkspaceID: p.WorkspaceID, Secret: p.Secret, SyncKey: p.SyncKey, LinkedAt: time.Now().UTC()}}, nil
}

// Check asks the relay whether it knows the code's workspace: it must,
// before this device makes it. dataDir is the data directory.
func (inv *Invite) Check(ctx context.Context, dataDir string) error {
	l := inv.link
	c, err := client.New(client.Config{RelayURL: l.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: dataDir})
	if err != nil {
		return fault.Invalid("%v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	_, err = c.Pull(cctx, 0, 1)
	cancel()
	if err != nil {
		if errors.Is(err, client.ErrUnauthorized) {
			return fault.Invalid("the relay does not know this pairing code's workspace: it was unlinked on the other device; link it there and make a new code")
		}
		return relayError("check the pairing code with the relay", err)
	}
	return nil
}

// Join keeps the invite's link on the workspace made here for it (one
// joined without a snapshot), and starts serving it: the workspace fills
// from the relay's change log.
func (r *Service) Join(ctx context.Context, inv *Invite) error {
	l := inv.link
	l.DeviceID = r.device
	_, err := r.adopt(ctx, &l)
	return err
}

// nameDevice writes this device's name (the computer's host name) into the
// synced settings, when it is not there already.
func (r *Service) nameDevice(ctx context.Context) error {
	name, err := os.Hostname()
	if err != nil || strings.TrimSpace(name) == "" {
		name = "a computer"
	}
	if utf8.RuneCountInString(name) > 64 {
		name = string([]rune(name)[:64])
	}
	_, err = r.db.ExecContext(ctx, `INSERT INTO sync_settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value != excluded.value`, deviceNameKey+r.device, name)
	return err
}

// devices lists the workspace's devices known here: those named in the
// synced settings, this one, and the automations device.
func (r *Service) devices(ctx context.Context, automations string) []Device {
	var out []Device
	seen := map[string]bool{}
	add := func(id, name string) {
		if id == "" || seen[id] {
			return
		}
		seen[id] = true
		out = append(out, Device{ID: id, Name: name, This: id == r.device, Automations: id == automations})
	}
	rows, err := r.db.QueryContext(ctx, `SELECT substr(key, ?), value FROM sync_settings WHERE key LIKE ? ORDER BY key`,
		len(deviceNameKey)+1, deviceNameKey+"%")
	if err == nil {
		for rows.Next() {
			var id, name string
			if rows.Scan(&id, &name) == nil {
				add(id, name)
			}
		}
		rows.Close()
	}
	add(r.device, "")
	add(automations, "")
	return out
}

// SetAutomationsDevice makes device (one of Status().Devices) the one that
// takes the workspace's webhooks and fires its schedules, on every device:
// the setting syncs, and each device's socket follows it.
func (r *Service) SetAutomationsDevice(ctx context.Context, device string) (Status, error) {
	if !r.Status().Linked {
		return Status{}, fault.Invalid("this workspace is not linked to a relay: link it in Settings → Relay")
	}
	known := false
	for _, d := range r.devices(ctx, "") {
		known = known || d.ID == device
	}
	if !known {
		return Status{}, fault.Invalid("device %.80q is not one of this workspace's devices; pick one from Settings → Relay", device)
	}
	if err := r.replica.SetAutomationsDevice(ctx, device); err != nil {
		return Status{}, err
	}
	r.publishIfChanged(ctx)
	return r.Status(), nil
}
