// Package browser owns each agent's Chromium: one browser process per agent
// with a persistent profile under agents/<id>/browser, started on first use
// and stopped when idle or when the workspace closes; the browser tools
// (family "browser") that drive it through numbered page snapshots; and the
// live screen of the Desktop tab (screencast frames, input dispatch, and the
// take-over/hand-back handshake between the person and the agent).
//
// It runs the Chromium or Chrome installed on the computer and never
// downloads one.
//
// Wiring: workspace.Open makes one Manager (Config.Bin from RERUN_CHROME,
// Config.Forbidden with the local server's host:port, Headless true), runs
// Serve for idle closing, Forget when an agent is deleted and Close on
// shutdown. The run loop adds Tools() and TakeoverTool (request_takeover,
// a card for the person) to an agent's tools when its capabilities include
// Family, and Guide to the capability guide; after a browser_screenshot it
// may attach the PNG from TakeImage. The Desktop screen gets a Browser from
// Start or For and uses Screencast, Input, Navigate (its address bar),
// Viewport, TakeOver, HandBack, State and Tabs.
package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// DefaultIdleTimeout is how long an agent's browser stays open with nothing
// using it.
const DefaultIdleTimeout = 10 * time.Minute

var (
	// ErrNoBrowser: no Chromium or Chrome is installed where we look (or
	// RERUN_CHROME names nothing runnable).
	ErrNoBrowser = errors.New("no Chromium or Chrome browser found")
	// ErrClosed: the Manager was closed; no browser starts any more.
	ErrClosed = errors.New("the browsers of this workspace are shut down")
	// ErrNotInControl: Input was sent while the agent, not the person, holds
	// the browser; call TakeOver first.
	ErrNotInControl = fault.Conflict("take over the browser before sending input to it")
)

// Config configures a Manager. Zero values take the documented defaults.
type Config struct {
	// AgentsDir is the workspace's agents/ folder: agents/<id>/browser is an
	// agent's Chromium profile (cookies and sign-ins survive restarts) and
	// agents/<id>/files/downloads receives its downloads.
	AgentsDir string
	// Bin is the browser executable: RERUN_CHROME when set (read by
	// envconfig), else empty to search the usual places (see FindChrome).
	Bin string
	// Headless runs Chromium without a window. The app sets it: the person
	// watches through the Desktop screen. False opens real windows, for
	// debugging.
	Headless bool
	// IdleTimeout closes a browser nobody used for this long (default
	// DefaultIdleTimeout). A browser being watched or held by the person is
	// never idle.
	IdleTimeout time.Duration
	// Forbidden lists host:port addresses pages may never load, the app's own
	// local server first among them (e.g. "127.0.0.1:7777"). A loopback or
	// localhost entry forbids every loopback name of that port (localhost,
	// *.localhost, 127.0.0.1, [::1], 0.0.0.0).
	Forbidden []string
	// Logger receives the package's logs (default: discarded).
	Logger *slog.Logger
	// Now is the clock for idle times and frame stamps (default time.Now).
	Now func() time.Time
	// OnChange, when set, is called after an agent's browser State changed
	// (started, stopped, page, take-over, last action). It must return
	// quickly; it may call State.
	OnChange func(agentID string)
}

// Manager runs the browsers of one workspace, one per agent.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	forbid forbidden

	mu       sync.Mutex
	closed   bool
	browsers map[string]*Browser

	images images
}

// New returns a Manager; no browser starts until For is called. It fails when
// a Forbidden entry is not host:port.
func New(cfg Config) (*Manager, error) {
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AgentsDir == "" {
		return nil, fmt.Errorf("browser: Config.AgentsDir is empty")
	}
	forbid, err := parseForbidden(cfg.Forbidden)
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg:      cfg,
		log:      cfg.Logger,
		now:      cfg.Now,
		forbid:   forbid,
		browsers: map[string]*Browser{},
	}, nil
}

// For returns the agent's browser, starting its Chromium if it is not
// running (first use, after an idle close, or after a crash). The returned
// *Browser stays the agent's for the Manager's life: its take-over state and
// last action survive restarts of the process behind it.
func (m *Manager) For(ctx context.Context, agentID string) (*Browser, error) {
	b, err := m.browser(agentID)
	if err != nil {
		return nil, err
	}
	if _, err := b.ensure(ctx); err != nil {
		return nil, err
	}
	return b, nil
}

// browser returns the agent's *Browser without starting anything.
func (m *Manager) browser(agentID string) (*Browser, error) {
	if err := checkAgentID(agentID); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	b := m.browsers[agentID]
	if b == nil {
		b = newBrowser(m, agentID)
		m.browsers[agentID] = b
	}
	return b, nil
}

// Lookup returns the agent's browser if one was ever asked for, without
// starting it.
func (m *Manager) Lookup(agentID string) (*Browser, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.browsers[agentID]
	return b, ok
}

// checkAgentID refuses ids that would escape agents/ when joined to it.
func checkAgentID(id string) error {
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, `/\:`+"\x00") || filepath.Base(id) != id {
		return fault.Invalid("agent id %q cannot name a browser profile", id)
	}
	return nil
}

// Close stops every browser and waits for their processes to exit. After
// Close, For returns ErrClosed.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	all := make([]*Browser, 0, len(m.browsers))
	for _, b := range m.browsers {
		all = append(all, b)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, b := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = b.shutdown()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Serve closes idle browsers until ctx ends; it returns nil then. It does
// not close the running ones: Close does.
func (m *Manager) Serve(ctx context.Context) error {
	every := min(max(m.cfg.IdleTimeout/10, time.Second), 30*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			m.reapIdle()
		}
	}
}

// reapIdle stops the browsers idle for longer than the idle timeout.
func (m *Manager) reapIdle() {
	m.mu.Lock()
	all := make([]*Browser, 0, len(m.browsers))
	for _, b := range m.browsers {
		all = append(all, b)
	}
	m.mu.Unlock()
	now := m.now()
	for _, b := range all {
		if b.idleSince(now) >= m.cfg.IdleTimeout {
			m.log.Info("closing idle browser", "agent", b.agentID)
			b.stopProc(stopIdle)
		}
	}
}

func (m *Manager) changed(agentID string) {
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(agentID)
	}
}
