package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// frames watches b's screen and returns a channel of its frames.
func frames(t testing.TB, b *Browser) <-chan Frame {
	t.Helper()
	ch := make(chan Frame, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- b.Screencast(ctx, func(f Frame) {
			f.Data = bytes.Clone(f.Data)
			select {
			case ch <- f:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Screencast: %v", err)
		}
	})
	return ch
}

// frameWhere waits up to waittest.Patience for a frame for which ok holds.
func frameWhere(t testing.TB, ch <-chan Frame, ok func(Frame) bool) Frame {
	t.Helper()
	timeout := time.After(waittest.Patience)
	for {
		select {
		case f := <-ch:
			if ok(f) {
				return f
			}
		case <-timeout:
			t.Fatalf("no matching screen frame within %s", waittest.Patience)
		}
	}
}

// reddish reports whether the frame's pixel at the top left is the red the
// clicker page turns to.
func reddish(f Frame) bool {
	img, err := jpeg.Decode(bytes.NewReader(f.Data))
	if err != nil {
		return false
	}
	r, g, b, _ := img.At(10, 10).RGBA()
	return r>>8 > 150 && g>>8 < 90 && b>>8 < 90
}

// isBlack reports whether the frame's pixel at the top left is black (the
// toggle page's colour after an odd number of clicks); false for white, or
// a frame that does not decode.
func isBlack(f Frame) bool {
	img, err := jpeg.Decode(bytes.NewReader(f.Data))
	if err != nil {
		return false
	}
	r, g, b, _ := img.At(10, 10).RGBA()
	return r>>8 < 60 && g>>8 < 60 && b>>8 < 60
}

// TestScreenFollowsTheTabToANewPage watches a tab that goes to another page
// and clicks there: each click's effect must reach the screen. Chromium's
// capture could stay with the page the tab had left, sending the new page's
// first frames and then none (on a busy machine, about one time in three);
// the screencast now starts again once a page has loaded.
func TestScreenFollowsTheTabToANewPage(t *testing.T) {
	s, m, env := setup(t, "follow")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/anim"})
	b, _ := m.Lookup("follow")
	ch := frames(t, b)
	frameWhere(t, ch, func(f Frame) bool { return strings.HasSuffix(f.URL, "/anim") })
	watch := time.After(2 * time.Second) // the scenario: a person watching an animated page a while
	for watching := true; watching; {
		select {
		case <-ch:
		case <-watch:
			watching = false
		}
	}
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/toggle"})
	frameWhere(t, ch, func(f Frame) bool { return strings.HasSuffix(f.URL, "/toggle") })
	b.TakeOver()
	defer b.HandBack()
	black := false // the page starts white
	for i := range 6 {
		time.Sleep(50 * time.Millisecond) // a person's pace
		black = !black
		if err := b.Input(t.Context(), Event{Type: "mousedown", X: 300, Y: 300}); err != nil {
			t.Fatal(err)
		}
		waittest.Until(t, fmt.Sprintf("click %d on the screen", i+1), func() bool {
			select {
			case f := <-ch:
				return isBlack(f) == black
			default:
				return false
			}
		})
		if err := b.Input(t.Context(), Event{Type: "mouseup", X: 300, Y: 300}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestScreencastAndInput(t *testing.T) {
	s, m, env := setup(t, "screen")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/clicker"})
	b, _ := m.Lookup("screen")
	ch := frames(t, b)

	f := frameWhere(t, ch, func(f Frame) bool { return strings.HasSuffix(f.URL, "/clicker") })
	if !bytes.HasPrefix(f.Data, []byte{0xff, 0xd8}) {
		t.Fatalf("frame is not a JPEG")
	}
	if w, h := b.Viewport(); f.Width != w || f.Height != h || w < 800 || h < 500 {
		t.Errorf("frame is %d×%d, viewport %d×%d; want the same, and a laptop-sized screen", f.Width, f.Height, w, h)
	}
	if f.Title != "Clicker" {
		t.Errorf("frame title = %q", f.Title)
	}
	if reddish(f) {
		t.Fatal("the page is red before any click")
	}

	ctx := t.Context()
	if err := b.Input(ctx, Event{Type: "click", X: 200, Y: 140}); !errors.Is(err, ErrNotInControl) {
		t.Fatalf("Input without TakeOver = %v, want ErrNotInControl", err)
	}
	b.TakeOver()
	if !b.InControl() {
		t.Fatal("InControl after TakeOver = false")
	}
	if err := b.Input(ctx, Event{Type: "click", X: 200, Y: 140}); err != nil {
		t.Fatal(err)
	}
	frameWhere(t, ch, reddish) // the click reached the button, and the screen shows it

	// Keyboard: click into the field, type "hi!", fix a typo with Backspace.
	for _, e := range []Event{
		{Type: "click", X: 250, Y: 320},
		{Type: "keydown", Key: "h", Code: "KeyH"}, {Type: "keyup", Key: "h", Code: "KeyH"},
		{Type: "keydown", Key: "x", Code: "KeyX"}, {Type: "keyup", Key: "x", Code: "KeyX"},
		{Type: "keydown", Key: "Backspace", Code: "Backspace"}, {Type: "keyup", Key: "Backspace", Code: "Backspace"},
		{Type: "keydown", Key: "I", Code: "KeyI", Modifiers: ModShift}, {Type: "keyup", Key: "I", Code: "KeyI", Modifiers: ModShift},
		{Type: "type", Text: "!"},
		{Type: "wheel", X: 400, Y: 400, DeltaY: 100},
	} {
		if err := b.Input(ctx, e); err != nil {
			t.Fatalf("Input(%+v): %v", e, err)
		}
	}
	if err := b.Input(ctx, Event{Type: "pinch"}); err == nil {
		t.Error("an unknown input type was accepted")
	}
	b.HandBack()
	snap := must(t, m, env, "browser_snapshot", nil)
	if !strings.Contains(snap, `button "Clicked!"`) || !strings.Contains(snap, `textbox "Field" value="hI!"`) {
		t.Errorf("after the person's input the page reads:\n%s", snap)
	}
}

func TestTakeOverHoldsToolsUntilHandBack(t *testing.T) {
	s, m, env := setup(t, "hands")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/clicker"})
	old := must(t, m, env, "browser_snapshot", nil)
	b, _ := m.Lookup("hands")

	b.TakeOver()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := call(t, m, env, "browser_tabs", nil)
		done <- result{out, err}
	}()
	waitUntil(t, func() bool { return b.State().Waiting })
	select {
	case r := <-done:
		t.Fatalf("a tool ran while the person held the browser: %q, %v", r.out, r.err)
	default:
	}
	// The person follows a link, then hands back.
	if err := b.Input(t.Context(), Event{Type: "click", X: 130, Y: 408}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { st := b.State(); return strings.HasSuffix(st.URL, "/next") && st.Title == "Next" })
	b.HandBack()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	want := "The person took over the browser and handed it back; the page is now " + s.URL + "/next (Next)."
	if !strings.HasPrefix(r.out, want) {
		t.Errorf("first result after the hand-back = %q, want it to start with %q", r.out, want)
	}
	if out := must(t, m, env, "browser_tabs", nil); strings.Contains(out, "took over") {
		t.Errorf("the hand-back note came twice: %q", out)
	}
	mustFail(t, m, env, "browser_click", map[string]any{"element": ref(t, old, "Press me")}, "the person has used the browser since")

	// A run cancelled while it waits for the person stops waiting.
	b.TakeOver()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		tl := m.Tools()[0]
		_, err := tl.Run(ctx, env, []byte(`{"url":"about:blank"}`))
		errc <- err
	}()
	waitUntil(t, func() bool { return b.State().Waiting })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled waiting tool returned %v, want context.Canceled", err)
	}
	if b.State().Waiting {
		t.Error("State().Waiting after the cancelled tool left")
	}
	b.HandBack()
}
