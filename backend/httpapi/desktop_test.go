package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// desktopEnv is newEnvWith whose agents' browsers run the installed
// Chromium; the test is skipped without one.
func desktopEnv(t testing.TB, cfg workspace.Config) *env {
	t.Helper()
	bin, err := browser.FindChrome(os.Getenv("RERUN_CHROME"))
	if errors.Is(err, browser.ErrNoBrowser) {
		t.Skip(err)
	}
	cfg.Chrome = bin
	return newEnvWith(t, cfg)
}

// pages is the web an agent browses: a button that changes the page when
// clicked, at a known place.
func pages(t testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>Captcha</title></head><body style="margin:0">
			<button style="position:absolute;left:100px;top:100px;width:200px;height:80px"
				onclick="document.title = 'Solved'; this.textContent = 'Thanks'">I am human</button></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// screenMsg is one message of the screen socket.
type screenMsg struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

func (m screenMsg) json() map[string]any {
	var v map[string]any
	json.Unmarshal(m.data, &v)
	return v
}

// screen is a client of the screen socket: every message it gets, in order.
type screen struct {
	c    *websocket.Conn
	msgs chan screenMsg
}

func dialScreen(t testing.TB, url string, header http.Header) (*screen, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	c, res, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		return nil, res, err
	}
	c.SetReadLimit(16 << 20)
	s := &screen{c: c, msgs: make(chan screenMsg, 1024)}
	go func() {
		for {
			typ, data, err := c.Read(context.Background())
			s.msgs <- screenMsg{typ, data, err}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { c.CloseNow() })
	return s, res, nil
}

// await returns the first message for which ok holds; frames are handed
// over as their header with the picture in "jpeg".
func (s *screen) await(t testing.TB, what string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.After(waittest.Patience)
	var header map[string]any
	for {
		select {
		case m := <-s.msgs:
			if m.err != nil {
				t.Fatalf("waiting for %s: the socket ended: %v", what, m.err)
			}
			if m.typ == websocket.MessageBinary {
				if header == nil {
					t.Fatalf("a picture came without a header before it")
				}
				header["jpeg"] = m.data
				if ok(header) {
					return header
				}
				header = nil
				continue
			}
			if header != nil {
				t.Fatalf("a header came without its picture: %v", header)
			}
			v := m.json()
			if v["type"] == "frame" {
				header = v
				continue
			}
			if ok(v) {
				return v
			}
			t.Logf("skipped %s", m.data)
		case <-deadline:
			t.Fatalf("no %s on the screen socket", what)
		}
	}
}

func (s *screen) send(t testing.TB, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := s.c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

func wsURL(e *env, path string) string { return "ws" + strings.TrimPrefix(e.srv.URL, "http") + path }

func bearer() http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

// The whole Desktop loop: an agent asks for the person's hands, the person
// watches its screen, is refused until they take over, clicks the page
// through the socket, hands back, and the run goes on from the page they
// left.
func TestDesktopTakeoverThroughTheScreen(t *testing.T) {
	fake := llmtest.New(t)
	e := desktopEnv(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	site := pages(t)
	base := "/api/workspaces/" + e.ws
	var a struct{ ID string }
	e.do(t, "POST", base+"/agents", `{"name":"Surfer","box_id":"`+e.box+`","capabilities":["browser"]}`, &a)
	agentBase := base + "/agents/" + a.ID + "/browser"

	var st map[string]any
	if code := e.do(t, "GET", agentBase, "", &st); code != 200 || st["running"] != false || st["last_action_at"] != nil {
		t.Fatalf("state before any use: %d %v", code, st)
	}
	var refusal struct{ Error string }
	if code := e.do(t, "POST", agentBase+"/start", `{"url":"`+e.srv.URL+`/api/info"}`, &refusal); code != 400 || !strings.Contains(refusal.Error, "local server") {
		t.Fatalf("start on this server's own address: %d %q, want 400", code, refusal.Error)
	}
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "o", Name: "browser_open", Args: `{"url":"` + site.URL + `/login"}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "s", Name: "browser_screenshot", Args: `{}`}),
		llmtest.Reply{Text: "A captcha.", ToolCalls: []llmtest.ToolCall{{ID: "h", Name: "request_takeover", Args: `{"reason":"Prove you are human"}`}}},
		llmtest.Text("Signed in, thanks."))
	var started run.Run
	e.do(t, "POST", base+"/agents/"+a.ID+"/messages", `{"text":"sign in"}`, &started)
	e.waitStatus(t, started.ID, "paused")

	reqs := fake.Requests()
	if !strings.Contains(reqs[0].System, "request_takeover") {
		t.Error("the prompt has no browser guide")
	}
	var imgs int
	for _, m := range reqs[2].Messages { // OpenAI's wire: a user message after the tool result
		for _, img := range m.Images {
			if img.MediaType == "image/png" && bytes.HasPrefix(img.Data, []byte("\x89PNG")) {
				imgs++
			}
		}
	}
	if imgs != 1 {
		t.Errorf("the model got %d screenshot PNGs, want 1", imgs)
	}
	var open []run.Pause
	e.do(t, "GET", base+"/pauses?status=open&agent_id="+a.ID, "", &open)
	var card pause.TakeoverRequest
	if len(open) == 1 {
		json.Unmarshal(open[0].Request, &card)
	}
	if len(open) != 1 || open[0].Kind != "takeover" || card.Reason != "Prove you are human" || card.URL != site.URL+"/login" {
		t.Fatalf("open cards = %+v", open)
	}

	scr, _, err := dialScreen(t, wsURL(e, agentBase+"/screen"), bearer())
	if err != nil {
		t.Fatal(err)
	}
	first := scr.await(t, "the state", func(m map[string]any) bool { return m["type"] == "state" })
	if first["running"] != true || first["url"] != site.URL+"/login" || first["last_action"] != "took a screenshot" || first["in_control"] != false {
		t.Fatalf("first state = %v", first)
	}
	frame := scr.await(t, "a frame of the page", func(m map[string]any) bool { return m["url"] == site.URL+"/login" })
	if jpeg, _ := frame["jpeg"].([]byte); !bytes.HasPrefix(jpeg, []byte{0xff, 0xd8}) || frame["width"].(float64) < 300 || frame["height"].(float64) < 200 {
		t.Fatalf("frame %v x %v, %d bytes not a JPEG", frame["width"], frame["height"], len(jpeg))
	}
	// The button's middle, in the frame's CSS pixels.
	click := map[string]any{"type": "click", "x": 200, "y": 140, "button": "left", "click_count": 1}

	scr.send(t, click)
	refused := scr.await(t, "a refusal", func(m map[string]any) bool { return m["type"] == "error" })
	if !strings.Contains(refused["message"].(string), "take over") {
		t.Fatalf("refusal = %v", refused)
	}
	if e.do(t, "GET", agentBase, "", &st); st["title"] != "Captcha" {
		t.Fatalf("input while the agent holds the browser reached the page: title %v", st["title"])
	}

	if code := e.do(t, "POST", agentBase+"/take-over", "", &st); code != 200 || st["in_control"] != true {
		t.Fatalf("take over: %d %v", code, st)
	}
	scr.await(t, "the take-over", func(m map[string]any) bool { return m["type"] == "state" && m["in_control"] == true })
	scr.send(t, click)
	scr.await(t, "the clicked page", func(m map[string]any) bool { return m["title"] == "Solved" })

	if code := e.do(t, "POST", agentBase+"/hand-back", "", &st); code != 200 || st["in_control"] != false || st["title"] != "Solved" {
		t.Fatalf("hand back: %d %v", code, st)
	}
	done := e.waitRun(t, started.ID)
	if done["status"] != "done" || done["output"] != "Signed in, thanks." {
		t.Fatalf("run after the hand-back = %v", done)
	}
	reqs = fake.Requests()
	var told string
	for _, m := range reqs[len(reqs)-1].Messages {
		for _, tr := range m.ToolResults {
			if tr.ToolCallID == "h" {
				told = tr.Content
			}
		}
	}
	if want := "The person handed the browser back; the page is now " + site.URL + "/login (Solved)."; !strings.Contains(told, want) {
		t.Fatalf("the agent read %q, want %q", told, want)
	}
	var p run.Pause
	e.do(t, "GET", base+"/pauses/"+open[0].ID, "", &p)
	if p.Status != "answered" || string(p.Answer) != `{"handed_back":true}` {
		t.Fatalf("card after the hand-back = %s %s", p.Status, p.Answer)
	}

	// The window's page: its origin, its token in the address.
	win, _, err := dialScreen(t, wsURL(e, agentBase+"/screen?token="+token), http.Header{"Origin": {"wails://wails"}})
	if err != nil {
		t.Fatalf("the window's screen socket: %v", err)
	}
	win.await(t, "the window's state", func(m map[string]any) bool { return m["type"] == "state" && m["title"] == "Solved" })
	// WebView2's origin (the Windows window).
	winWin, _, err := dialScreen(t, wsURL(e, agentBase+"/screen?token="+token), http.Header{"Origin": {"http://wails.localhost"}})
	if err != nil {
		t.Fatalf("the Windows window's screen socket: %v", err)
	}
	winWin.await(t, "the Windows window's state", func(m map[string]any) bool { return m["type"] == "state" && m["title"] == "Solved" })

	// A client that stops answering is dropped: its subscription to the
	// changes ends.
	before := e.home.Events().Subscribers()
	mute, _, err := websocket.Dial(context.Background(), wsURL(e, agentBase+"/screen"), &websocket.DialOptions{HTTPHeader: bearer()})
	if err != nil {
		t.Fatal(err)
	}
	defer mute.CloseNow() // never read from: it answers no ping
	waittest.Until(t, "the mute client subscribes", func() bool { return e.home.Events().Subscribers() > before })
	waittest.Until(t, "a client that answers no ping is dropped (ping timeout: 1 s)", func() bool { return e.home.Events().Subscribers() <= before })
}

// Who may open the screen, and who may hand back: only this app's pages.
func TestScreenGuard(t *testing.T) {
	e := newEnv(t)
	id := e.agent(t, "Guarded")
	path := "/api/workspaces/" + e.ws + "/agents/" + id + "/browser"
	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		want   int
	}{
		{"no token", path + "/screen", nil, 401},
		{"wrong token in the address", path + "/screen?token=nope", nil, 401},
		{"foreign origin", path + "/screen?token=" + token, http.Header{"Origin": {"https://evil.example"}}, 403},
		{"other local page", path + "/screen?token=" + token, http.Header{"Origin": {"http://127.0.0.1:1"}}, 403},
		{"unknown agent", "/api/workspaces/" + e.ws + "/agents/nope/browser/screen", bearer(), 404},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, res, err := dialScreen(t, wsURL(e, tc.url), tc.header)
			if err == nil || res == nil || res.StatusCode != tc.want {
				code := 0
				if res != nil {
					code = res.StatusCode
				}
				t.Fatalf("dial = %v, status %d, want %d", err, code, tc.want)
			}
		})
	}
	// A token in the address opens nothing but a WebSocket.
	req, _ := http.NewRequest("GET", e.srv.URL+path+"?token="+token, nil)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 401 {
		t.Fatalf("plain GET with ?token=: %v %v, want 401", res.StatusCode, err)
	}
	// An API key (what MCP clients hold) answers no takeover card.
	var key struct{ Key string }
	e.do(t, "POST", "/api/workspaces/"+e.ws+"/keys", `{"name":"Cursor"}`, &key)
	req, _ = http.NewRequest("POST", e.srv.URL+path+"/hand-back", nil)
	req.Header.Set("Authorization", "Bearer "+key.Key)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 401 {
		t.Fatalf("hand back with an API key: %v %v, want 401", res.StatusCode, err)
	}
}

// The window's page learns the token for its screen socket; a browser's
// page, whose cookie goes along, does not.
func TestInfoGivesTheWindowItsScreenToken(t *testing.T) {
	home, err := workspace.Open(context.Background(), workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	h := httpapi.New(httpapi.Config{Home: home, Token: token, LocalURL: "http://127.0.0.1:7788", ExtraHosts: []string{"wails"}})
	for _, tc := range []struct {
		host string
		want string
	}{
		{"wails", token},
		{"wails.localhost", token},
		{"127.0.0.1:7788", ""},
		{"localhost:7788", ""},
	} {
		req := httptest.NewRequest("GET", "http://"+tc.host+"/api/info", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var info map[string]string
		json.NewDecoder(w.Body).Decode(&info)
		if info["screen_token"] != tc.want || info["local_url"] != "http://127.0.0.1:7788" {
			t.Errorf("Host %s: info = %v, want screen_token %q", tc.host, info, tc.want)
		}
	}
}

// The Desktop's address bar: refused until the person takes over (like
// input), then go, back, forward and reload answer the browser's state;
// an address the browser must not open is a 400 saying what to type.
func TestDesktopNavigate(t *testing.T) {
	e := desktopEnv(t, workspace.Config{})
	site := pages(t)
	id := e.agent(t, "Navigator")
	path := "/api/workspaces/" + e.ws + "/agents/" + id + "/browser"
	var fail struct{ Error string }
	if code := e.do(t, "POST", path+"/navigate", `{"action":"reload"}`, &fail); code != 409 || !strings.Contains(fail.Error, "take over") {
		t.Fatalf("navigate a browser never started: %d %q, want 409 take over", code, fail.Error)
	}
	var st browserStateJSON
	if code := e.do(t, "POST", path+"/start", `{"url":"`+site.URL+`/one"}`, &st); code != 200 || st.URL != site.URL+"/one" {
		t.Fatalf("start: %d %+v", code, st)
	}
	if code := e.do(t, "POST", path+"/navigate", `{"action":"go","url":"`+site.URL+`/two"}`, &fail); code != 409 || !strings.Contains(fail.Error, "take over") {
		t.Fatalf("navigate while the agent holds the browser: %d %q, want 409", code, fail.Error)
	}
	e.do(t, "POST", path+"/take-over", "", &st)

	for _, step := range []struct{ body, want string }{
		{`{"action":"go","url":"` + site.URL + `/two"}`, "/two"},
		{`{"action":"back"}`, "/one"},
		{`{"action":"forward"}`, "/two"},
		{`{"action":"reload"}`, "/two"},
	} {
		if code := e.do(t, "POST", path+"/navigate", step.body, &st); code != 200 || !st.InControl {
			t.Fatalf("navigate %s: %d %+v", step.body, code, st)
		}
		waittest.Until(t, "the tab at "+step.want+" after "+step.body, func() bool {
			e.do(t, "GET", path, "", &st)
			return st.URL == site.URL+step.want
		})
	}
	for _, tc := range []struct{ name, body, want string }{
		{"file", `{"action":"go","url":"file:///etc/passwd"}`, "file: addresses do not open in the agent's browser; type a web address"},
		{"javascript", `{"action":"go","url":"javascript:alert(1)"}`, "javascript: addresses do not open"},
		{"this server", `{"action":"go","url":"` + e.srv.URL + `/api/info"}`, "local server"},
		{"unknown action", `{"action":"home"}`, "not go, back, forward or reload"},
		{"unknown field", `{"action":"go","href":"x"}`, "href"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := e.do(t, "POST", path+"/navigate", tc.body, &fail); code != 400 || !strings.Contains(fail.Error, tc.want) {
				t.Fatalf("navigate %s: %d %q, want 400 containing %q", tc.body, code, fail.Error, tc.want)
			}
		})
	}
	e.do(t, "POST", path+"/hand-back", "", &st)
	if code := e.do(t, "POST", path+"/navigate", `{"action":"back"}`, &fail); code != 409 {
		t.Fatalf("navigate after the hand-back: %d %q, want 409", code, fail.Error)
	}
}

// browserStateJSON is BrowserState as the client reads it.
type browserStateJSON struct {
	Running   bool   `json:"running"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	InControl bool   `json:"in_control"`
}
