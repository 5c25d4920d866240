package client_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// BenchmarkDeliveryLatency measures, on loopback, from a webhook sent to the
// relay to its run queued on the connected desktop (Deliver returned from
// the stand-in intake, which commits to SQLite): the relay's durable 202,
// the signed frame over the WebSocket, the desktop's check and its intake.
// One webhook at a time; p50 and p99 in milliseconds.
func BenchmarkDeliveryLatency(b *testing.B) {
	r := relaytest.Start(b, relay.Config{})
	l := r.Link(b, "tok")
	queued := make(chan time.Time, 1)
	d := startDesktop(b, r.URL, l, []string{"tok"}, func(c *client.Config) {
		deliver := c.Deliver
		c.Deliver = func(ctx context.Context, d client.Delivery) (string, error) {
			run, err := deliver(ctx, d)
			queued <- time.Now()
			return run, err
		}
	})
	waittest.Until(b, "not connected", func() bool { return d.Status().Connected })
	body := `{"type":"order.created","data":{"id":"ord_123","amount":4200,"currency":"eur","customer":"cus_9"}}`
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if got := post(b, r.URL+"/h/tok", body, http.Header{"Content-Type": {"application/json"}}); got != http.StatusAccepted {
			b.Fatalf("got %d, want 202", got)
		}
		select {
		case at := <-queued:
			latencies = append(latencies, at.Sub(t0))
		case <-time.After(waittest.Patience):
			b.Fatal("not delivered")
		}
	}
	b.StopTimer()
	slices.Sort(latencies)
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
