package relaylink_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// waitFor polls cond for up to 15 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waittest.Patience); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, waittest.Patience)
		}
	}
}

// A linked workspace pairs a second device (another data dir): the code
// joins it there, A's agents and soul edits arrive, only A takes the
// webhooks until the person moves them to B, and the status says so.
func TestRelayPairAndJoin(t *testing.T) {
	ctx := context.Background()
	rl := relaytest.Start(t, relay.Config{})
	l := rl.Link(t)
	_, a, ada := served(t, workspace.Config{})
	if _, err := a.Relay.Pairing(ctx, "Acme"); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("pairing before linking: %v, want invalid", err)
	}
	st, err := a.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret})
	if err != nil {
		t.Fatal(err)
	}
	if !st.AutomationsDevice || st.AutomationsDeviceID != st.DeviceID || st.Sync == nil || !st.Sync.Enabled {
		t.Fatalf("status after linking %+v: want this device automations and sync enabled", st)
	}
	code, err := a.Relay.Pairing(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	p, err := client.ParsePairing(code)
	if err != nil || p.Workspace != a.Info().ID || p.WorkspaceID != l.WorkspaceID || len(p.SyncKey) != 32 {
		t.Fatalf("pairing %v %v: want this workspace, the relay's id and a 32-byte key", p, err)
	}

	hb, _, _ := served(t, workspace.Config{})
	for name, tc := range map[string]struct {
		code string
		want error
	}{
		"not a code":     {"hello", fault.ErrInvalid},
		"damaged":        {code[:len(code)-9], fault.ErrInvalid},
		"wrong secret":   {client.Pairing{RelayURL: p.RelayURL, WorkspaceID: p.WorkspaceID, Secret: "rrs_nope", SyncKey: p.SyncKey, Workspace: p.Workspace}.Code(), fault.ErrInvalid},
		"plain http far": {client.Pairing{RelayURL: "http://relay.example.com", WorkspaceID: p.WorkspaceID, Secret: p.Secret, SyncKey: p.SyncKey, Workspace: p.Workspace}.Code(), fault.ErrInvalid},
	} {
		if _, err := hb.JoinWithPairing(ctx, tc.code, ""); !errors.Is(err, tc.want) {
			t.Errorf("join with %s: %v, want %v", name, err, tc.want)
		}
	}
	if _, err := hb.Workspace(a.Info().ID); err == nil {
		t.Fatal("a refused code made the workspace anyway")
	}
	info, err := hb.JoinWithPairing(ctx, " "+code[:40]+"\n"+code[40:], "")
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != a.Info().ID {
		t.Fatalf("joined %s, want %s", info.ID, a.Info().ID)
	}
	if _, err := hb.JoinWithPairing(ctx, code, ""); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("joining twice: %v, want conflict", err)
	}
	b, _ := hb.Workspace(info.ID)
	waitFor(t, "A's agent on B", func() bool { got, err := b.Agents.Get(ctx, ada.ID); return err == nil && got.Name == "Ada" })
	soul := "You answer in haiku."
	if _, err := a.Agents.Update(ctx, ada.ID, agent.Update{Soul: &soul}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the soul edit on B", func() bool { got, _ := b.Agents.Get(ctx, ada.ID); return got.Soul == soul })

	sb := b.Relay.Status()
	if sb.AutomationsDevice || sb.AutomationsDeviceID != st.DeviceID || sb.DeviceID == st.DeviceID {
		t.Fatalf("B's status %+v: want another device, not the automations one (A %s)", sb, st.DeviceID)
	}
	waitFor(t, "both devices known on A", func() bool { return len(a.Relay.Status().Devices) == 2 })
	if _, err := a.Relay.SetAutomationsDevice(ctx, "dev_unknown"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("an unknown automations device: %v, want invalid", err)
	}
	if _, err := a.Relay.SetAutomationsDevice(ctx, sb.DeviceID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "B takes the webhooks", func() bool { return b.Relay.Status().AutomationsDevice })
	if a.Relay.Status().AutomationsDevice {
		t.Error("A still takes the webhooks after moving them to B")
	}
	waitFor(t, "B synced, nothing pending", func() bool {
		s := b.Relay.Status().Sync
		return s != nil && s.Pending == 0 && s.LastSync != nil && s.LastError == ""
	})
}
