package relay_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// BenchmarkIntake sends webhooks in parallel over loopback HTTP to a durable
// 202 (the delivery committed; SQLite with synchronous=FULL in process, or
// one and two rerun-relay processes on PostgreSQL when RERUN_TEST_POSTGRES
// is set, the senders taking turns between them as a load balancer
// would), and reports requests a second and the latency percentiles.
func BenchmarkIntake(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) {
		store, err := relay.OpenSQLite(context.Background(), filepath.Join(b.TempDir(), "relay.db"))
		if err != nil {
			b.Fatal(err)
		}
		r := relaytest.StartOn(b, store, relay.Config{})
		r.Link(b, "tok")
		benchIntake(b, r.URL)
	})
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("postgres-%dproc", n), func(b *testing.B) {
			u := postgresSchema(b)
			benchIntake(b, relayProcesses(b, u, n, "tok")...)
		})
	}
}

func benchIntake(b *testing.B, relays ...string) {
	body := `{"type":"order.created","data":{"id":"ord_123","amount":4200,"currency":"eur","customer":"cus_9"}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(8) // 16 concurrent senders on 2 cores
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for i := 0; pb.Next(); i++ {
			req, _ := http.NewRequest(http.MethodPost, relays[i%len(relays)]+"/h/tok", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("webhook-id", fmt.Sprintf("msg_%p_%d", &mine, i))
			t0 := time.Now()
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			mine = append(mine, time.Since(t0))
			if res.StatusCode != http.StatusAccepted {
				b.Errorf("status %d, want 202", res.StatusCode)
				return
			}
		}
		mu.Lock()
		latencies = append(latencies, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(latencies) == 0 {
		return
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(len(latencies))/elapsed.Seconds(), "req/s")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
