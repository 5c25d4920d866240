package browser

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// BenchmarkBrowserStart measures starting an agent's browser on a fresh
// profile (launch, DevTools connection, first tab) and stopping it.
func BenchmarkBrowserStart(b *testing.B) {
	needChrome(b)
	var start, stop time.Duration
	n := 0
	for b.Loop() {
		m := testManager(b)
		t0 := time.Now()
		if _, err := m.For(context.Background(), "bench"); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		start += t1.Sub(t0)
		stop += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(start.Milliseconds())/float64(n), "ms/start")
	b.ReportMetric(float64(stop.Milliseconds())/float64(n), "ms/stop")
}

// BenchmarkBrowserRestart measures starting an agent's browser on the
// profile it used before (after an idle close or an app restart).
func BenchmarkBrowserRestart(b *testing.B) {
	needChrome(b)
	dir := b.TempDir()
	warm := testManager(b, func(c *Config) { c.AgentsDir = dir })
	if _, err := warm.For(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	warm.Close()
	var start time.Duration
	n := 0
	for b.Loop() {
		m := testManager(b, func(c *Config) { c.AgentsDir = dir })
		t0 := time.Now()
		if _, err := m.For(context.Background(), "bench"); err != nil {
			b.Fatal(err)
		}
		start += time.Since(t0)
		n++
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(start.Milliseconds())/float64(n), "ms/start")
}

// BenchmarkScreencast measures the Desktop screen: frames per second of a
// page that animates every frame, and the time from a person's click to
// the first frame showing its effect.
func BenchmarkScreencast(b *testing.B) {
	s, m, env := setup(b, "cast")
	must(b, m, env, "browser_open", map[string]any{"url": s.URL + "/anim"})
	br, _ := m.Lookup("cast")
	ch := frames(b, br)
	frameWhere(b, ch, func(f Frame) bool { return strings.HasSuffix(f.URL, "/anim") })

	const window = 2 * time.Second
	var nframes int
	var spent time.Duration
	var lat []time.Duration
	for b.Loop() {
		// Frames per second.
		t0 := time.Now()
		end := time.After(window)
	count:
		for {
			select {
			case <-ch:
				nframes++
			case <-end:
				break count
			}
		}
		spent += time.Since(t0)
	}
	b.ReportMetric(float64(nframes)/spent.Seconds(), "fps")

	// Input → the first frame showing its effect, on a still page that
	// turns black or white at each mousedown. A frame still showing the
	// colour before the click (one on its way when it was sent) does not
	// count, and the next click waits for this one's frame: two clicks
	// painted in one frame would cancel out and show nothing.
	must(b, m, env, "browser_open", map[string]any{"url": s.URL + "/toggle"})
	frameWhere(b, ch, func(f Frame) bool { return strings.HasSuffix(f.URL, "/toggle") })
	br.TakeOver()
	defer br.HandBack()
	ctx := context.Background()
	black := false // the page starts white
	for i := 0; i < 40; i++ {
		time.Sleep(50 * time.Millisecond)
		black = !black
		t0 := time.Now()
		if err := br.Input(ctx, Event{Type: "mousedown", X: 300, Y: 300}); err != nil {
			b.Fatal(err)
		}
		frameWhere(b, ch, func(f Frame) bool { return isBlack(f) == black })
		lat = append(lat, time.Since(t0))
		if err := br.Input(ctx, Event{Type: "mouseup", X: 300, Y: 300}); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(lat))/1000, "ms/input-frame")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms/input-frame-p95")
}
