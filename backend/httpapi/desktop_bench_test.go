package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// BenchmarkScreenSocket measures the Desktop screen as the panel gets it,
// over the real WebSocket on loopback: frames per second of a page that
// repaints every frame, and the time from the person's input message to the
// next picture (a still page that repaints on mousedown).
func BenchmarkScreenSocket(b *testing.B) {
	e := desktopEnv(b, workspace.Config{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/anim":
			io.WriteString(w, `<!doctype html><title>Anim</title><div id="d" style="width:400px;height:400px"></div>
				<script>let i = 0; (function f() { i++; document.getElementById('d').style.background = 'hsl(' + (i * 7 % 360) + ',80%,50%)'; requestAnimationFrame(f); })()</script>`)
		default:
			io.WriteString(w, `<!doctype html><title>Toggle</title><div style="position:absolute;inset:0;background:#fff"
				onmousedown="this.style.background = this.style.background === 'black' ? 'white' : 'black'"></div>`)
		}
	}))
	defer site.Close()
	screenOf := func(name, page string) (*screen, string) {
		var a struct{ ID string }
		if code := e.do(b, "POST", "/api/workspaces/"+e.ws+"/agents", `{"name":"`+name+`","box_id":"`+e.box+`"}`, &a); code != 201 {
			b.Fatalf("create agent: %d", code)
		}
		id := a.ID
		path := "/api/workspaces/" + e.ws + "/agents/" + id + "/browser"
		if code := e.do(b, "POST", path+"/start", `{"url":"`+site.URL+page+`"}`, nil); code != 200 {
			b.Fatalf("start %s: %d", page, code)
		}
		scr, _, err := dialScreen(b, wsURL(e, path+"/screen"), bearer())
		if err != nil {
			b.Fatal(err)
		}
		scr.await(b, "a frame of "+page, func(m map[string]any) bool { return m["url"] == site.URL+page })
		return scr, path
	}

	anim, _ := screenOf("Animator", "/anim")
	const window = 2 * time.Second
	var frames, size int
	var spent time.Duration
	for b.Loop() {
		t0 := time.Now()
		end := time.After(window)
	count:
		for {
			select {
			case m := <-anim.msgs:
				if m.err != nil {
					b.Fatal(m.err)
				}
				if m.typ == websocket.MessageBinary {
					frames++
					size += len(m.data)
				}
			case <-end:
				break count
			}
		}
		spent += time.Since(t0)
	}
	anim.c.CloseNow()
	b.ReportMetric(float64(frames)/spent.Seconds(), "fps")
	b.ReportMetric(float64(size)/float64(max(frames, 1))/1024, "KiB/frame")

	toggle, path := screenOf("Toggler", "/toggle")
	if code := e.do(b, "POST", path+"/take-over", "", nil); code != 200 {
		b.Fatalf("take over: %d", code)
	}
	var lat []time.Duration
	for i := 0; i < 40; i++ {
		// Let the page settle, and drop what came meanwhile.
		quiet := time.After(80 * time.Millisecond)
	drain:
		for {
			select {
			case <-toggle.msgs:
			case <-quiet:
				break drain
			}
		}
		t0 := time.Now()
		toggle.send(b, map[string]any{"type": "mousedown", "x": 300, "y": 300, "button": "left", "click_count": 1})
	next:
		for {
			select {
			case m := <-toggle.msgs:
				if m.err != nil {
					b.Fatal(m.err)
				}
				if m.typ == websocket.MessageBinary {
					lat = append(lat, time.Since(t0))
					break next
				}
			case <-time.After(waittest.Patience):
				b.Fatal("no frame after an input")
			}
		}
		toggle.send(b, map[string]any{"type": "mouseup", "x": 300, "y": 300, "button": "left", "click_count": 1})
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(lat))/1000, "ms/input-frame")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms/input-frame-p95")
}
