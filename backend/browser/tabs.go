package browser

// The browser's tabs: page targets, which one is current, attaching to
// them and reading their address and title.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// tab is one page target of the browser.
type tab struct {
	id     int
	target proto.TargetTargetID
	page   *rod.Page // attached session; nil until attached, then never changed (see attach)
	opener proto.TargetTargetID

	// The rest is guarded by proc.mu.
	url, title  string
	docs        int // documents committed in the main frame
	navs        int // main-frame navigations, same-document ones included
	requested   int // navigations the page asked for (links, forms, scripts)
	loading     bool
	stops       int            // main-frame loads that ended (with or without a new document)
	blockedNav  string         // the forbidden address the main frame last tried to load
	seenNavs    int            // navs when the last tool call ended (browser_wait navigation)
	refs        []*rod.Element // elements of the last snapshot, numbered from 1
	descs       []string       // their role and name, as the snapshot showed them
	refsValid   bool
	staleReason string
	snap        string    // the last snapshot's full text, for paging with offset
	infoAt      time.Time // when freshen last asked for the address and title
	infoDue     bool      // a freshen is scheduled
	back, fwd   bool      // the tab has an earlier / a later page (the Desktop's Back and Forward)

	histMu sync.Mutex // one history read at a time, so a later read's answer is the one kept
}

// addTab records a page target and attaches to it. A tab the current tab
// opened (a link with target=_blank, window.open) becomes the current tab,
// as it does in a browser window.
func (p *proc) addTab(info *proto.TargetTargetInfo) *tab {
	p.mu.Lock()
	if t := p.tabByTarget(info.TargetID); t != nil {
		p.mu.Unlock()
		return t
	}
	p.nextTab++
	t := &tab{id: p.nextTab, target: info.TargetID, opener: info.OpenerID, url: info.URL, title: info.Title}
	p.tabs = append(p.tabs, t)
	switchTo := p.active == nil || info.OpenerID != "" && p.active.target == info.OpenerID
	if switchTo {
		if p.active != nil {
			p.notes = append(p.notes, fmt.Sprintf("The page opened a new tab (tab %d), which is now the current tab; browser_tabs lists the tabs.", t.id))
		}
		p.active = t
	}
	p.mu.Unlock()
	// Never wait for Chromium on the event loop: attaching a tab whose first
	// request the guard paused waits for that request, which only the event
	// loop answers.
	go func() {
		if err := p.attach(t); err != nil {
			p.b.m.log.Debug("attach to tab", "agent", p.b.agentID, "err", err)
		}
		if switchTo {
			p.b.updateCast()
		}
	}()
	p.b.changed()
	return t
}

// removeTab forgets a closed tab; when it was the current one the most
// recently opened remaining tab takes its place.
func (p *proc) removeTab(id proto.TargetTargetID) {
	p.mu.Lock()
	var gone *tab
	for i, t := range p.tabs {
		if t.target == id {
			gone = t
			p.tabs = append(p.tabs[:i], p.tabs[i+1:]...)
			break
		}
	}
	if gone == nil {
		p.mu.Unlock()
		return
	}
	switched := false
	if p.active == gone {
		p.active = nil
		if n := len(p.tabs); n > 0 {
			p.active = p.tabs[n-1]
		}
		switched = true
	}
	if p.casting == gone {
		p.casting = nil
	}
	p.mu.Unlock()
	if switched {
		go p.b.updateCast()
	}
	p.b.changed()
}

func (p *proc) tabByTarget(id proto.TargetTargetID) *tab {
	for _, t := range p.tabs {
		if t.target == id {
			return t
		}
	}
	return nil
}

func (p *proc) tabBySession(s proto.TargetSessionID) *tab {
	for _, t := range p.tabs {
		if t.page != nil && t.page.SessionID == s {
			return t
		}
	}
	return nil
}

func (p *proc) tabByID(id int) *tab {
	for _, t := range p.tabs {
		if t.id == id {
			return t
		}
	}
	return nil
}

// newTab opens a tab on u and makes it the current one.
func (p *proc) newTab(ctx context.Context, u string) (*tab, error) {
	res, err := proto.TargetCreateTarget{URL: "about:blank"}.Call(p.rb.Context(ctx))
	if err != nil {
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	t := p.addTab(&proto.TargetTargetInfo{TargetID: res.TargetID, Type: proto.TargetTargetInfoTypePage, URL: "about:blank"})
	if err := p.attach(t); err != nil {
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	if u != "about:blank" {
		if err := t.page.Context(ctx).Navigate(u); err != nil {
			return t, err
		}
	}
	if err := p.activate(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// activate makes t the current tab and brings it to the front (a
// background tab does not paint, so it would send no screen frames).
func (p *proc) activate(ctx context.Context, t *tab) error {
	if err := (proto.TargetActivateTarget{TargetID: t.target}).Call(p.rb.Context(ctx)); err != nil {
		return fmt.Errorf("switch to tab %d: %w", t.id, err)
	}
	p.mu.Lock()
	p.active = t
	p.mu.Unlock()
	if p.attach(t) == nil {
		if lm, err := (proto.PageGetLayoutMetrics{}).Call(t.page.Context(ctx)); err == nil && lm.CSSVisualViewport != nil {
			p.b.mu.Lock()
			p.b.viewport = [2]int{int(lm.CSSVisualViewport.ClientWidth), int(lm.CSSVisualViewport.ClientHeight)}
			p.b.mu.Unlock()
		}
	}
	p.b.updateCast()
	p.b.changed()
	return nil
}

// current returns the current tab, opening a blank one when none is left.
func (p *proc) current(ctx context.Context) (*tab, error) {
	p.mu.Lock()
	t := p.active
	if t == nil && len(p.tabs) > 0 {
		t = p.tabs[len(p.tabs)-1]
		p.active = t
	}
	p.mu.Unlock()
	if t == nil {
		return p.newTab(ctx, "about:blank")
	}
	if err := p.attach(t); err != nil {
		return nil, fmt.Errorf("attach to tab %d: %w", t.id, err)
	}
	return t, nil
}

// attach makes sure t has a DevTools session (go-rod attaches each target
// once and caches the page). t.page is set once, under p.mu, and never
// changes after: a caller whose attach returned nil reads it without the
// lock. Two callers may attach at once (addTab's goroutine and newTab);
// the one that comes second keeps the first one's page.
func (p *proc) attach(t *tab) error {
	p.mu.Lock()
	ok := t.page != nil
	p.mu.Unlock()
	if ok {
		return nil
	}
	page, err := p.rb.PageFromTarget(t.target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	if t.page == nil {
		t.page = page
	}
	p.mu.Unlock()
	return nil
}

// takeNotes returns and clears what happened in the browser since the last
// tool result: dialogs, new tabs, downloads, refused requests.
func (p *proc) takeNotes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	notes := p.notes
	p.notes = nil
	if n := len(p.blocked); n > 0 {
		s := fmt.Sprintf("Refused %d request(s) of the page to the Rerun app's own local server (%s), which its browsers never reach.", n, cutURL(p.blocked[0], 120))
		notes = append(notes, s)
		p.blocked = nil
	}
	return notes
}

// info returns a tab's address and title, asking the browser (the
// title-changed events lag behind a load).
func (p *proc) info(t *tab) (u, title string) {
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	res, err := proto.TargetGetTargetInfo{TargetID: t.target}.Call(p.rb.Context(ctx))
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && res.TargetInfo != nil {
		t.url, t.title = res.TargetInfo.URL, res.TargetInfo.Title
	}
	return t.url, t.title
}

// readHistory asks whether t has an earlier and a later page, for the
// Desktop's Back and Forward, and tells the viewers when that changed. It
// runs off the event loop, after a navigation; reads of one tab take turns,
// so the answer kept is the newest.
func (p *proc) readHistory(t *tab) {
	t.histMu.Lock()
	defer t.histMu.Unlock()
	p.mu.Lock()
	page := t.page
	p.mu.Unlock()
	if page == nil {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	// Just after a commit the session may be between two renderers for a
	// moment: read again then, or Back and Forward keep the old answer.
	var h *proto.PageGetNavigationHistoryResult
	err := retryDetached(ctx, func() (err error) {
		h, err = proto.PageGetNavigationHistory{}.Call(page.Context(ctx))
		return err
	})
	if err != nil {
		return
	}
	back, fwd := h.CurrentIndex > firstPage(h), h.CurrentIndex+1 < len(h.Entries)
	p.mu.Lock()
	changed := t.back != back || t.fwd != fwd
	t.back, t.fwd = back, fwd
	p.mu.Unlock()
	if changed {
		p.b.changed()
	}
}
