package relaylink_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// waitRelay polls w's relay status until ok says yes.
func waitRelay(t *testing.T, w *workspace.Workspace, what string, ok func(relaylink.Status) bool) relaylink.Status {
	t.Helper()
	deadline := time.Now().Add(waittest.Patience)
	for {
		s := w.Relay.Status()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("relay status %+v: not %s after %s", s, what, waittest.Patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Linked with the relay's signup token, a trigger's public URL reaches the
// trigger intake in process: one run per delivery.
func TestRelayLinkDeliversPublicWebhooks(t *testing.T) {
	ctx := context.Background()
	rl := relaytest.Start(t, relay.Config{SignupToken: "signup-1"})
	h, w, a := served(t, workspace.Config{})
	changes, unsubscribe := h.Events().Subscribe()
	defer unsubscribe()

	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, SignupToken: "wrong"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("link with a wrong signup token: %v, want invalid", err)
	}
	st, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL + "/", SignupToken: "signup-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Linked || st.HookBase != rl.URL+"/h/" || st.DeviceID == "" || !st.AutomationsDevice {
		t.Fatalf("status after link %+v, want linked with the relay's hook base", st)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, SignupToken: "signup-1"}); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("second link: %v, want a conflict", err)
	}
	waitRelay(t, w, "connected", func(s relaylink.Status) bool { return s.Connected })
	published := false
	for !published {
		select {
		case c := <-changes:
			published = c.Kind == relaylink.KindStatus && c.Workspace == w.Info().ID
		case <-time.After(waittest.Patience):
			t.Fatal("no relay.status change published")
		}
	}

	// The secret is kept sealed: it is nowhere in the workspace's files.
	var row string
	if err := w.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'relay'`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(row, st.RelayWorkspaceID) || strings.Contains(row, "rrs_") {
		t.Errorf("stored link %s: want the relay's workspace id, and no plaintext secret", row)
	}

	// A trigger created now is registered with the relay (its hash), and
	// its public URL starts a run.
	token, tr, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "Orders", Instruction: "File it."})
	if err != nil {
		t.Fatal(err)
	}
	var res *http.Response
	deadline := time.Now().Add(waittest.Patience)
	for {
		res, err = http.Post(st.HookBase+token, "application/json", strings.NewReader(`{"order":7}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the hashes are on their way
	}
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("POST to the public URL: %d, want 202", res.StatusCode)
	}
	waitRelay(t, w, "delivered", func(s relaylink.Status) bool { return s.Delivered == 1 && s.LastDelivery != nil })
	runs, err := w.Runs.List(ctx, run.ListOptions{SessionID: tr.SessionID})
	if err != nil || len(runs) != 1 || !strings.Contains(runs[0].Input, `"order":7`) {
		t.Fatalf("runs %v (%v), want one with the payload", runs, err)
	}

	// A deleted trigger's public URL answers 404 once the relay is told.
	if err := w.Triggers.Delete(ctx, tr.ID); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(waittest.Patience)
	for {
		res, err := http.Post(st.HookBase+token, "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("public URL of a deleted trigger: %d after %s, want 404", res.StatusCode, waittest.Patience)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// Unlink: the relay forgets the workspace, and so does the desktop.
	if err := w.Relay.Unlink(ctx, false); err != nil {
		t.Fatal(err)
	}
	if s := w.Relay.Status(); s.Linked || s.HookBase != "" {
		t.Errorf("status after unlink %+v, want not linked", s)
	}
	if _, err := os.Stat(filepath.Join(w.Dir, "relay-client.db")); !os.IsNotExist(err) {
		t.Errorf("relay-client.db after unlink: %v, want it gone", err)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: st.RelayWorkspaceID, Secret: "rrs_gone"}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("link with a forgotten workspace's id: %v, want invalid", err)
	}
}

// A link made with the operator's workspace id and secret survives a
// restart of the app: the secret is opened again from its sealed copy.
func TestRelayLinkSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	rl := relaytest.Start(t, relay.Config{})
	l := rl.Link(t)
	dir := t.TempDir()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := h.Workspace(h.Current())
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret + "x"}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("link with a wrong secret: %v, want invalid", err)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: "http://relay.example.com", WorkspaceID: l.WorkspaceID, Secret: l.Secret}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("link over plain http to another computer: %v, want invalid", err)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret}); err != nil {
		t.Fatal(err)
	}
	h.Close()

	h, err = workspace.Open(ctx, workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { h.Serve(sctx); close(done) }()
	defer func() { stop(); <-done; h.Close() }()
	w, _ = h.Workspace(h.Current())
	s := waitRelay(t, w, "connected after a restart", func(s relaylink.Status) bool { return s.Connected })
	if s.RelayWorkspaceID != l.WorkspaceID || s.HookBase != rl.URL+"/h/" {
		t.Errorf("status %+v, want the same link and the hook base from the relay's hello", s)
	}
	list, err := w.Relay.DeadLetters(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("dead letters %v %v, want none", list, err)
	}
	if err := w.Relay.Replay(ctx, "dlv_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("replay of an unknown delivery: %v, want not found", err)
	}
}
