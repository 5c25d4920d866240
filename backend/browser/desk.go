package browser

import (
	"context"
	"fmt"
)

// Tab is one open tab, for the Desktop panel.
type Tab struct {
	ID     int    `json:"id"` // the number browser_tabs shows the agent
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active"` // the current tab: the one the screen shows
}

// Tabs lists the open tabs in the order they were opened; none when the
// browser is not running.
func (b *Browser) Tabs() []Tab {
	p := b.running()
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Tab, 0, len(p.tabs))
	for _, t := range p.tabs {
		out = append(out, Tab{ID: t.id, URL: t.url, Title: t.title, Active: t == p.active})
	}
	return out
}

// Start returns the agent's browser, starting it when it is not running.
// A browser this call started opens url (when set) in its first tab, as
// browser_open would, refusing the same addresses; a browser already
// running is left on its page, and so is one whose agent started a tool
// meanwhile.
func (m *Manager) Start(ctx context.Context, agentID, url string) (*Browser, error) {
	b, err := m.browser(agentID)
	if err != nil {
		return nil, err
	}
	if url != "" {
		if _, err := m.forbid.checkURL(url); err != nil {
			return nil, err
		}
	}
	fresh := b.running() == nil
	p, err := b.ensure(ctx)
	if err != nil || !fresh || url == "" {
		return b, err
	}
	select {
	case b.sem <- struct{}{}: // the agent's tools wait meanwhile
	default:
		return b, nil
	}
	defer func() { <-b.sem }()
	if _, err := (&op{b: b, p: p}).open(ctx, url, false); err != nil {
		return b, fmt.Errorf("open %s in the agent's browser: %w", cutURL(url, 200), err)
	}
	b.touch()
	return b, nil
}

// Forget stops the agent's browser for good and forgets it: the agent was
// deleted. Its tools and viewers end with ErrClosed. The profile folder is
// the caller's to remove, once this returned (the process no longer holds
// it).
func (m *Manager) Forget(agentID string) error {
	m.mu.Lock()
	b := m.browsers[agentID]
	delete(m.browsers, agentID)
	m.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.shutdown()
}
