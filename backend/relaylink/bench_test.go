package relaylink_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// BenchmarkRelayWebhookToRun measures a webhook to a trigger's public URL
// until its run is queued on the desktop (the trigger's delivery committed
// with its run), through a relay on loopback; it reports p50 and p99.
func BenchmarkRelayWebhookToRun(b *testing.B) {
	ctx := context.Background()
	rl := relaytest.Start(b, relay.Config{})
	l := rl.Link(b)
	h, w, a := served(b, workspace.Config{})
	_, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret})
	if err != nil {
		b.Fatal(err)
	}
	token, tr, err := w.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "Bench", Instruction: "x", RateLimit: trigger.MaxRateLimit})
	if err != nil {
		b.Fatal(err)
	}
	changes, unsubscribe := h.Events().Subscribe()
	defer unsubscribe()
	url := rl.URL + "/h/" + token
	for deadline := time.Now().Add(waittest.Patience); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.Post(url, "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusAccepted {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("public URL: %d", res.StatusCode)
		}
	}
	queued := func() {
		for c := range changes {
			if c.Kind == "trigger.delivery" && c.ID == tr.ID {
				return
			}
		}
	}
	queued()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := http.Post(url, "application/json", strings.NewReader(`{"n":1}`))
		if err != nil || res.StatusCode != http.StatusAccepted {
			b.Fatalf("webhook: %v %v", res, err)
		}
		res.Body.Close()
		queued()
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkSyncSoulEdit measures a soul edit on device A until device B
// has it (the change pushed, the relay's "changes" frame, B's pull and
// apply), two workspaces of two data dirs through a relay on loopback; it
// reports p50 and p99.
func BenchmarkSyncSoulEdit(b *testing.B) {
	ctx := context.Background()
	rl := relaytest.Start(b, relay.Config{})
	l := rl.Link(b)
	_, wa, ada := served(b, workspace.Config{})
	if _, err := wa.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret}); err != nil {
		b.Fatal(err)
	}
	code, err := wa.Relay.Pairing(ctx, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	hb, _, _ := served(b, workspace.Config{})
	info, err := hb.JoinWithPairing(ctx, code, "")
	if err != nil {
		b.Fatal(err)
	}
	wb, _ := hb.Workspace(info.ID)
	changes, unsubscribe := hb.Events().Subscribe()
	defer unsubscribe()
	arrived := func(soul string) {
		deadline := time.After(waittest.Patience)
		for {
			if got, err := wb.Agents.Get(ctx, ada.ID); err == nil && got.Soul == soul {
				return
			}
			select {
			case <-changes:
			case <-time.After(50 * time.Millisecond):
			case <-deadline:
				b.Fatalf("soul %q not on B after %s", soul, waittest.Patience)
			}
		}
	}
	arrived(ada.Soul)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		soul := fmt.Sprintf("Soul edit %d", i)
		start := time.Now()
		if _, err := wa.Agents.Update(ctx, ada.ID, agent.Update{Soul: &soul}); err != nil {
			b.Fatal(err)
		}
		arrived(soul)
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
