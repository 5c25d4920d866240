package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Limits of the browser tools.
const (
	// MaxSnapshot is how much of a snapshot one browser_snapshot returns;
	// offset pages through the rest with the same element numbers.
	MaxSnapshot = 24 << 10
	// maxSnapshotText bounds the whole rendered page (what offset can reach).
	maxSnapshotText = 400 << 10
	navTimeout      = 20 * time.Second
	actionTimeout   = 30 * time.Second
	// settleQuiet is how long an action waits for a navigation it may have
	// started before it reports.
	settleQuiet = 300 * time.Millisecond
)

//go:embed snapshot.js
var snapshotJS string

// snapGroup is the DevTools object group of a snapshot's elements.
const snapGroup = "rerun-snapshot"

// op is one tool call on an agent's running browser.
type op struct {
	b *Browser
	p *proc
	// vars masks the workspace's variables (and the app's secrets) in what
	// is cut here before the run masks the whole output: a value cut in
	// half would pass that unmasked (nil: none to mask).
	vars *secret.Redactor
}

// clip is clip after masking (redact): a value the cut would halve is
// masked whole first.
func (o *op) clip(s string, n int) string { return clip(o.redact(s), n) }

// cutURL is cutURL after masking.
func (o *op) cutURL(u string, n int) string { return cutURL(o.redact(u), n) }

// redact masks the typed values and the workspace's variables in s; what
// is cut afterwards holds no part of one.
func (o *op) redact(s string) string {
	return o.vars.Redact(o.b.redact(s))
}

// mark is a tab's counters before an action, to tell what it changed.
type mark struct {
	t         *tab
	docs      int
	navs      int
	requested int
	stops     int
	url       string
}

func (o *op) mark(t *tab) mark {
	o.p.mu.Lock()
	defer o.p.mu.Unlock()
	return mark{t: t, docs: t.docs, navs: t.navs, requested: t.requested, stops: t.stops, url: t.url}
}

// settle lets an action's consequences happen: if it started a navigation,
// it waits for the new page to load (up to navTimeout), and it says what
// changed.
func (o *op) settle(ctx context.Context, m mark) string {
	p, t := o.p, m.t
	quiet, cancel := context.WithTimeout(ctx, settleQuiet)
	_ = p.waitFor(quiet, func() bool { return t.requested > m.requested || t.docs > m.docs || t.loading })
	cancel()
	p.mu.Lock()
	moving := t.requested > m.requested || t.docs > m.docs || t.loading
	p.mu.Unlock()
	var note string
	if moving {
		load, cancel := context.WithTimeout(ctx, navTimeout)
		// Done when a load ended after the action (a new document, or a
		// navigation that became a download or an empty answer), or the
		// address changed within the document (#anchors, history.pushState).
		err := p.waitFor(load, func() bool {
			return !t.loading && (t.stops > m.stops || t.navs > m.navs || t.requested == m.requested && t.docs == m.docs)
		})
		cancel()
		if err != nil && ctx.Err() == nil {
			note = " The page is still loading."
		}
	}
	if blocked := o.leaveBlocked(ctx, t); blocked != "" {
		return fmt.Sprintf(" It tried to open %s, the Rerun app's own local server, which was refused; the tab stays where it was.", o.cutURL(blocked, 120))
	}
	u, title := p.info(t)
	p.mu.Lock()
	docs, navs, active := t.docs, t.navs, p.active
	p.mu.Unlock()
	switch {
	case active != t:
		return note // the new tab is announced by the notes
	case docs > m.docs:
		return fmt.Sprintf(" The tab went to %s (%q).%s", o.cutURL(u, 200), o.clip(title, 100), note)
	case navs > m.navs || u != m.url:
		return fmt.Sprintf(" The address is now %s.%s", o.cutURL(u, 200), note)
	}
	return note
}

// leaveBlocked takes the tab back from the error page of a refused
// navigation and returns the refused address ("" when there was none).
func (o *op) leaveBlocked(ctx context.Context, t *tab) string {
	o.p.mu.Lock()
	blocked := t.blockedNav
	t.blockedNav = ""
	o.p.mu.Unlock()
	if blocked == "" {
		return ""
	}
	// The refusal comes before Chromium commits its error page: let it.
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	_ = o.p.waitFor(wctx, func() bool { return strings.HasPrefix(t.url, "chrome-error:") || t.url == blocked })
	cancel()
	page := t.page.Context(ctx)
	var h *proto.PageGetNavigationHistoryResult
	err := retryDetached(ctx, func() (err error) {
		h, err = proto.PageGetNavigationHistory{}.Call(page)
		return err
	})
	if err == nil && h.CurrentIndex > 0 && h.CurrentIndex < len(h.Entries) {
		cur := h.Entries[h.CurrentIndex]
		if cur.URL == blocked || strings.HasPrefix(cur.URL, "chrome-error:") {
			m := o.mark(t)
			if (proto.PageNavigateToHistoryEntry{EntryID: h.Entries[h.CurrentIndex-1].ID}).Call(page) == nil {
				o.waitNav(ctx, m, h.Entries[h.CurrentIndex-1].URL)
			}
		}
		return blocked
	}
	_ = page.Navigate("about:blank")
	return blocked
}

// evalPage calls the JavaScript function fn with args (JSON values) in the
// tab's current document and returns its result by value, or as an object
// of the object group when group is set. go-rod's Page.Eval keeps the
// first window object it saw, which a page restored from the back-forward
// cache no longer answers to; Runtime.evaluate always runs in the current
// document.
func evalPage(page *rod.Page, group string, fn string, args ...any) (*proto.RuntimeRemoteObject, error) {
	var b strings.Builder
	b.WriteString("(")
	b.WriteString(fn)
	b.WriteString(")(")
	for i, a := range args {
		if i > 0 {
			b.WriteString(",")
		}
		j, err := json.Marshal(a)
		if err != nil {
			return nil, err
		}
		b.Write(j)
	}
	b.WriteString(")")
	var res *proto.RuntimeEvaluateResult
	err := retryDetached(page.GetContext(), func() (err error) {
		res, err = proto.RuntimeEvaluate{Expression: b.String(), ReturnByValue: group == "", ObjectGroup: group, AwaitPromise: true}.Call(page)
		return err
	})
	if err != nil {
		return nil, err
	}
	if res.ExceptionDetails != nil {
		msg := res.ExceptionDetails.Text
		if res.ExceptionDetails.Exception != nil {
			msg += " " + res.ExceptionDetails.Exception.Description
		}
		return nil, fmt.Errorf("page script failed: %s", msg)
	}
	return res.Result, nil
}

// retryDetached retries fn while the tab's session is between two
// renderer processes ("Not attached to an active page"), which happens for a
// moment when a navigation commits in another process (error pages, other
// sites).
func retryDetached(ctx context.Context, fn func() error) error {
	for i := 0; ; i++ {
		err := fn()
		var ce *cdp.Error
		if err == nil || !errors.As(err, &ce) || !strings.Contains(ce.Message, "Not attached to an active page") || i >= 40 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitNav waits for a history navigation after m to reach address want and
// load.
func (o *op) waitNav(ctx context.Context, m mark, want string) {
	ctx, cancel := context.WithTimeout(ctx, navTimeout)
	defer cancel()
	t := m.t
	_ = o.p.waitFor(ctx, func() bool { return (t.docs > m.docs || t.navs > m.navs) && t.url == want && !t.loading })
}

// open loads u in the current tab, or in a new one.
func (o *op) open(ctx context.Context, raw string, newTab bool) (string, error) {
	u, err := o.b.m.forbid.checkURL(raw)
	if err != nil {
		return "", err
	}
	var t *tab
	if newTab {
		t, err = o.p.newTab(ctx, "about:blank")
	} else {
		t, err = o.p.current(ctx)
	}
	if err != nil {
		return "", err
	}
	m := o.mark(t)
	o.p.mu.Lock()
	t.blockedNav = ""
	o.p.mu.Unlock()
	navCtx, cancel := context.WithTimeout(ctx, navTimeout)
	err = t.page.Context(navCtx).Navigate(u)
	cancel()
	if err != nil {
		if blocked := o.leaveBlocked(ctx, t); blocked != "" {
			return "", refusedRedirect(u, blocked)
		}
		var nav *rod.NavigationError
		if errors.As(err, &nav) {
			return "", fault.Invalid("could not open %s: %s; check the address, or try again if the site is down", o.cutURL(u, 200), nav.Reason)
		}
		return "", fmt.Errorf("open %s: %w", o.cutURL(u, 200), err)
	}
	note := o.settleLoad(ctx, m)
	if blocked := o.leaveBlocked(ctx, t); blocked != "" {
		return "", refusedRedirect(u, blocked)
	}
	cur, title := o.p.info(t)
	where := "Opened"
	if newTab {
		where = fmt.Sprintf("Opened in a new tab (tab %d)", t.id)
	}
	return fmt.Sprintf("%s %s (%q).%s Call browser_snapshot to read the page and get element numbers.", where, o.cutURL(cur, 300), o.clip(title, 150), note), nil
}

// refusedRedirect says that opening u led to the forbidden address blocked.
func refusedRedirect(u, blocked string) error {
	if blocked == u {
		return refusedErr(u)
	}
	return fault.Invalid("refused: %s led to %s, the Rerun app's own local server, which its browsers never open; the tab stays where it was", cutURL(u, 200), cutURL(blocked, 200))
}

// settleLoad waits for the navigation Page.navigate started to commit and
// its document to finish loading.
func (o *op) settleLoad(ctx context.Context, m mark) string {
	ctx, cancel := context.WithTimeout(ctx, navTimeout)
	defer cancel()
	t := m.t
	if err := o.p.waitFor(ctx, func() bool { return (t.docs > m.docs || t.navs > m.navs) && !t.loading }); err != nil {
		return " The page is still loading."
	}
	return ""
}

// waitInput is what browser_wait waits for.
type waitInput struct {
	Text           string   `json:"text"`
	TextGone       string   `json:"text_gone"`
	Element        *elemArg `json:"element"`
	Navigation     bool     `json:"navigation"`
	TimeoutSeconds *float64 `json:"timeout_seconds"`
}

// Limits of browser_wait.
const (
	defaultWait = 10 * time.Second
	maxWait     = 60 * time.Second
)

func (w waitInput) timeout() (time.Duration, error) {
	if w.TimeoutSeconds == nil {
		return defaultWait, nil
	}
	s := *w.TimeoutSeconds
	if s <= 0 || s > maxWait.Seconds() {
		return 0, fault.Invalid("timeout_seconds must be more than 0 and at most %d", int(maxWait.Seconds()))
	}
	return time.Duration(s * float64(time.Second)), nil
}

// wait waits for text to appear or go, an element to show, or a
// navigation; with none of those it just waits the timeout.
func (o *op) wait(ctx context.Context, in waitInput) (string, string, error) {
	d, err := in.timeout()
	if err != nil {
		return "", "", err
	}
	conds := 0
	for _, set := range []bool{in.Text != "", in.TextGone != "", in.Element != nil, in.Navigation} {
		if set {
			conds++
		}
	}
	if conds > 1 {
		return "", "", fault.Invalid("give one of text, text_gone, element or navigation per call")
	}
	t, err := o.p.current(ctx)
	if err != nil {
		return "", "", err
	}
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	took := func() string { return fmt.Sprintf("%.1f s", time.Since(start).Seconds()) }
	timedOut := func(what string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		u, title := o.p.info(t)
		return fault.Invalid("timed out after %s waiting for %s; the page is %s (%q); call browser_snapshot to see what it shows", d.Round(100*time.Millisecond), what, o.cutURL(u, 200), o.clip(title, 100))
	}
	poll := func(js string, arg any) error {
		for {
			r, err := evalPage(t.page.Context(wctx), "", js, arg)
			if err == nil && r.Value.Bool() {
				return nil
			}
			if err != nil && (isGoneErr(err) == false && wctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded)) {
				// A page between documents has no context to run in: poll on.
				o.b.m.log.Debug("wait poll", "agent", o.b.agentID, "err", err)
			}
			select {
			case <-wctx.Done():
				return wctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	// The page's text, open shadow roots and same-origin frames included.
	const hasText = `(t) => {
	  const n = (s) => (s || '').replace(/\s+/g, ' ');
	  const parts = [];
	  const walk = (root) => {
	    parts.push(root.innerText !== undefined ? root.innerText : root.textContent);
	    root.querySelectorAll('*').forEach((e) => {
	      if (e.shadowRoot) walk(e.shadowRoot);
	      if (e.tagName === 'IFRAME') { try { if (e.contentDocument && e.contentDocument.body) walk(e.contentDocument.body); } catch (x) {} }
	    });
	  };
	  if (document.body) walk(document.body);
	  return n(parts.join(' ')).includes(n(t));
	}`
	switch {
	case in.Text != "":
		if err := poll(hasText, in.Text); err != nil {
			return "", "", timedOut(fmt.Sprintf("the text %q", clip(in.Text, 100)))
		}
		return fmt.Sprintf("The page shows %q (after %s).", clip(in.Text, 100), took()), fmt.Sprintf("waited for %q", clip(in.Text, 60)), nil
	case in.TextGone != "":
		if err := poll(`(t) => !(`+hasText+`)(t)`, in.TextGone); err != nil {
			return "", "", timedOut(fmt.Sprintf("the text %q to go", clip(in.TextGone, 100)))
		}
		return fmt.Sprintf("The text %q is gone (after %s).", clip(in.TextGone, 100), took()), fmt.Sprintf("waited for %q to go", clip(in.TextGone, 60)), nil
	case in.Element != nil:
		n := int(*in.Element)
		_, el, desc, err := o.element(ctx, n)
		if err != nil {
			return "", "", err
		}
		for {
			r, err := el.Context(wctx).Eval(`() => this.isConnected && this.checkVisibility() && this.getClientRects().length > 0 && !this.disabled`)
			if err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return "", "", o.elementErr(n, err)
			}
			if err == nil && r.Value.Bool() {
				return fmt.Sprintf("[%d] %s is visible and enabled (after %s).", n, desc, took()), fmt.Sprintf("waited for [%d] %s", n, desc), nil
			}
			select {
			case <-wctx.Done():
				return "", "", timedOut(fmt.Sprintf("[%d] %s to be visible and enabled", n, desc))
			case <-time.After(100 * time.Millisecond):
			}
		}
	case in.Navigation:
		o.p.mu.Lock()
		already := t.navs > t.seenNavs
		o.p.mu.Unlock()
		if err := o.p.waitFor(wctx, func() bool { return t.navs > t.seenNavs && !t.loading }); err != nil {
			if errors.Is(err, errBrowserGone) {
				return "", "", err
			}
			return "", "", timedOut("the page to navigate")
		}
		u, title := o.p.info(t)
		if already {
			return fmt.Sprintf("The page had already gone to %s (%q).", o.cutURL(u, 200), o.clip(title, 100)), "waited for the page to load", nil
		}
		return fmt.Sprintf("The page went to %s (%q) after %s.", o.cutURL(u, 200), o.clip(title, 100), took()), "waited for the page to load", nil
	default:
		select {
		case <-wctx.Done():
		case <-o.p.done:
			return "", "", errBrowserGone
		}
		if ctx.Err() != nil {
			return "", "", ctx.Err()
		}
		return fmt.Sprintf("Waited %s.", d.Round(100*time.Millisecond)), fmt.Sprintf("waited %s", d.Round(100*time.Millisecond)), nil
	}
}

// screenshot captures the current tab's viewport as PNG.
func (o *op) screenshot(ctx context.Context) (*tab, []byte, error) {
	t, err := o.p.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	png, err := t.page.Context(ctx).Screenshot(false, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	if err != nil {
		return nil, nil, o.pageErr("take a screenshot", err)
	}
	return t, png, nil
}

// back goes one page back in the current tab's history.
func (o *op) back(ctx context.Context) (string, error) {
	t, err := o.p.current(ctx)
	if err != nil {
		return "", err
	}
	page := t.page.Context(ctx)
	var h *proto.PageGetNavigationHistoryResult
	err = retryDetached(ctx, func() (err error) {
		h, err = proto.PageGetNavigationHistory{}.Call(page)
		return err
	})
	if err != nil {
		return "", o.pageErr("read the history", err)
	}
	if h.CurrentIndex <= 0 {
		return "", fault.Invalid("there is no earlier page in this tab")
	}
	m := o.mark(t)
	if err := (proto.PageNavigateToHistoryEntry{EntryID: h.Entries[h.CurrentIndex-1].ID}).Call(page); err != nil {
		return "", o.pageErr("go back", err)
	}
	o.waitNav(ctx, m, h.Entries[h.CurrentIndex-1].URL)
	u, title := o.p.info(t)
	return fmt.Sprintf("Went back to %s (%q). Call browser_snapshot for its elements.", o.cutURL(u, 300), o.clip(title, 150)), nil
}

// tabs lists the tabs, the current one marked.
func (o *op) tabs(ctx context.Context) (string, error) {
	if _, err := o.p.current(ctx); err != nil {
		return "", err
	}
	// Titles arrive late in events; ask for the current ones.
	if res, err := (proto.TargetGetTargets{}).Call(o.p.rb.Context(ctx)); err == nil {
		o.p.mu.Lock()
		for _, info := range res.TargetInfos {
			if t := o.p.tabByTarget(info.TargetID); t != nil {
				t.url, t.title = info.URL, info.Title
			}
		}
		o.p.mu.Unlock()
	}
	o.p.mu.Lock()
	defer o.p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%d tab(s); * marks the current one:\n", len(o.p.tabs))
	for _, t := range o.p.tabs {
		mark := " "
		if t == o.p.active {
			mark = "*"
		}
		title := t.title
		if title == "" {
			title = "(no title)"
		}
		fmt.Fprintf(&b, "%s tab %d: %q — %s\n", mark, t.id, o.clip(title, 100), o.cutURL(t.url, 200))
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// switchTab makes tab id the current tab.
func (o *op) switchTab(ctx context.Context, id int) (string, error) {
	o.p.mu.Lock()
	t := o.p.tabByID(id)
	o.p.mu.Unlock()
	if t == nil {
		return "", fault.Invalid("there is no tab %d; browser_tabs lists the open tabs", id)
	}
	if err := o.p.attach(t); err != nil {
		return "", o.pageErr("attach to the tab", err)
	}
	if err := o.p.activate(ctx, t); err != nil {
		return "", err
	}
	u, title := o.p.info(t)
	return fmt.Sprintf("Switched to tab %d: %s (%q). Call browser_snapshot for its elements.", id, o.cutURL(u, 300), o.clip(title, 150)), nil
}

// closeTab closes tab id (0: the current one). The last tab is replaced by
// a blank one, so there is always a current tab.
func (o *op) closeTab(ctx context.Context, id int) (string, error) {
	o.p.mu.Lock()
	t := o.p.active
	if id != 0 {
		t = o.p.tabByID(id)
	}
	o.p.mu.Unlock()
	if t == nil {
		if id == 0 {
			return "", fault.Invalid("there is no open tab to close")
		}
		return "", fault.Invalid("there is no tab %d; browser_tabs lists the open tabs", id)
	}
	if _, err := (proto.TargetCloseTarget{TargetID: t.target}).Call(o.p.rb.Context(ctx)); err != nil {
		return "", o.pageErr("close the tab", err)
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_ = o.p.waitFor(wctx, func() bool { return o.p.tabByTarget(t.target) == nil })
	cancel()
	cur, err := o.p.current(ctx)
	if err != nil {
		return "", err
	}
	if err := o.p.activate(ctx, cur); err != nil {
		return "", err
	}
	u, title := o.p.info(cur)
	return fmt.Sprintf("Closed tab %d. The current tab is %d: %s (%q).", t.id, cur.id, o.cutURL(u, 300), o.clip(title, 150)), nil
}

// clip cuts s to n characters with an ellipsis.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
