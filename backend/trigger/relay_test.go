package trigger_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

func TestTokenHashes(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	first, tr := e.create(trigger.NewTrigger{})
	other, _ := e.create(trigger.NewTrigger{Name: "other"})
	second, _, err := e.svc.Rotate(ctx, tr.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.svc.TokenHashes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{protocol.TokenHash(first), protocol.TokenHash(second), protocol.TokenHash(other)}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("hashes %v, want %v (current, in grace, other trigger)", got, want)
	}
	e.clock.Add(time.Hour + time.Second)
	got, _ = e.svc.TokenHashes(ctx)
	if len(got) != 2 || slices.Contains(got, protocol.TokenHash(first)) {
		t.Errorf("after the grace period: %v, want the rotated-out hash gone", got)
	}
}

// relayDeliver is the intake as the relay client calls it.
func relayDeliver(svc *trigger.Service) func(context.Context, client.Delivery) (string, error) {
	return client.HandlerDeliver(svc.RelayHandler(), func(d client.Delivery) string { return "/" + d.TokenHash })
}

func TestRelayIntake(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	token, tr := e.create(trigger.NewTrigger{Methods: []string{"POST"}, RateLimit: 1000})
	_, paused := e.create(trigger.NewTrigger{Name: "paused", Enabled: ptr(false)})
	pausedToken, _, _ := e.svc.Rotate(ctx, paused.ID, 0)
	deliver := relayDeliver(e.svc)
	d := func(id, tok, method, body string) client.Delivery {
		return client.Delivery{ID: id, TokenHash: protocol.TokenHash(tok), Method: method, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(body), ReceivedAt: e.clock.Now()}
	}

	runID, err := deliver(ctx, d("dlv_1", token, "POST", `{"order":42}`))
	if err != nil || runID == "" {
		t.Fatalf("deliver: run %q, err %v; want a run", runID, err)
	}
	again, err := deliver(ctx, d("dlv_1", token, "POST", `{"order":42}`))
	if err != nil || again != runID {
		t.Errorf("same delivery again: run %q, err %v; want the same run %q", again, err, runID)
	}
	runs := e.sessionRuns(tr)
	if len(runs) != 1 || !strings.Contains(runs[0].Input, `"order":42`) {
		t.Fatalf("%d runs (%v), want one with the payload", len(runs), runs)
	}

	cases := []struct {
		name    string
		d       client.Delivery
		refused bool
	}{
		{"unknown token", d("dlv_2", "rrh_"+strings.Repeat("b", 52), "POST", "{}"), true},
		{"not a hash", client.Delivery{ID: "dlv_3", TokenHash: "../hooks/" + token, Method: "POST"}, true},
		{"method not allowed", d("dlv_4", token, "PUT", "{}"), true},
		{"body too large", d("dlv_5", token, "POST", strings.Repeat("a", 1<<20+1)), true},
		{"paused: retried", d("dlv_6", pausedToken, "POST", "{}"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id, err := deliver(ctx, tc.d)
			if err == nil || id != "" {
				t.Fatalf("run %q, err %v; want an error", id, err)
			}
			if got := errors.Is(err, client.ErrRefused); got != tc.refused {
				t.Errorf("refused = %v (%v), want %v", got, err, tc.refused)
			}
		})
	}
	if n := len(e.sessionRuns(tr)); n != 1 {
		t.Errorf("%d runs after the refusals, want still 1", n)
	}
}

// A token's hash is what the relay knows: it must open nothing on the
// local server.
func TestHashIsNoCredential(t *testing.T) {
	e := newEnv(t)
	token, tr := e.create(trigger.NewTrigger{})
	for _, p := range []string{protocol.TokenHash(token), "rrh_" + protocol.TokenHash(token)} {
		if r := e.call("POST", p, "{}"); r.status != http.StatusNotFound {
			t.Errorf("POST /hooks/%s…: %d, want 404", p[:12], r.status)
		}
	}
	if n := len(e.sessionRuns(tr)); n != 0 {
		t.Errorf("%d runs, want 0", n)
	}
}
