package browser

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"github.com/rerun-build/rerun-desktop/backend/fault"
)

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
// but never returned. check, set when text used variables, is asked first
// whether they may go to the host of the field's page (or frame): an error
// from it types nothing.
func (o *op) typeText(ctx context.Context, n int, text, resolved string, submit bool, check func(host string) error) (string, string, error) {
	usedVars := check != nil
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
	if check != nil {
		// The document the field belongs to: a frame may come from
		// another site than its page.
		where, err := field.Eval(`() => this.ownerDocument.location.host || this.ownerDocument.location.protocol`)
		if err != nil {
			return "", "", o.elementErr(n, err)
		}
		if err := check(where.Value.Str()); err != nil {
			return "", "", fault.Invalid("nothing was typed into [%d] %s: %s", n, desc, fault.Message(err))
		}
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
			fmt.Fprintf(&out, "; the field now reads %q (it changed or limited the text)", o.clip(got.Value.Str(), 200))
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
