package trigger_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// BenchmarkIntake sends calls in parallel over loopback HTTP through the
// handler to a durable 202 (delivery recorded, run queued in SQLite with
// synchronous=FULL), each with its own webhook-id. It reports requests a
// second and the latency percentiles.
func BenchmarkIntake(b *testing.B) {
	e := newEnv(b)
	svc := trigger.NewService(trigger.Deps{DB: e.db, Workspace: "ws", Runs: triggerRuns{e.runs}}, trigger.Config{})
	e.use(svc)
	token, _, err := svc.Create(context.Background(), trigger.NewTrigger{AgentID: e.agent, Name: "Load",
		Instruction: "Count it.", RateLimit: trigger.MaxRateLimit})
	if err != nil {
		b.Fatal(err)
	}
	url := e.srv.URL + "/hooks/" + token
	body := `{"type":"order.created","data":{"id":"ord_123","amount":4200,"currency":"eur","customer":"cus_9"}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	var seq atomic.Int64
	var mu sync.Mutex
	var latencies []time.Duration
	b.SetParallelism(8) // 16 concurrent callers on 2 cores
	b.ResetTimer()
	commits := e.db.Commits()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			req, _ := http.NewRequest("POST", url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("webhook-id", fmt.Sprintf("msg_%d", seq.Add(1)))
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
	b.ReportMetric(float64(e.db.Commits()-commits)/float64(len(latencies)), "commits/req")
	b.ReportMetric(ms(latencies[len(latencies)/2]), "p50-ms")
	b.ReportMetric(ms(latencies[len(latencies)*99/100]), "p99-ms")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
