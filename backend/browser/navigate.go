package browser

// The Desktop's address bar: the person, holding the browser, goes to an
// address they typed, back, forward, or reloads the current tab.

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Navigation actions of the Desktop's address bar.
const (
	NavGo      = "go"
	NavBack    = "back"
	NavForward = "forward"
	NavReload  = "reload"
)

// navStartTimeout bounds how long Navigate waits for its navigation to
// start: a slow site keeps loading on the screen, the address bar does not
// hang on it.
const navStartTimeout = 5 * time.Second

// typedHint says what the address bar takes, for its refusals.
const typedHint = "type a web address, like example.com or https://example.com/page"

// Navigate moves the current tab as the person asked in the Desktop's
// address bar: go to rawURL (NavGo), or NavBack, NavForward, NavReload. The
// person must hold the browser (TakeOver), or it fails with
// ErrNotInControl. It returns once the navigation started (or
// navStartTimeout passed): the page loads on the screen meanwhile.
// Addresses are taken as typedURL takes them.
func (b *Browser) Navigate(ctx context.Context, action, rawURL string) error {
	if !b.InControl() {
		return ErrNotInControl
	}
	var target string
	switch action {
	case NavGo:
		u, err := b.m.forbid.typedURL(rawURL)
		if err != nil {
			return err
		}
		target = u
	case NavBack, NavForward, NavReload:
	default:
		return fault.Invalid("navigation %q is not go, back, forward or reload", action)
	}
	p, t, err := b.personsTab(ctx)
	if err != nil {
		return err
	}
	o := &op{b: b, p: p}
	m := o.mark(t)
	start, cancel := context.WithTimeout(ctx, navStartTimeout)
	defer cancel()
	page := t.page.Context(start)
	switch action {
	case NavGo:
		p.mu.Lock()
		t.blockedNav = ""
		p.mu.Unlock()
		err = page.Navigate(target)
		if blocked := o.leaveBlocked(ctx, t); blocked != "" {
			return refusedRedirect(target, blocked)
		}
		var nav *rod.NavigationError
		switch {
		case errors.As(err, &nav):
			// Chromium shows its error page on the screen; say it here too.
			return fault.Invalid("could not open %s: %s; check the address, or try again if the site is down", cutURL(target, 200), nav.Reason)
		case err != nil && start.Err() == nil:
			return o.pageErr("open "+cutURL(target, 200), err)
		}
	case NavBack, NavForward:
		if err := o.history(t, page, action == NavBack); err != nil {
			return err
		}
	case NavReload:
		if err := (proto.PageReload{}).Call(page); err != nil && start.Err() == nil {
			return o.pageErr("reload", err)
		}
	}
	// Started: a new document or address, or a load under way. A navigation
	// that outlives the bound goes on; the state tells how far it got.
	_ = p.waitFor(start, func() bool {
		return t.docs > m.docs || t.navs > m.navs || t.stops > m.stops || t.loading
	})
	// The answer carries Back and Forward as they are now: the read the
	// navigation set off may not have come back yet, and the address bar
	// takes this answer over the screen socket's newer state.
	if action == NavGo || action == NavReload {
		p.readHistory(t)
	}
	return nil
}

// history goes one entry back (or forward) in the tab's history.
func (o *op) history(t *tab, page *rod.Page, back bool) error {
	var h *proto.PageGetNavigationHistoryResult
	err := retryDetached(page.GetContext(), func() (err error) {
		h, err = proto.PageGetNavigationHistory{}.Call(page)
		return err
	})
	if err != nil {
		return o.pageErr("read the history", err)
	}
	i := h.CurrentIndex + 1
	if back {
		i = h.CurrentIndex - 1
	}
	switch {
	case back && i < firstPage(h):
		return fault.Invalid("there is no earlier page in this tab")
	case !back && i >= len(h.Entries):
		return fault.Invalid("there is no later page in this tab: go back first")
	}
	if err := (proto.PageNavigateToHistoryEntry{EntryID: h.Entries[i].ID}).Call(page); err != nil {
		if back {
			return o.pageErr("go back", err)
		}
		return o.pageErr("go forward", err)
	}
	// Where it lands is known now: Back and Forward show it at once, not
	// only when the history is read again after the navigation (a page
	// restored from the back-forward cache may announce itself before the
	// history moved).
	o.p.mu.Lock()
	t.back, t.fwd = i > firstPage(h), i+1 < len(h.Entries)
	o.p.mu.Unlock()
	o.b.changed()
	return nil
}

// firstPage is the index of a tab's first page in its history: a tab opens
// on about:blank (so the address guard is in place before its first
// request), an entry that Back does not return to.
func firstPage(h *proto.PageGetNavigationHistoryResult) int {
	i := 0
	for i < len(h.Entries)-1 && h.Entries[i].URL == "about:blank" {
		i++
	}
	return i
}

// typedURL reads an address the person typed into the Desktop's address
// bar: http and https only; a bare host or host/path ("example.com",
// "example.com:8080/x") gets https://. Anything else (file:, javascript:,
// chrome:, about: …), an address without a host and this app's own server
// are refused with a message saying what to type. It returns the address in
// full.
func (f forbidden) typedURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fault.Invalid("the address is empty; %s", typedHint)
	}
	if !strings.Contains(s, ":") || hostWithPort(s) {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fault.Invalid("%q is not a web address; %s", cutURL(strings.TrimSpace(raw), 100), typedHint)
	}
	switch scheme := strings.ToLower(u.Scheme); scheme {
	case "http", "https":
	case "":
		return "", fault.Invalid("%q is not a web address; %s", cutURL(strings.TrimSpace(raw), 100), typedHint)
	default:
		return "", fault.Invalid("%s: addresses do not open in the agent's browser; %s", scheme, typedHint)
	}
	if u.Hostname() == "" {
		return "", fault.Invalid("%q has no host; %s", cutURL(strings.TrimSpace(raw), 100), typedHint)
	}
	if f.blocks(u) {
		return "", refusedErr(u.String())
	}
	return u.String(), nil
}
