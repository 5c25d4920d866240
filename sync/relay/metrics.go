package relay

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// metrics are the relay's counters, served at /metrics in the Prometheus
// text format (written by hand: a dozen metrics do not need a client
// library).
type metrics struct {
	mu       sync.Mutex
	webhooks map[int]int64 // answers by status code

	sent, acked, refused, retried, expired atomic.Int64
	changes                                atomic.Int64 // pushed through this process
	pushes                                 atomic.Int64 // Web Push messages push services took

	latency histogram // intake → ack
}

func (m *metrics) init() {
	m.webhooks = map[int]int64{}
	// From a desktop that is online (milliseconds) to one that was asleep
	// for days.
	m.latency.bounds = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400, 7 * 86400}
	m.latency.counts = make([]int64, len(m.latency.bounds))
}

func (m *metrics) webhook(status int) {
	m.mu.Lock()
	m.webhooks[status]++
	m.mu.Unlock()
}

type histogram struct {
	mu     sync.Mutex
	bounds []float64 // upper bounds, seconds
	counts []int64   // per bucket, not cumulative
	sum    float64
	n      int64
}

func (h *histogram) observe(d time.Duration) {
	v := d.Seconds()
	h.mu.Lock()
	defer h.mu.Unlock()
	if i, _ := slices.BinarySearch(h.bounds, v); i < len(h.bounds) {
		h.counts[i]++
	}
	h.sum += v
	h.n++
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	st, err := s.store.Stats(ctx)
	if err != nil {
		s.log.Error("metrics: count deliveries", "err", err)
		st = Stats{-1, -1, -1, -1} // visible, and the other metrics still served
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	m := &s.metrics

	head(w, "rerun_relay_webhooks_total", "counter", "Webhook calls answered, by HTTP status.")
	m.mu.Lock()
	codes := make([]int, 0, len(m.webhooks))
	for c := range m.webhooks {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	for _, c := range codes {
		fmt.Fprintf(w, "rerun_relay_webhooks_total{code=\"%d\"} %d\n", c, m.webhooks[c])
	}
	m.mu.Unlock()

	head(w, "rerun_relay_deliveries_total", "counter",
		"Deliveries: frames sent to desktops, and how they ended (acked, refused, retried after a nack, expired to the dead-letter list).")
	for _, c := range []struct {
		result string
		n      *atomic.Int64
	}{{"sent", &m.sent}, {"acked", &m.acked}, {"refused", &m.refused}, {"retried", &m.retried}, {"expired", &m.expired}} {
		fmt.Fprintf(w, "rerun_relay_deliveries_total{result=%q} %d\n", c.result, c.n.Load())
	}

	head(w, "rerun_relay_queue_depth", "gauge", "Deliveries stored and not yet acked (all relay processes of the store).")
	fmt.Fprintf(w, "rerun_relay_queue_depth %d\n", st.Pending)
	head(w, "rerun_relay_dead_letters", "gauge", "Deliveries past their retention, kept for a replay.")
	fmt.Fprintf(w, "rerun_relay_dead_letters %d\n", st.DeadLetters)
	workspaces, devices := s.hub.count()
	head(w, "rerun_relay_connected_workspaces", "gauge", "Workspaces with at least one device connected to this relay process.")
	fmt.Fprintf(w, "rerun_relay_connected_workspaces %d\n", workspaces)
	head(w, "rerun_relay_connected_devices", "gauge", "Device sockets connected to this relay process.")
	fmt.Fprintf(w, "rerun_relay_connected_devices %d\n", devices)

	head(w, "rerun_relay_changes_total", "counter", "Changes pushed through this relay process.")
	fmt.Fprintf(w, "rerun_relay_changes_total %d\n", m.changes.Load())
	head(w, "rerun_relay_change_records", "gauge", "Records of all change logs (the latest change of each key; all relay processes of the store).")
	fmt.Fprintf(w, "rerun_relay_change_records %d\n", st.Changes)
	head(w, "rerun_relay_change_bytes", "gauge", "Sealed bytes of the change logs' records stored.")
	fmt.Fprintf(w, "rerun_relay_change_bytes %d\n", st.ChangeBytes)

	head(w, "rerun_relay_phone_pushes_total", "counter", "Web Push messages to phones that their push services took (this process).")
	fmt.Fprintf(w, "rerun_relay_phone_pushes_total %d\n", m.pushes.Load())

	h := &m.latency
	head(w, "rerun_relay_delivery_latency_seconds", "histogram", "From a webhook's intake to the desktop's ack.")
	h.mu.Lock()
	var cum int64
	for i, b := range h.bounds {
		cum += h.counts[i]
		fmt.Fprintf(w, "rerun_relay_delivery_latency_seconds_bucket{le=%q} %d\n", strconv.FormatFloat(b, 'g', -1, 64), cum)
	}
	fmt.Fprintf(w, "rerun_relay_delivery_latency_seconds_bucket{le=\"+Inf\"} %d\n", h.n)
	fmt.Fprintf(w, "rerun_relay_delivery_latency_seconds_sum %s\n", strconv.FormatFloat(math.Round(h.sum*1e6)/1e6, 'g', -1, 64))
	fmt.Fprintf(w, "rerun_relay_delivery_latency_seconds_count %d\n", h.n)
	h.mu.Unlock()
}

func head(w io.Writer, name, kind, help string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}
