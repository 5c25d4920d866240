package browser

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func TestCrashedBrowserRestarts(t *testing.T) {
	s, m, env := setup(t, "crash")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	b, _ := m.Lookup("crash")
	p := b.running()
	killTree(p.pid) // as if Chromium crashed
	select {
	case <-p.done:
	case <-time.After(waittest.Patience):
		t.Fatal("the connection did not notice the dead browser")
	}
	out := must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/next"})
	if !strings.HasPrefix(out, "Your browser had stopped unexpectedly and was started again") || !strings.Contains(out, `("Next")`) {
		t.Errorf("first result after the crash = %q, want the restart noted and the page opened", out)
	}
	if np := b.running(); np == nil || np.pid == p.pid {
		t.Fatalf("no new browser after the crash")
	}
	if treeAlive(p.pid) {
		t.Errorf("processes of the crashed browser %d are left", p.pid)
	}
	if out := must(t, m, env, "browser_tabs", nil); strings.Contains(out, "stopped") {
		t.Errorf("the restart note came twice: %q", out)
	}
}

func TestProfilePersistsAcrossRestarts(t *testing.T) {
	app, _ := appServer(t)
	s := newSite(t, app)
	dir := t.TempDir()
	env := agentEnv("keeper", nil)
	first := testManager(t, func(c *Config) { c.AgentsDir = dir })
	must(t, first, env, "browser_open", map[string]any{"url": s.URL + "/cookie"})
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := testManager(t, func(c *Config) { c.AgentsDir = dir })
	must(t, second, env, "browser_open", map[string]any{"url": s.URL + "/cookie"})
	s.mu.Lock()
	got := s.cookies
	s.mu.Unlock()
	if len(got) != 1 || got[0] != "kept-42" {
		t.Errorf("cookies the site got back after a restart = %q, want [kept-42]", got)
	}
}

// clock is a settable clock for idle times.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestIdleBrowserCloses(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)}
	m := testManager(t, func(c *Config) { c.Now = clk.Now; c.IdleTimeout = 5 * time.Minute })
	env := agentEnv("idle", nil)
	must(t, m, env, "browser_open", map[string]any{"url": "about:blank"})
	b, _ := m.Lookup("idle")
	p := b.running()

	clk.add(4 * time.Minute)
	m.reapIdle()
	if b.running() == nil {
		t.Fatal("closed after 4 minutes of a 5-minute idle timeout")
	}

	// Watched or held by the person, it is never idle.
	b.TakeOver()
	clk.add(time.Hour)
	m.reapIdle()
	if b.running() == nil {
		t.Fatal("closed while the person holds it")
	}
	b.HandBack()
	ctx, cancel := context.WithCancel(t.Context())
	watching := make(chan struct{})
	go func() { b.Screencast(ctx, func(Frame) {}); close(watching) }()
	waitUntil(t, func() bool { return b.idleSince(clk.Now()) == 0 })
	clk.add(time.Hour)
	m.reapIdle()
	if b.running() == nil {
		t.Fatal("closed while watched")
	}
	cancel()
	<-watching

	clk.add(6 * time.Minute)
	m.reapIdle()
	if b.running() != nil {
		t.Fatal("still running after 6 idle minutes")
	}
	if treeAlive(p.pid) {
		t.Errorf("the idle browser's processes %d are left", p.pid)
	}
	out := must(t, m, env, "browser_tabs", nil)
	if !strings.HasPrefix(out, "Your browser had been closed after 5 minutes unused and was started again") {
		t.Errorf("first result after the idle close = %q", out)
	}
}

// waitUntil polls cond for up to 10 s.
func waitUntil(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(waittest.Patience); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", waittest.Patience)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
