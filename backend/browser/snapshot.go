package browser

import (
	"context"
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
	// Past the cap what a value reaching across it needs, to mask it
	// whole before cutting.
	over := min(3*max(o.vars.Longest(), o.b.longest()), 1<<20)
	obj, err := evalPage(page, snapGroup, snapshotJS, maxSnapshotText+over)
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
	fmt.Fprintf(&hd, "%q — %s\n", clip(o.redact(title), 150), cutURL(o.redact(u), 300))
	fmt.Fprintf(&hd, "Viewport %d×%d; scrolled to %d of %d px. Elements: %d.\n\n", w, h, v.Get("scrollY").Int(), v.Get("scrollHeight").Int(), len(els))
	// Masked before any cut: here, and pageOf's.
	body := o.redact(v.Get("text").Str())
	full := v.Get("full").Bool()
	if len(body) > maxSnapshotText {
		cut := maxSnapshotText
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body, full = body[:cut], true
	}
	if strings.TrimSpace(body) == "" {
		body = "(the page shows no text)"
	}
	if full {
		body += "\n[the page goes on; this is as much as a snapshot holds]"
	}
	text := hd.String() + body

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
