package browser

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-rod/rod/lib/proto"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Frame is one picture of the agent's current tab for the Desktop screen.
type Frame struct {
	Data []byte // JPEG; shared between viewers: keep it, never modify it
	// Width and Height are the viewport in CSS pixels: the coordinate space
	// of Event.X and Event.Y (the JPEG itself may have more pixels).
	Width, Height int
	URL, Title    string
	At            time.Time
}

// Screencast quality: JPEG quality and every frame Chromium paints.
const (
	castQuality = 60
	castEvery   = 1
)

// viewer is one Screencast call; it keeps only the newest frame, so a slow
// viewer skips frames instead of slowing the others.
type viewer struct {
	ch chan Frame
}

// Screencast calls fn with frames of the agent's current tab until ctx
// ends (then it returns nil) or the Manager closes (ErrClosed). It starts
// the browser if it is not running. The first frame is the last one seen
// when there is one; afterwards Chromium sends a frame whenever the page
// repaints, so a still page sends none. Several viewers may watch at once;
// a viewer that falls behind gets the newest frame, not a backlog. The
// browser follows its current tab (a switch of tabs moves the picture) and
// is restarted if it crashes while watched. fn runs on the calling
// goroutine; a slow fn only makes its own viewer skip frames.
func (b *Browser) Screencast(ctx context.Context, fn func(Frame)) error {
	if _, err := b.ensure(ctx); err != nil {
		return err
	}
	v := &viewer{ch: make(chan Frame, 1)}
	b.mu.Lock()
	if b.shut {
		b.mu.Unlock()
		return ErrClosed
	}
	b.nextViewer++
	id := b.nextViewer
	b.viewers[id] = v
	last := b.lastFrame
	b.mu.Unlock()
	b.changed()
	defer func() {
		b.mu.Lock()
		delete(b.viewers, id)
		b.lastUsed = b.m.now()
		b.mu.Unlock()
		b.updateCast()
		b.changed()
	}()
	b.updateCast()
	if last != nil {
		fn(*last)
	}
	for {
		p := b.running()
		var done <-chan struct{}
		if p != nil {
			done = p.done
		}
		select {
		case <-ctx.Done():
			return nil
		case <-b.closed:
			return ErrClosed
		case f := <-v.ch:
			fn(f)
		case <-done:
			// Crashed while watched: bring it back (an idle close cannot
			// happen while someone watches).
			if _, err := b.ensure(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// updateCast runs the screencast on the current tab while someone watches,
// and nowhere otherwise.
func (b *Browser) updateCast() {
	b.castMu.Lock()
	defer b.castMu.Unlock()
	b.mu.Lock()
	watched := len(b.viewers) > 0
	p := b.proc
	b.mu.Unlock()
	if p == nil || !p.alive() {
		return
	}
	p.mu.Lock()
	var want *tab
	if watched {
		want = p.active
	}
	old := p.casting
	p.mu.Unlock()
	if old == want {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	if old != nil && p.attach(old) == nil {
		_ = proto.PageStopScreencast{}.Call(old.page.Context(ctx))
	}
	if want != nil && p.attach(want) != nil {
		want = nil
	}
	// The first frame may come before startScreencast returns.
	p.mu.Lock()
	p.casting = want
	p.mu.Unlock()
	if want == nil {
		return
	}
	if err := startCast(want.page.Context(ctx)); err != nil {
		b.m.log.Debug("start screencast", "agent", b.agentID, "err", err)
		p.mu.Lock()
		p.casting = nil
		p.mu.Unlock()
	}
}

// startCast starts Chromium's screencast of page, in Rerun's format.
func startCast(page proto.Client) error {
	q, every := castQuality, castEvery
	return proto.PageStartScreencast{Format: proto.PageStartScreencastFormatJpeg, Quality: &q, EveryNthFrame: &every}.Call(page)
}

// recast restarts the screencast of t when it is still the tab being cast.
// Chromium's capture can stay with the document a tab has left: once a new
// page has loaded, its first frames come and then none, whatever it paints
// (a click's effect never shows). A new screencast captures the page as it
// is now and sends its picture at once.
func (b *Browser) recast(t *tab) {
	b.castMu.Lock()
	defer b.castMu.Unlock()
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p == nil || !p.alive() {
		return
	}
	p.mu.Lock()
	casting := p.casting == t
	p.mu.Unlock()
	if !casting {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	page := t.page.Context(ctx)
	_ = proto.PageStopScreencast{}.Call(page)
	if err := startCast(page); err != nil {
		b.m.log.Debug("restart screencast", "agent", b.agentID, "err", err)
	}
}

// frame acknowledges a screencast frame (Chromium sends no more until it
// is) and hands it to the viewers.
func (p *proc) frame(session proto.TargetSessionID, e *proto.PageScreencastFrame) {
	p.mu.Lock()
	t := p.tabBySession(session)
	if t == nil {
		p.mu.Unlock()
		return
	}
	page, casting := t.page, t == p.casting
	u, title := t.url, t.title
	p.mu.Unlock()
	// Every frame is acknowledged, also one that arrives while the cast
	// moves to another tab: Chromium sends nothing more until it is.
	go func() { _ = proto.PageScreencastFrameAck{SessionID: e.SessionID}.Call(page) }()
	if !casting {
		return
	}
	p.freshen(t)

	b := p.b
	f := Frame{Data: e.Data, URL: u, Title: title, At: b.m.now()}
	if md := e.Metadata; md != nil {
		f.Width, f.Height = int(math.Round(md.DeviceWidth)), int(math.Round(md.DeviceHeight))
	}
	b.mu.Lock()
	if f.Width > 0 && f.Height > 0 {
		b.viewport = [2]int{f.Width, f.Height}
	} else {
		f.Width, f.Height = b.viewport[0], b.viewport[1]
	}
	b.lastFrame = &f
	for _, v := range b.viewers {
		select {
		case v.ch <- f:
		default:
			select { // drop the stale frame for the newer one
			case <-v.ch:
			default:
			}
			select {
			case v.ch <- f:
			default:
			}
		}
	}
	b.mu.Unlock()
}

// freshenEvery is how often, at most, a watched tab's address and title are
// asked for anew.
const freshenEvery = 500 * time.Millisecond

// freshen asks for t's address and title soon after a frame, at most every
// freshenEvery, and announces a change: Chromium sends no event when a page
// only sets document.title, so the Desktop would show a stale title.
func (p *proc) freshen(t *tab) {
	p.mu.Lock()
	if t.infoDue {
		p.mu.Unlock()
		return
	}
	t.infoDue = true
	wait := freshenEvery - time.Since(t.infoAt)
	p.mu.Unlock()
	time.AfterFunc(max(wait, 0), func() {
		p.mu.Lock()
		t.infoDue, t.infoAt = false, time.Now()
		u0, title0 := t.url, t.title
		p.mu.Unlock()
		if u, title := p.info(t); u != u0 || title != title0 {
			p.b.changed()
		}
	})
}

// Viewport is the size of the current tab's viewport in CSS pixels, as of
// the last frame or page measurement.
func (b *Browser) Viewport() (w, h int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.viewport[0], b.viewport[1]
}

// Event is one input of the person on the Desktop screen.
type Event struct {
	// Type is mousemove, mousedown, mouseup, click, wheel, keydown, keyup or
	// type (insert Text as typed or pasted, e.g. from an IME).
	Type string `json:"type"`
	// X and Y are in CSS pixels of the viewport (Frame.Width × Frame.Height):
	// the panel scales its own coordinates by Width/panelWidth.
	X float64 `json:"x"`
	Y float64 `json:"y"`
	// Button is left (default), middle or right.
	Button string `json:"button,omitempty"`
	// DeltaX and DeltaY scroll, in CSS pixels, for wheel.
	DeltaX float64 `json:"deltaX,omitempty"`
	DeltaY float64 `json:"deltaY,omitempty"`
	// Key and Code are KeyboardEvent.key and .code ("a"/"KeyA",
	// "Enter"/"Enter"); KeyCode is KeyboardEvent.keyCode when known (else
	// derived from Key).
	Key     string `json:"key,omitempty"`
	Code    string `json:"code,omitempty"`
	KeyCode int    `json:"keyCode,omitempty"`
	// Text is the text a keydown produces (default: Key when it is one
	// printable character and neither Ctrl nor Meta is held) or the text of
	// a type event.
	Text string `json:"text,omitempty"`
	// Modifiers is a bit set: 1 Alt, 2 Ctrl, 4 Meta (Command), 8 Shift.
	Modifiers int `json:"modifiers,omitempty"`
	// ClickCount is 2 for the second click of a double click (default 1).
	ClickCount int `json:"clickCount,omitempty"`
}

// Modifier bits of Event.Modifiers.
const (
	ModAlt   = 1
	ModCtrl  = 2
	ModMeta  = 4
	ModShift = 8
)

// personsTab is the tab the person's input and address bar act on: the
// browser's current one, started when it is not running.
func (b *Browser) personsTab(ctx context.Context) (*proc, *tab, error) {
	p, err := b.ensure(ctx)
	if err != nil {
		return nil, nil, err
	}
	t, err := p.current(ctx)
	if err != nil {
		return nil, nil, err
	}
	b.touch()
	return p, t, nil
}

// Input dispatches one input of the person to the current tab. The person
// must hold the browser (TakeOver), or it fails with ErrNotInControl.
func (b *Browser) Input(ctx context.Context, e Event) error {
	if !b.InControl() {
		return ErrNotInControl
	}
	_, t, err := b.personsTab(ctx)
	if err != nil {
		return err
	}
	page := t.page.Context(ctx)
	button, mask := mouseButton(e.Button)
	clicks := e.ClickCount
	if clicks <= 0 {
		clicks = 1
	}
	mouse := func(typ proto.InputDispatchMouseEventType, btn proto.InputMouseButton, buttons, count int) error {
		return proto.InputDispatchMouseEvent{
			Type: typ, X: e.X, Y: e.Y, Modifiers: e.Modifiers, Button: btn, Buttons: &buttons, ClickCount: count,
		}.Call(page)
	}
	switch e.Type {
	case "mousemove":
		b.mu.Lock()
		held := b.buttons
		b.mu.Unlock()
		return mouse(proto.InputDispatchMouseEventTypeMouseMoved, heldButton(held), held, 0)
	case "mousedown":
		b.mu.Lock()
		b.buttons |= mask
		held := b.buttons
		b.mu.Unlock()
		return mouse(proto.InputDispatchMouseEventTypeMousePressed, button, held, clicks)
	case "mouseup":
		b.mu.Lock()
		b.buttons &^= mask
		held := b.buttons
		b.mu.Unlock()
		return mouse(proto.InputDispatchMouseEventTypeMouseReleased, button, held, clicks)
	case "click":
		if err := mouse(proto.InputDispatchMouseEventTypeMouseMoved, proto.InputMouseButtonNone, 0, 0); err != nil {
			return err
		}
		if err := mouse(proto.InputDispatchMouseEventTypeMousePressed, button, mask, clicks); err != nil {
			return err
		}
		return mouse(proto.InputDispatchMouseEventTypeMouseReleased, button, 0, clicks)
	case "wheel":
		return proto.InputDispatchMouseEvent{
			Type: proto.InputDispatchMouseEventTypeMouseWheel, X: e.X, Y: e.Y, DeltaX: e.DeltaX, DeltaY: e.DeltaY, Modifiers: e.Modifiers,
		}.Call(page)
	case "keydown", "keyup":
		return keyEvent(page, e)
	case "type":
		if e.Text == "" {
			return nil
		}
		return proto.InputInsertText{Text: e.Text}.Call(page)
	default:
		return fault.Invalid("unknown input type %q; use mousemove, mousedown, mouseup, click, wheel, keydown, keyup or type", e.Type)
	}
}

func mouseButton(name string) (proto.InputMouseButton, int) {
	switch name {
	case "middle":
		return proto.InputMouseButtonMiddle, 4
	case "right":
		return proto.InputMouseButtonRight, 2
	default:
		return proto.InputMouseButtonLeft, 1
	}
}

// heldButton names a held button for a drag's mousemove.
func heldButton(mask int) proto.InputMouseButton {
	switch {
	case mask&1 != 0:
		return proto.InputMouseButtonLeft
	case mask&2 != 0:
		return proto.InputMouseButtonRight
	case mask&4 != 0:
		return proto.InputMouseButtonMiddle
	}
	return proto.InputMouseButtonNone
}

// keyEvent dispatches a keydown or keyup. Chromium needs the Windows key
// code for keys that edit or move (Backspace, arrows, Tab) and the text for
// keys that type.
func keyEvent(page proto.Client, e Event) error {
	code := e.KeyCode
	if code == 0 {
		code = keyCode(e.Key, e.Code)
	}
	ev := proto.InputDispatchKeyEvent{
		Key: e.Key, Code: e.Code, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code, Modifiers: e.Modifiers,
	}
	if e.Type == "keyup" {
		ev.Type = proto.InputDispatchKeyEventTypeKeyUp
		return ev.Call(page)
	}
	text := e.Text
	if text == "" && e.Modifiers&(ModCtrl|ModMeta) == 0 {
		switch {
		case e.Key == "Enter":
			text = "\r"
		case utf8.RuneCountInString(e.Key) == 1:
			text = e.Key
		}
	}
	if text != "" {
		ev.Type = proto.InputDispatchKeyEventTypeKeyDown
		ev.Text, ev.UnmodifiedText = text, text
	} else {
		ev.Type = proto.InputDispatchKeyEventTypeRawKeyDown
	}
	return ev.Call(page)
}

// keyCodes maps KeyboardEvent.key of the non-character keys to Windows
// virtual key codes.
var keyCodes = map[string]int{
	"Backspace": 8, "Tab": 9, "Enter": 13, "Shift": 16, "Control": 17, "Alt": 18, "Pause": 19, "CapsLock": 20,
	"Escape": 27, " ": 32, "PageUp": 33, "PageDown": 34, "End": 35, "Home": 36, "ArrowLeft": 37, "ArrowUp": 38,
	"ArrowRight": 39, "ArrowDown": 40, "Insert": 45, "Delete": 46, "Meta": 91, "ContextMenu": 93,
	"F1": 112, "F2": 113, "F3": 114, "F4": 115, "F5": 116, "F6": 117, "F7": 118, "F8": 119, "F9": 120,
	"F10": 121, "F11": 122, "F12": 123,
	";": 186, "=": 187, ",": 188, "-": 189, ".": 190, "/": 191, "`": 192, "[": 219, "\\": 220, "]": 221, "'": 222,
}

// keyCode derives the Windows virtual key code of a key.
func keyCode(key, code string) int {
	if c, ok := keyCodes[key]; ok {
		return c
	}
	if len(key) == 1 {
		c := key[0]
		switch {
		case 'a' <= c && c <= 'z':
			return int(c - 'a' + 'A')
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			return int(c)
		}
	}
	// Shifted or non-Latin characters: the physical key tells.
	if k, ok := strings.CutPrefix(code, "Key"); ok && len(k) == 1 {
		return int(k[0])
	}
	if d, ok := strings.CutPrefix(code, "Digit"); ok && len(d) == 1 {
		return int(d[0])
	}
	return 0
}
