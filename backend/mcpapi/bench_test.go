package mcpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
)

// BenchmarkListAgents is `tools/call list_agents` over loopback HTTP, as a
// curl-style stateless POST, with 20 agents. Reports calls/s, p99 and the
// allocations of a call (client and server; make bench measures 16
// callers in sessions against the reference server).
func BenchmarkListAgents(b *testing.B) {
	e := newEnv(b)
	boxes, _ := e.ws.Boxes.List(context.Background())
	for i := 0; i < 20; i++ {
		if _, err := e.ws.Agents.Create(context.Background(), agent.NewAgent{Name: fmt.Sprint("Agent ", i), BoxID: boxes[0].ID}); err != nil {
			b.Fatal(err)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", e.srv.URL+mcpapi.Path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		t0 := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		lat = append(lat, time.Since(t0))
		if res.StatusCode != 200 || !strings.Contains(string(out), "agent-19") {
			b.Fatalf("answer %d: %.200s", res.StatusCode, out)
		}
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
