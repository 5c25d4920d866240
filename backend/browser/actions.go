package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
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
		return fmt.Sprintf(" It tried to open %s, the Rerun app's own local server, which was refused; the tab stays where it was.", cutURL(blocked, 120))
	}
	u, title := p.info(t)
	p.mu.Lock()
	docs, navs, active := t.docs, t.navs, p.active
	p.mu.Unlock()
	switch {
	case active != t:
		return note // the new tab is announced by the notes
	case docs > m.docs:
		return fmt.Sprintf(" The tab went to %s (%q).%s", cutURL(u, 200), clip(title, 100), note)
	case navs > m.navs || u != m.url:
		return fmt.Sprintf(" The address is now %s.%s", cutURL(u, 200), note)
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
			return "", fault.Invalid("could not open %s: %s; check the address, or try again if the site is down", cutURL(u, 200), nav.Reason)
		}
		return "", fmt.Errorf("open %s: %w", cutURL(u, 200), err)
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
	return fmt.Sprintf("%s %s (%q).%s Call browser_snapshot to read the page and get element numbers.", where, cutURL(cur, 300), clip(title, 150), note), nil
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

// snapshot renders the current tab as text and numbers its elements; with
// offset > 0 it returns a later part of the last snapshot instead.
func (o *op) snapshot(ctx context.Context, offset int) (string, error) {

	t, err := o.p.current(ctx)
	if err != nil {
		return "", err
	}
	if offset > 0 {
		o.p.mu.Lock()
		text, valid, reason := t.snap, t.refsValid, t.staleReason
		o.p.mu.Unlock()
		switch {
		case text == "":
			return "", fault.Invalid("there is no snapshot of this tab to continue; call browser_snapshot without offset")
		case !valid:
			return "", fault.Invalid("the snapshot is out of date (%s); call browser_snapshot without offset for a new one", reason)
		case offset >= len(text):
			return "", fault.Invalid("offset %d is past the end of the snapshot (%d bytes)", offset, len(text))
		}
		return pageOf(text, offset), nil
	}
	// A page that replaces its document while being read is read again.
	for try := 0; ; try++ {
		out, err := o.render(ctx, t)
		if err == nil {
			return out, nil
		}
		if try == 2 || !isGoneErr(err) {
			return "", o.pageErr("read the page", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// render reads the tab into a snapshot and stores its element numbers.
func (o *op) render(ctx context.Context, t *tab) (string, error) {
	page := t.page.Context(ctx)
	// The elements of a snapshot live in one object group, freed as a whole
	// by the next one (a page restored from the back-forward cache hands out
	// the same object ids again, so they must be freed before, not after).
	_ = proto.RuntimeReleaseObjectGroup{ObjectGroup: snapGroup}.Call(page)
	obj, err := evalPage(page, snapGroup, snapshotJS, maxSnapshotText)
	if err != nil {
		return "", err
	}
	defer func() { _ = page.Release(obj) }()
	meta, err := proto.RuntimeCallFunctionOn{
		ObjectID:            obj.ObjectID,
		FunctionDeclaration: `function(){ return {text: this.text, full: this.full, descs: this.descs, scrollY: this.scrollY, scrollHeight: this.scrollHeight, width: this.width, height: this.height} }`,
		ReturnByValue:       true,
	}.Call(page)
	if err != nil {
		return "", err
	}
	if meta.ExceptionDetails != nil {
		return "", fmt.Errorf("read the page: %s", meta.ExceptionDetails.Text)
	}
	v := meta.Result.Value
	els, err := page.ElementsByJS(rod.Eval(`() => this.els`).This(obj))
	if err != nil {
		return "", err
	}
	var descs []string
	for _, d := range v.Get("descs").Arr() {
		descs = append(descs, d.Str())
	}
	w, h := v.Get("width").Int(), v.Get("height").Int()
	o.b.mu.Lock()
	if w > 0 && h > 0 {
		o.b.viewport = [2]int{w, h}
	}
	o.b.mu.Unlock()

	u, title := o.p.info(t)
	o.p.mu.Lock()
	ntabs := len(o.p.tabs)
	o.p.mu.Unlock()
	var hd strings.Builder
	if ntabs > 1 {
		fmt.Fprintf(&hd, "Tab %d of %d: ", t.id, ntabs)
	}
	fmt.Fprintf(&hd, "%q — %s\n", clip(title, 150), cutURL(u, 300))
	fmt.Fprintf(&hd, "Viewport %d×%d; scrolled to %d of %d px. Elements: %d.\n\n", w, h, v.Get("scrollY").Int(), v.Get("scrollHeight").Int(), len(els))
	body := v.Get("text").Str()
	if strings.TrimSpace(body) == "" {
		body = "(the page shows no text)"
	}
	if v.Get("full").Bool() {
		body += "\n[the page goes on; this is as much as a snapshot holds]"
	}
	text := o.b.redact(hd.String() + body)

	o.p.mu.Lock()
	t.refs, t.descs, t.refsValid, t.staleReason, t.snap = els, descs, true, "", text
	o.p.mu.Unlock()
	return pageOf(text, 0), nil
}

// pageOf returns up to MaxSnapshot bytes of text from offset, with a note
// saying how to get the rest.
func pageOf(text string, offset int) string {
	rest := text[offset:]
	if len(rest) <= MaxSnapshot {
		return rest
	}
	cut := MaxSnapshot
	if i := strings.LastIndexByte(rest[:cut], '\n'); i > MaxSnapshot/2 {
		cut = i + 1
	}
	for cut > 0 && !utf8.RuneStart(rest[cut]) {
		cut--
	}
	return rest[:cut] + fmt.Sprintf("\n[snapshot cut here: %d more bytes; call browser_snapshot with offset %d for the rest (same element numbers), or scroll and snapshot again]", len(rest)-cut, offset+cut)
}

// element returns element n of the current tab's last snapshot and its
// description, or an error telling the model to take a new snapshot.
func (o *op) element(ctx context.Context, n int) (*tab, *rod.Element, string, error) {
	t, err := o.p.current(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	o.p.mu.Lock()
	refs, descs, valid, reason, snap := t.refs, t.descs, t.refsValid, t.staleReason, t.snap
	o.p.mu.Unlock()
	switch {
	case snap == "" && !valid:
		if reason != "" {
			return nil, nil, "", fault.Invalid("element [%d] is from an old snapshot: %s; call browser_snapshot and use its numbers", n, reason)
		}
		return nil, nil, "", fault.Invalid("there is no snapshot of this tab yet; call browser_snapshot and use the element numbers it shows")
	case !valid:
		return nil, nil, "", fault.Invalid("element [%d] is from an old snapshot: %s; call browser_snapshot and use its numbers", n, reason)
	case n < 1 || n > len(refs):
		return nil, nil, "", fault.Invalid("there is no element [%d] in the last snapshot (it numbered 1–%d); call browser_snapshot if the page changed", n, len(refs))
	}
	el := refs[n-1].Context(ctx)
	res, err := el.Eval(`() => this.isConnected`)
	if err != nil {

		return nil, nil, "", o.elementErr(n, err)
	}
	if !res.Value.Bool() {
		return nil, nil, "", fault.Invalid("element [%d] is no longer on the page (it changed since the snapshot); call browser_snapshot and use its numbers", n)
	}
	desc := ""
	if n <= len(descs) {
		desc = descs[n-1]
	}
	return t, el, desc, nil
}

// elementErr turns a failure to reach an element into advice.
func (o *op) elementErr(n int, err error) error {
	var nf *rod.ObjectNotFoundError
	if errors.As(err, &nf) || isGoneErr(err) {
		return fault.Invalid("element [%d] is no longer on the page (it changed since the snapshot); call browser_snapshot and use its numbers", n)
	}
	return o.pageErr(fmt.Sprintf("reach element [%d]", n), err)
}

// isGoneErr reports whether err says a DevTools object or context is gone
// (the document it lived in was replaced).
func isGoneErr(err error) bool {
	var ce *cdp.Error
	if errors.As(err, &ce) {
		m := ce.Message + " " + ce.Data
		return strings.Contains(m, "Could not find object") || strings.Contains(m, "Cannot find context") ||
			strings.Contains(m, "No node with given id") || strings.Contains(m, "Node is detached")
	}
	return false
}

// pageErr words a failure of the page for the model.
func (o *op) pageErr(what string, err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fault.Invalid("could not %s: the page did not answer in time (busy or still loading); wait and try again, or take a snapshot", what)
	case errors.Is(err, context.Canceled):
		return err
	case !o.p.alive():
		return errBrowserGone
	case isGoneErr(err):
		return fault.Invalid("could not %s: the page changed meanwhile; call browser_snapshot and try again", what)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// click clicks element n with the mouse, like a person would.
func (o *op) click(ctx context.Context, n int) (string, string, error) {

	t, el, desc, err := o.element(ctx, n)
	if err != nil {
		return "", "", err
	}
	kind, err := el.Eval(`() => this.tagName === 'SELECT' ? 'select' : this.tagName === 'OPTION' ? 'option' : ''`)
	if err != nil {
		return "", "", o.elementErr(n, err)
	}
	if k := kind.Value.Str(); k != "" {
		return "", "", fault.Invalid("element [%d] is a drop-down (or one of its options); choose with browser_select instead of clicking", n)
	}
	pt, err := o.clickPoint(ctx, el, n)
	if err != nil {
		return "", "", err
	}
	m := o.mark(t)
	page := t.page.Context(ctx)
	if pt == nil {
		// A visually hidden checkbox or radio (styled through its label):
		// click it from script.
		if _, err := el.Evaluate(rod.Eval(`() => this.click()`).ByUser()); err != nil {
			return "", "", o.elementErr(n, err)
		}
	} else if err := mouseClick(page, pt.X, pt.Y); err != nil {
		return "", "", o.pageErr("click", err)
	}
	after := o.settle(ctx, m)
	action := fmt.Sprintf("clicked [%d] %s", n, desc)
	return fmt.Sprintf("Clicked [%d] %s.%s", n, desc, after), action, nil
}

// hitJS finds where to click element this: the first of its center and
// four inner points that is on screen and not under another element (a
// label of the control counts as the control), in the top page's
// coordinates. It says why when there is none.
const hitJS = `() => {
  const style = getComputedStyle(this);
  if (style.pointerEvents === 'none') return {why: 'nopointer'};
  const r = this.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return {why: 'hidden'};
  const win = this.ownerDocument.defaultView;
  const root = this.getRootNode().elementFromPoint ? this.getRootNode() : this.ownerDocument;
  const left = Math.max(r.left, 0), right = Math.min(r.right, win.innerWidth);
  const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, win.innerHeight);
  if (right - left < 1 || bottom - top < 1) return {why: 'offscreen'};
  const mine = (e) => e && (e === this || this.contains(e) ||
    (this.labels && Array.from(this.labels).some((l) => l === e || l.contains(e))));
  let cover = null;
  for (const [fx, fy] of [[0.5, 0.5], [0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]]) {
    let x = left + (right - left) * fx, y = top + (bottom - top) * fy;
    const hit = root.elementFromPoint(x, y);
    if (!mine(hit)) { cover = cover || hit; continue; }
    for (let w = win; w !== w.parent && w.frameElement; w = w.parent) {
      const fr = w.frameElement.getBoundingClientRect();
      x += fr.left + w.frameElement.clientLeft;
      y += fr.top + w.frameElement.clientTop;
    }
    return {x, y};
  }
  let what = 'another element';
  if (cover) {
    const c = typeof cover.className === 'string' && cover.className.trim() ? '.' + cover.className.trim().split(/\s+/).slice(0, 2).join('.') : '';
    const t = (cover.innerText || '').replace(/\s+/g, ' ').trim().slice(0, 60);
    what = cover.tagName.toLowerCase() + (cover.id ? '#' + cover.id : '') + c + (t ? ' "' + t + '"' : '');
  }
  return {why: 'covered', cover: what};
}`

// clickPoint scrolls element n into view and returns where to click it; nil
// with no error means "click it from script".
func (o *op) clickPoint(ctx context.Context, el *rod.Element, n int) (*proto.Point, error) {
	if _, err := el.Eval(`() => this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'})`); err != nil {
		return nil, o.elementErr(n, err)
	}
	// Animations and late layout settle within a moment; a cookie banner
	// does not.
	deadline := time.Now().Add(2 * time.Second)
	for {
		res, err := el.Eval(hitJS)
		if err != nil {
			return nil, o.elementErr(n, err)
		}
		v := res.Value
		why := ""
		if v.Has("why") {
			why = v.Get("why").Str()
		}
		switch why {
		case "":
			return &proto.Point{X: v.Get("x").Num(), Y: v.Get("y").Num()}, nil
		case "hidden", "nopointer":
			if o.scriptClickable(el) {
				return nil, nil
			}
		}
		if time.Now().After(deadline) {
			switch why {
			case "covered":
				return nil, fault.Invalid("element [%d] is covered by %s; close the dialog, banner or menu over it first (call browser_snapshot to find its button), or scroll", n, v.Get("cover").Str())
			case "offscreen":
				return nil, fault.Invalid("element [%d] cannot be scrolled into view; call browser_snapshot and try another element", n)
			default:
				return nil, fault.Invalid("element [%d] cannot be clicked: it is hidden, has no size or ignores the mouse; call browser_snapshot to find what to click instead", n)
			}
		}
		select {
		case <-ctx.Done():
			return nil, o.pageErr("click", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// scriptClickable: checkboxes and radios are often hidden behind a styled
// label; clicking them from script toggles them the same way.
func (o *op) scriptClickable(el *rod.Element) bool {
	r, err := el.Eval(`() => this.tagName === 'INPUT' && (this.type === 'checkbox' || this.type === 'radio')`)
	return err == nil && r.Value.Bool()
}

// mouseClick moves the mouse to x,y and clicks the left button there.
func mouseClick(page proto.Client, x, y float64) error {
	none, left := 0, 1
	for _, e := range []proto.InputDispatchMouseEvent{
		{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y, Buttons: &none},
		{Type: proto.InputDispatchMouseEventTypeMousePressed, X: x, Y: y, Button: proto.InputMouseButtonLeft, Buttons: &left, ClickCount: 1},
		{Type: proto.InputDispatchMouseEventTypeMouseReleased, X: x, Y: y, Button: proto.InputMouseButtonLeft, Buttons: &none, ClickCount: 1},
	} {
		if err := e.Call(page); err != nil {
			return err
		}
	}
	return nil
}

// fieldJS finds where text goes in element this: itself, or the one text
// field inside a wrapper, and says what kind it is.
const fieldJS = `() => {
  const kind = (e) => {
    if (e.tagName === 'SELECT') return 'select';
    if (e.tagName === 'TEXTAREA') return 'text';
    if (e.tagName === 'INPUT') {
      const t = (e.type || 'text').toLowerCase();
      if (['date', 'datetime-local', 'month', 'week', 'time'].includes(t)) return 'date';
      if (['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(t)) return 'input:' + t;
      return t === 'password' ? 'password' : 'text';
    }
    if (e.isContentEditable) return 'editable';
    return '';
  };
  let el = this;
  let k = kind(el);
  if (!k) {
    const inner = el.querySelector('input:not([type=hidden]), textarea, [contenteditable=""], [contenteditable=true]');
    if (inner) { el = inner; k = kind(el); }
  }
  return {el, kind: k || 'other', disabled: !!(el.disabled || el.readOnly || el.getAttribute('aria-disabled') === 'true')};
}`

// typeText types text into element n, replacing what it held, and presses
// Enter after it when submit is set. Values of ${NAME} variables are typed
// but never returned.
func (o *op) typeText(ctx context.Context, n int, text, resolved string, submit bool, usedVars bool) (string, string, error) {
	t, el, desc, err := o.element(ctx, n)
	if err != nil {
		return "", "", err
	}
	page := t.page.Context(ctx)
	res, err := el.Evaluate(rod.Eval(fieldJS).ByObject())
	if err != nil {
		return "", "", o.elementErr(n, err)
	}
	info, err := proto.RuntimeCallFunctionOn{ObjectID: res.ObjectID, FunctionDeclaration: `function(){ return {kind: this.kind, disabled: this.disabled} }`, ReturnByValue: true}.Call(page)
	if err != nil {
		return "", "", o.elementErr(n, err)
	}
	field, err := page.ElementByJS(rod.Eval(`() => this.el`).This(res))
	_ = page.Release(res)
	if err != nil {
		return "", "", o.elementErr(n, err)
	}
	field = field.Context(ctx)
	kind := info.Result.Value.Get("kind").Str()
	switch {
	case kind == "select":
		return "", "", fault.Invalid("element [%d] is a drop-down; choose with browser_select", n)
	case strings.HasPrefix(kind, "input:"):
		return "", "", fault.Invalid("element [%d] is a %s input, not a text field; use browser_click for it", n, strings.TrimPrefix(kind, "input:"))
	case kind == "other":
		return "", "", fault.Invalid("element [%d] %s is not a text field; type into a textbox of the snapshot (click this one first if it opens one)", n, desc)
	case info.Result.Value.Get("disabled").Bool():
		return "", "", fault.Invalid("element [%d] %s is disabled or read-only; it takes no text now", n, desc)
	}
	if _, err := field.Eval(`() => this.scrollIntoView({block: 'center', behavior: 'instant'})`); err != nil {
		return "", "", o.elementErr(n, err)
	}
	if kind == "date" {
		// Date pickers take no typed text; set the value as a form would.
		if _, err := field.Evaluate(rod.Eval(`(v) => { this.focus(); this.value = v; this.dispatchEvent(new Event('input', {bubbles: true})); this.dispatchEvent(new Event('change', {bubbles: true})); }`, resolved).ByUser()); err != nil {
			return "", "", o.elementErr(n, err)
		}
	} else {
		// Focus it and select what it holds, so the text replaces it.
		if _, err := field.Evaluate(rod.Eval(`() => {
			this.focus();
			if (typeof this.select === 'function' && this.tagName !== 'SELECT') { try { this.select(); } catch (e) {} }
			if (this.isContentEditable) { const r = document.createRange(); r.selectNodeContents(this); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }
		}`).ByUser()); err != nil {
			return "", "", o.elementErr(n, err)
		}
		if resolved == "" {
			if err := pressKey(page, "Delete", "Delete", 46, ""); err != nil {
				return "", "", o.pageErr("clear the field", err)
			}
		} else if err := (proto.InputInsertText{Text: resolved}).Call(page); err != nil {
			return "", "", o.pageErr("type", err)
		}
		_, _ = field.Eval(`() => this.dispatchEvent(new Event('change', {bubbles: true}))`)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Typed %d characters into [%d] %s", utf8.RuneCountInString(resolved), n, desc)
	if usedVars {
		out.WriteString(" (variables resolved; their values are never shown)")
	}
	if kind != "password" && kind != "date" {
		if got, err := field.Eval(`() => this.isContentEditable ? this.innerText : this.value`); err == nil && got.Value.Str() != resolved {
			fmt.Fprintf(&out, "; the field now reads %q (it changed or limited the text)", clip(got.Value.Str(), 200))
		}
	}
	m := o.mark(t)
	if submit {
		if err := pressKey(page, "Enter", "Enter", 13, "\r"); err != nil {
			return "", "", o.pageErr("press Enter", err)
		}
		out.WriteString(", then pressed Enter.")
		out.WriteString(o.settle(ctx, m))
	} else {
		out.WriteString(".")
	}
	action := fmt.Sprintf("typed %q into [%d] %s", clip(text, 60), n, desc)
	if submit {
		action += " and pressed Enter"
	}
	return out.String(), action, nil
}

// pressKey presses and releases one key.
func pressKey(page proto.Client, key, code string, keyCode int, text string) error {
	down := proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeRawKeyDown, Key: key, Code: code, WindowsVirtualKeyCode: keyCode, NativeVirtualKeyCode: keyCode}
	if text != "" {
		down.Type, down.Text, down.UnmodifiedText = proto.InputDispatchKeyEventTypeKeyDown, text, text
	}
	if err := down.Call(page); err != nil {
		return err
	}
	return proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: key, Code: code, WindowsVirtualKeyCode: keyCode, NativeVirtualKeyCode: keyCode}.Call(page)
}

const selectJS = `(want) => {
  if (this.tagName !== 'SELECT') return {error: 'notselect'};
  if (this.disabled) return {error: 'disabled'};
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim();
  const opts = Array.from(this.options);
  const label = (o) => norm(o.label || o.text);
  const w = norm(want), lw = w.toLowerCase();
  let o = opts.find((o) => o.value === want) || opts.find((o) => label(o) === w) || opts.find((o) => label(o).toLowerCase() === lw);
  if (!o) {
    const some = opts.filter((o) => label(o).toLowerCase().includes(lw));
    if (some.length === 1) o = some[0];
  }
  if (!o) return {error: 'nomatch', options: opts.slice(0, 40).map(label), more: Math.max(0, opts.length - 40)};
  if (o.disabled) return {error: 'optdisabled', label: label(o)};
  if (this.multiple) o.selected = true; else this.selectedIndex = o.index;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {error: '', label: label(o), value: o.value};
}`

// selectOption chooses an option of drop-down n by its text or value.
func (o *op) selectOption(ctx context.Context, n int, option string) (string, string, error) {
	t, el, desc, err := o.element(ctx, n)
	if err != nil {
		return "", "", err
	}
	m := o.mark(t)
	res, err := el.Evaluate(rod.Eval(selectJS, option).ByUser())
	if err != nil {
		return "", "", o.elementErr(n, err)
	}
	v := res.Value
	switch v.Get("error").Str() {
	case "":
	case "notselect":
		return "", "", fault.Invalid("element [%d] %s is not a <select> drop-down; click it to open it, call browser_snapshot, then click the option", n, desc)
	case "disabled":
		return "", "", fault.Invalid("drop-down [%d] %s is disabled", n, desc)
	case "optdisabled":
		return "", "", fault.Invalid("option %q of [%d] is disabled", v.Get("label").Str(), n)
	default:
		var opts []string
		for _, x := range v.Get("options").Arr() {
			opts = append(opts, fmt.Sprintf("%q", x.Str()))
		}
		more := ""
		if k := v.Get("more").Int(); k > 0 {
			more = fmt.Sprintf(" and %d more", k)
		}
		return "", "", fault.Invalid("drop-down [%d] has no option %q; its options are %s%s", n, option, strings.Join(opts, ", "), more)
	}
	after := o.settle(ctx, m)
	label := v.Get("label").Str()
	return fmt.Sprintf("Selected %q in [%d] %s.%s", label, n, desc, after), fmt.Sprintf("selected %q in [%d] %s", clip(label, 60), n, desc), nil
}

// scroll scrolls the page (or the area under element n) with the mouse
// wheel, or brings element n into view when no direction is given.
func (o *op) scroll(ctx context.Context, direction string, amount, n int) (string, string, error) {
	var t *tab
	var el *rod.Element
	var desc string
	var err error
	if n > 0 {
		t, el, desc, err = o.element(ctx, n)
	} else {
		t, err = o.p.current(ctx)
	}
	if err != nil {
		return "", "", err
	}
	page := t.page.Context(ctx)
	pos := func() (x, y, height, vh int) {
		r, err := evalPage(page, "", `() => [Math.round(scrollX), Math.round(scrollY), Math.round(document.documentElement.scrollHeight), innerHeight, innerWidth]`)
		if err != nil {
			return 0, 0, 0, 0
		}
		a := r.Value.Arr()
		return a[0].Int(), a[1].Int(), a[2].Int(), a[3].Int()
	}
	if el != nil && direction == "" {
		if _, err := el.Eval(`() => this.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'})`); err != nil {
			return "", "", o.elementErr(n, err)
		}
		_, y, h, vh := pos()
		return fmt.Sprintf("Scrolled [%d] %s into view; the page is at %d of %d px (viewport %d px high).", n, desc, y, h, vh),
			fmt.Sprintf("scrolled to [%d] %s", n, desc), nil
	}
	if direction == "" {
		direction = "down"
	}
	w, h := o.b.Viewport()
	x0, y0, _, vh := pos()
	if vh > 0 {
		h = vh
	}
	if amount <= 0 {
		amount = h * 4 / 5
		if direction == "left" || direction == "right" {
			amount = w * 4 / 5
		}
	}
	var dx, dy float64
	switch direction {
	case "down":
		dy = float64(amount)
	case "up":
		dy = -float64(amount)
	case "right":
		dx = float64(amount)
	case "left":
		dx = -float64(amount)
	default:
		return "", "", fault.Invalid("direction %q is not up, down, left or right", direction)
	}
	cx, cy := float64(w)/2, float64(h)/2
	if el != nil {
		if _, err := el.Eval(`() => this.scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'})`); err != nil {
			return "", "", o.elementErr(n, err)
		}
		if shape, err := el.Shape(); err == nil {
			if p := shape.OnePointInside(); p != nil {
				cx, cy = p.X, p.Y
			}
		}
	}
	if err := (proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseWheel, X: cx, Y: cy, DeltaX: dx, DeltaY: dy}).Call(page); err != nil {
		return "", "", o.pageErr("scroll", err)
	}
	// Wheel scrolling is animated: wait for the position to settle.
	x, y, ph, vh := pos()
	for i := 0; i < 20; i++ {
		time.Sleep(50 * time.Millisecond)
		nx, ny, nh, nvh := pos()
		if nx == x && ny == y && (nx != x0 || ny != y0 || i >= 5) {
			break
		}
		x, y, ph, vh = nx, ny, nh, nvh
	}
	action := fmt.Sprintf("scrolled %s %d px", direction, amount)
	var out string
	switch {
	case x != x0 || y != y0:
		out = fmt.Sprintf("Scrolled %s; the page is now at %d of %d px (viewport %d px high).", direction, y, ph, vh)
		if x != 0 || x0 != 0 {
			out = fmt.Sprintf("Scrolled %s; the page is now at x=%d, y=%d of %d px (viewport %d px high).", direction, x, y, ph, vh)
		}
	case el != nil:
		out = fmt.Sprintf("Scrolled %s inside [%d] %s (the page itself did not move).", direction, n, desc)
	default:
		out = fmt.Sprintf("The page did not move (at %d of %d px): it is at its end, or an inner area scrolled instead; call browser_snapshot to see.", y, ph)
	}
	if el != nil {
		action += fmt.Sprintf(" in [%d] %s", n, desc)
	}
	return out + " Element numbers stay valid.", action, nil
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
		return fault.Invalid("timed out after %s waiting for %s; the page is %s (%q); call browser_snapshot to see what it shows", d.Round(100*time.Millisecond), what, cutURL(u, 200), clip(title, 100))
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
			return fmt.Sprintf("The page had already gone to %s (%q).", cutURL(u, 200), clip(title, 100)), "waited for the page to load", nil
		}
		return fmt.Sprintf("The page went to %s (%q) after %s.", cutURL(u, 200), clip(title, 100), took()), "waited for the page to load", nil
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
	h, err := proto.PageGetNavigationHistory{}.Call(page)
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
	return fmt.Sprintf("Went back to %s (%q). Call browser_snapshot for its elements.", cutURL(u, 300), clip(title, 150)), nil
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
		fmt.Fprintf(&b, "%s tab %d: %q — %s\n", mark, t.id, clip(title, 100), cutURL(t.url, 200))
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
	return fmt.Sprintf("Switched to tab %d: %s (%q). Call browser_snapshot for its elements.", id, cutURL(u, 300), clip(title, 150)), nil
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
	return fmt.Sprintf("Closed tab %d. The current tab is %d: %s (%q).", t.id, cur.id, cutURL(u, 300), clip(title, 150)), nil
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
