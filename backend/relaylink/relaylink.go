// Package relaylink owns a workspace's link to a rerun-relay and its device
// sync: linking and unlinking, the socket that hands the webhooks the relay
// queued to the trigger intake (on the workspace's automations device only),
// pairing codes and joining from another device, the devices and which one
// takes the automations, the dead letters, and the wiring of the sync
// engine (package replica) to the workspace's services: what follows a
// change another device made, memories and run summaries arriving, and the
// variables-sync opt-in.
//
// The workspace keeps the link in its meta table (link.go), the secret and
// the sync key sealed with the data key; the relay client keeps the
// deliveries it took in <workspace>/relay-client.db.
package relaylink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Deps are the services of one workspace that its link and its sync use.
type Deps struct {
	// Workspace is the workspace's id; Dir its folder; DataDir the data
	// directory, which holds this device's id (replica.Device).
	Workspace string
	Dir       string
	DataDir   string
	DB        *store.DB
	// Box is the data key: it seals the relay secret and the sync key.
	Box    *secret.Box
	Bus    *event.Bus
	Logger *slog.Logger
	// What a change from another device touches here (replica.go,
	// extras.go, variables.go), and the trigger intake the relay's
	// deliveries go to.
	Agents    *agent.Service
	Skills    *skill.Service
	Memory    *memory.Service
	Variables *secret.Variables
	Browsers  *browser.Manager
	Schedules *schedule.Service
	Triggers  *trigger.Service
	Runs      *run.Service
	// Renamed is told the workspace's name another device gave it.
	Renamed func(name string)
	// Replica is the workspace's sync engine (OpenReplica); Open needs it.
	Replica *replica.Engine
}

// KindStatus is published on the bus when a workspace's relay link
// changes (linked, unlinked, connected, a delivery, an error).
const KindStatus = "relay.status"

// relayPoll is how often the link's state is looked at for changes to
// publish; relayTokenRefresh how often the token hashes are offered again
// (a rotated-out token's grace ends without an event).
const (
	relayPoll         = 250 * time.Millisecond
	relayTokenRefresh = 5 * time.Minute
)

// Status is what Settings → Relay and the workspace pill show of a
// workspace's link to its relay. No secret is in it.
type Status struct {
	Linked   bool   `json:"linked"`
	RelayURL string `json:"relay_url,omitempty"`
	// RelayWorkspaceID is the workspace's id at the relay.
	RelayWorkspaceID string `json:"relay_workspace_id,omitempty"`
	// HookBase + token is a trigger's public URL ("" until the relay said).
	HookBase     string     `json:"hook_base,omitempty"`
	Connected    bool       `json:"connected"`
	Since        *time.Time `json:"since,omitempty"` // when Connected last changed
	LastDelivery *time.Time `json:"last_delivery,omitempty"`
	Delivered    int64      `json:"delivered"` // since the app started
	LastError    string     `json:"last_error,omitempty"`
	// DeviceID is this device (the data directory's, replica.Device).
	DeviceID string `json:"device_id,omitempty"`
	// AutomationsDevice: this device takes the webhooks and fires the
	// schedules of the workspace.
	AutomationsDevice bool `json:"automations_device"`
	// AutomationsDeviceID is the device that does ("" before sync).
	AutomationsDeviceID string `json:"automations_device_id,omitempty"`
	// Devices are the workspace's devices known here (each names itself
	// in the synced settings when it links or joins).
	Devices  []Device    `json:"devices,omitempty"`
	Sync     *SyncStatus `json:"sync,omitempty"`
	LinkedAt *time.Time  `json:"linked_at,omitempty"`
}

// SyncStatus is device sync as the pill shows it (replica.Status).
type SyncStatus struct {
	Enabled bool `json:"enabled"`
	// Pending counts local changes not pushed yet; Parked pulled records
	// waiting for their parent.
	Pending   int        `json:"pending"`
	Parked    int        `json:"parked"`
	LastSync  *time.Time `json:"last_sync,omitempty"`
	LastError string     `json:"last_error,omitempty"`
}

// Device is one device of a synced workspace.
type Device struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
	This bool   `json:"this"`
	// Automations: it takes the webhooks and fires the schedules.
	Automations bool `json:"automations"`
}

// LinkRequest links a workspace: RelayURL with SignupToken (the relay
// creates the workspace), or with WorkspaceID and Secret (what
// `rerun-relay -new-workspace` printed).
type LinkRequest struct {
	RelayURL    string `json:"relay_url"`
	SignupToken string `json:"signup_token,omitempty"`
	WorkspaceID string `json:"workspace_id,omitempty"`
	Secret      string `json:"secret,omitempty"`
}

// Service is one workspace's link to a rerun-relay. While linked and served
// it runs (serve.go) the device-sync engine over the relay's change log,
// and a client.Client whose socket brings "changes" frames and, on the
// workspace's automations device only, the trigger calls the relay queued,
// handed to the trigger intake in process.
type Service struct {
	ws       string
	db       *store.DB
	box      *secret.Box
	bus      *event.Bus
	triggers *trigger.Service
	agents   *agent.Service
	runs     *run.Service
	replica  *replica.Engine
	vars     *secret.Variables // masks the link's secrets (masks.go)
	device   string            // this device's id (replica.Device)
	dir      string
	log      *slog.Logger

	mu      sync.Mutex
	link    *relayLink         // nil: not linked
	client  *client.Client     // the socket's client while it runs
	stop    context.CancelFunc // ends the link's goroutines
	done    chan struct{}      // closed when they have
	serving context.Context    // set by Serve
	shown   []byte             // the status last published, as JSON
	phones  phoneState         // phone.go
}

// Open reads the workspace's link (d.Replica must be set).
func Open(ctx context.Context, d Deps) (*Service, error) {
	link, err := loadRelayLink(ctx, d.DB, d.Box, d.Workspace)
	if err != nil {
		return nil, err
	}
	dev, err := replica.Device(d.DataDir)
	if err != nil {
		return nil, err
	}
	r := &Service{ws: d.Workspace, db: d.DB, box: d.Box, bus: d.Bus, triggers: d.Triggers, agents: d.Agents, runs: d.Runs,
		replica: d.Replica, vars: d.Variables, device: dev, dir: d.Dir, log: d.Logger, link: link}
	maskRelay(r.vars, link)
	if link != nil {
		r.loadPhones(ctx) // an unlinked workspace has no phones to push to
	}
	r.shown, _ = json.Marshal(r.Status())
	return r, nil
}

// Status returns the state of the link.
func (r *Service) Status() Status {
	r.mu.Lock()
	l, c := r.link, r.client
	r.mu.Unlock()
	if l == nil {
		return Status{}
	}
	s := Status{Linked: true, RelayURL: l.URL, RelayWorkspaceID: l.WorkspaceID, HookBase: l.HookBase,
		DeviceID: r.device, LinkedAt: timePtr(l.LinkedAt)}
	if c != nil {
		cs := c.Status()
		s.Connected, s.Since, s.LastDelivery = cs.Connected, timePtr(cs.Since), timePtr(cs.LastDelivery)
		s.Delivered, s.LastError = cs.Delivered, cs.Err
		if cs.HookBase != "" {
			s.HookBase = cs.HookBase
		}
	}
	rs := r.replica.Status()
	s.Sync = &SyncStatus{Enabled: rs.Enabled, Pending: rs.Pending, Parked: rs.Parked, LastSync: timePtr(rs.LastSync), LastError: rs.LastError}
	s.AutomationsDevice = r.replica.Active()
	s.AutomationsDeviceID = rs.AutomationsDevice
	s.Devices = r.devices(context.Background(), rs.AutomationsDevice)
	return s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// HookBase is the start of the triggers' public URLs (+ token), "" when
// the workspace is not linked (or the relay has not said yet).
func (r *Service) HookBase() string {
	r.mu.Lock()
	l, c := r.link, r.client
	r.mu.Unlock()
	switch {
	case l == nil:
		return ""
	case c != nil && c.Status().HookBase != "":
		return c.Status().HookBase
	}
	return l.HookBase
}

// publishIfChanged publishes the status when it differs from the one last
// published, and keeps a hook base the relay announced.
func (r *Service) publishIfChanged(ctx context.Context) {
	s := r.Status()
	b, _ := json.Marshal(s)
	r.mu.Lock()
	changed := !bytes.Equal(b, r.shown)
	r.shown = b
	var save *relayLink
	if l := r.link; l != nil && s.HookBase != "" && s.HookBase != l.HookBase {
		l.HookBase = s.HookBase
		cp := *l
		save = &cp
	}
	r.mu.Unlock()
	if save != nil {
		if err := saveRelayLink(ctx, r.db, r.box, r.ws, save); err != nil {
			r.log.Warn("keep the relay's hook base", "err", err)
		}
	}
	if changed {
		r.bus.Publish(event.Change{Workspace: r.ws, Kind: KindStatus})
	}
}

// newClient makes a client of link l. With hooks, the relay's deliveries
// go to the trigger intake by token hash, in process, and the trigger
// token hashes are registered; without, the socket carries only "changes"
// frames (or the client is used only for API calls).
func (r *Service) newClient(l *relayLink, hooks bool) (*client.Client, error) {
	cfg := client.Config{
		RelayURL: l.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: r.dir,
		Device: r.device, OnChanges: r.replica.Notify, Logger: r.log,
	}
	if hooks {
		cfg.TokenHashes = r.triggers.TokenHashes
		hooks := client.HandlerDeliver(r.triggers.RelayHandler(), func(d client.Delivery) string {
			return "/" + d.TokenHash
		})
		// Phones' answers come as deliveries too (phone.go).
		cfg.Deliver = func(ctx context.Context, d client.Delivery) (string, error) {
			if d.TokenHash == protocol.PhoneAnswerHash {
				return r.phoneAnswer(ctx, l, d)
			}
			return hooks(ctx, d)
		}
	}
	return client.New(cfg)
}

// checkRelayURL says what is wrong with a relay URL: it must be https,
// or http on this computer (a relay for tests or behind a local proxy).
func checkRelayURL(raw string) (string, error) {
	raw = strings.TrimRight(strings.TrimSpace(raw), "/")
	u, err := url.Parse(raw)
	if raw == "" || err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return "", fault.Invalid("the relay URL %q is not a URL like https://relay.example.com", raw)
	}
	if u.Scheme == "http" {
		host := u.Hostname()
		if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return "", fault.Invalid("the relay URL must start with https:// (plain http only reaches a relay on this computer): the secret travels with every call")
		}
	}
	if u.Path != "" || u.RawQuery != "" {
		return "", fault.Invalid("the relay URL %q has a path; give only the relay's address, like https://relay.example.com", raw)
	}
	return raw, nil
}

// Link links the workspace to a relay and starts taking its deliveries
// and syncing it: this device becomes the workspace's first device and its
// automations device. The secret and a new sync key are kept sealed;
// neither is returned.
func (r *Service) Link(ctx context.Context, in LinkRequest) (Status, error) {
	base, err := checkRelayURL(in.RelayURL)
	if err != nil {
		return Status{}, err
	}
	if r.Status().Linked {
		return Status{}, fault.Conflict("this workspace is already linked to a relay; unlink it first")
	}
	in.SignupToken, in.WorkspaceID, in.Secret = strings.TrimSpace(in.SignupToken), strings.TrimSpace(in.WorkspaceID), strings.TrimSpace(in.Secret)
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	l := &relayLink{URL: base, SyncKey: newSyncKey(), DeviceID: r.device, LinkedAt: time.Now().UTC()}
	switch {
	case in.SignupToken != "" && (in.WorkspaceID != "" || in.Secret != ""):
		return Status{}, fault.Invalid("give either a signup token, or a workspace id and secret, not both")
	case in.SignupToken != "":
		got, err := client.Link(ctx, nil, base, in.SignupToken)
		if err != nil {
			return Status{}, relayError("link with the signup token", err)
		}
		l.WorkspaceID, l.Secret, l.HookBase = got.WorkspaceID, got.Secret, got.HookBase
	case in.WorkspaceID == "" || in.Secret == "":
		return Status{}, fault.Invalid("give the relay's signup token, or the workspace id and secret that `rerun-relay -new-workspace` printed")
	default:
		l.WorkspaceID, l.Secret = in.WorkspaceID, in.Secret
		// Check the pair before keeping it: a typo is said now, not later.
		c, err := r.newClient(l, false)
		if err != nil {
			return Status{}, fault.Invalid("%v", err)
		}
		if _, err := c.DeadLetters(ctx, 1); err != nil {
			return Status{}, relayError("check the workspace id and secret", err)
		}
	}
	// Every record goes to the change log, and this device fires.
	if err := r.replica.Enable(ctx, true); err != nil {
		return Status{}, err
	}
	if err := r.replica.SetAutomationsDevice(ctx, r.device); err != nil {
		return Status{}, err
	}
	return r.adopt(ctx, l)
}

// adopt keeps link l and starts serving it.
func (r *Service) adopt(ctx context.Context, l *relayLink) (Status, error) {
	r.mu.Lock()
	if r.link != nil {
		r.mu.Unlock()
		return Status{}, fault.Conflict("this workspace is already linked to a relay; unlink it first")
	}
	if err := saveRelayLink(ctx, r.db, r.box, r.ws, l); err != nil {
		r.mu.Unlock()
		return Status{}, err
	}
	r.link = l
	maskRelay(r.vars, l)
	r.startLocked()
	r.mu.Unlock()
	if err := r.nameDevice(ctx); err != nil {
		r.log.Warn("name this device in the synced settings", "err", err)
	}
	r.log.Info("workspace linked to a relay", "relay", l.URL, "relay_workspace", l.WorkspaceID)
	r.bus.Publish(event.Change{Workspace: r.ws, Kind: KindStatus})
	return r.Status(), nil
}

// Unlink stops syncing and forgets the link. On the automations device the
// relay forgets the workspace first (its token hashes, queued deliveries,
// dead letters and change log: every device's link ends); when the relay
// cannot be reached the link is kept, unless force: then it is forgotten
// here only. Another device only forgets the link here.
func (r *Service) Unlink(ctx context.Context, force bool) error {
	r.mu.Lock()
	l := r.link
	r.mu.Unlock()
	if l == nil {
		return fault.NotFound("this workspace is not linked to a relay")
	}
	if r.replica.Active() {
		c, err := r.newClient(l, false)
		if err != nil {
			return err
		}
		ctx2, cancel := context.WithTimeout(ctx, 20*time.Second)
		err = c.Unlink(ctx2)
		cancel()
		if err != nil && !errors.Is(err, client.ErrUnauthorized) && !force {
			return relayError("unlink (to forget the link on this computer only, unlink with force)", err)
		}
	}
	r.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := deleteRelayLink(ctx, r.db); err != nil {
		r.startLocked()
		return err
	}
	r.link = nil
	r.phones.paired.Store(false)
	maskRelay(r.vars, nil)
	if err := r.replica.Disable(ctx); err != nil {
		r.log.Warn("stop syncing", "err", err)
	}
	os.Remove(filepath.Join(r.dir, client.DBFile))
	r.log.Info("workspace unlinked from its relay", "relay", l.URL)
	r.bus.Publish(event.Change{Workspace: r.ws, Kind: KindStatus})
	return nil
}

// DeadLetters lists the deliveries the relay gave up on (newest first).
func (r *Service) DeadLetters(ctx context.Context) ([]protocol.DeadLetter, error) {
	c, err := r.api()
	if err != nil {
		return nil, err
	}
	list, err := c.DeadLetters(ctx, 0)
	if err != nil {
		return nil, relayError("list the dead letters", err)
	}
	return list, nil
}

// Replay makes a dead letter due again.
func (r *Service) Replay(ctx context.Context, deliveryID string) error {
	c, err := r.api()
	if err != nil {
		return err
	}
	return relayError("replay the delivery", c.Replay(ctx, deliveryID))
}

// DropDeadLetter deletes a dead letter at the relay.
func (r *Service) DropDeadLetter(ctx context.Context, deliveryID string) error {
	c, err := r.api()
	if err != nil {
		return err
	}
	return relayError("drop the delivery", c.DropDeadLetter(ctx, deliveryID))
}

// api returns a client for the relay's API calls.
func (r *Service) api() (*client.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	if r.link == nil {
		return nil, fault.Invalid("this workspace is not linked to a relay: link it in Settings → Relay")
	}
	return r.newClient(r.link, false)
}

// ErrRelay marks a failure of the relay (unreachable, or an error answer):
// not something the person typed wrong.
var ErrRelay = errors.New("the relay failed")

// relayError says what failed; the relay's refusals the person can act on
// keep their fault kind.
func relayError(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrNotFound):
		return fault.NotFound("%s: the relay has no such delivery (it was replayed or dropped)", what)
	case errors.Is(err, client.ErrUnauthorized):
		return fault.Invalid("%s: the relay does not know this workspace id and secret", what)
	case strings.Contains(err.Error(), "link a workspace:"):
		return fault.Invalid("%s: %v", what, err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: the relay did not answer in time: %w", what, ErrRelay)
	}
	var netErr net.Error
	if errors.As(err, &netErr) || strings.Contains(err.Error(), "connection refused") {
		return fmt.Errorf("%s: the relay cannot be reached (%v): %w", what, err, ErrRelay)
	}
	return fmt.Errorf("%s: %v: %w", what, err, ErrRelay)
}
