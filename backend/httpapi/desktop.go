package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// browserState is an agent's browser for the Desktop tab (BrowserState in
// docs/http-api.md).
type browserState struct {
	Running      bool         `json:"running"`
	URL          string       `json:"url"`
	Title        string       `json:"title"`
	Tabs         []browserTab `json:"tabs"`
	InControl    bool         `json:"in_control"`
	Waiting      bool         `json:"waiting"`
	LastAction   string       `json:"last_action"`
	LastActionAt *time.Time   `json:"last_action_at"`
	CanGoBack    bool         `json:"can_go_back"`
	CanGoForward bool         `json:"can_go_forward"`
}

type browserTab struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active"`
}

// stateOf reads b's state; a nil b is a browser never started.
func stateOf(b *browser.Browser) browserState {
	out := browserState{Tabs: []browserTab{}}
	if b == nil {
		return out
	}
	st := b.State()
	out.Running, out.URL, out.Title = st.Running, st.URL, st.Title
	out.InControl, out.Waiting, out.LastAction = st.InControl, st.Waiting, st.LastAction
	out.CanGoBack, out.CanGoForward = st.CanGoBack, st.CanGoForward
	if !st.LastActionAt.IsZero() {
		out.LastActionAt = &st.LastActionAt
	}
	for _, t := range b.Tabs() {
		out.Tabs = append(out.Tabs, browserTab{ID: strconv.Itoa(t.ID), URL: t.URL, Title: t.Title, Active: t.Active})
	}
	return out
}

// desktopRoutes serve each agent's browser for the Desktop tab: its state,
// starting it, the take-over and hand-back, the address bar's navigation
// and the screen WebSocket.
func (s *Server) desktopRoutes() {
	m := s.mux
	const base = "/api/workspaces/{ws}/agents/{id}/browser"
	m.HandleFunc("GET "+base, inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (browserState, error) {
		id := r.PathValue("id")
		if _, err := ws.Agents.Get(ctx, id); err != nil {
			return browserState{}, err
		}
		b, _ := ws.Browsers.Lookup(id)
		return stateOf(b), nil
	}))
	m.HandleFunc("POST "+base+"/start", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (browserState, error) {
		var in struct {
			URL string `json:"url"`
		}
		if err := decodeOptional(r, &in); err != nil {
			return browserState{}, err
		}
		id := r.PathValue("id")
		if _, err := ws.Agents.Get(ctx, id); err != nil {
			return browserState{}, err
		}
		b, err := ws.Browsers.Start(ctx, id, strings.TrimSpace(in.URL))
		if err != nil {
			return browserState{}, browserErr(err)
		}
		return stateOf(b), nil
	}))
	m.HandleFunc("POST "+base+"/take-over", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (browserState, error) {
		id := r.PathValue("id")
		if _, err := ws.Agents.Get(ctx, id); err != nil {
			return browserState{}, err
		}
		b, err := ws.Browsers.For(ctx, id)
		if err != nil {
			return browserState{}, browserErr(err)
		}
		b.TakeOver()
		return stateOf(b), nil
	}))
	m.HandleFunc("POST "+base+"/hand-back", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, _ none) (browserState, error) {
		id := r.PathValue("id")
		if err := ws.HandBackBrowser(ctx, id); err != nil {
			return browserState{}, err
		}
		b, _ := ws.Browsers.Lookup(id)
		return stateOf(b), nil
	}))
	m.HandleFunc("POST "+base+"/navigate", inWorkspace(s, 200, func(ctx context.Context, ws *workspace.Workspace, r *http.Request, in navigateInput) (browserState, error) {
		id := r.PathValue("id")
		if _, err := ws.Agents.Get(ctx, id); err != nil {
			return browserState{}, err
		}
		b, ok := ws.Browsers.Lookup(id)
		if !ok {
			return browserState{}, browser.ErrNotInControl // never started, so never taken over
		}
		if err := b.Navigate(ctx, in.Action, in.URL); err != nil {
			return browserState{}, browserErr(err)
		}
		return stateOf(b), nil
	}))
	m.HandleFunc("GET "+base+"/screen", s.screen)
	m.HandleFunc("POST /api/ui/open-desktop", endpoint(s, 204, s.openDesktop))
	m.HandleFunc("POST /api/ui/pick-folder", endpoint(s, 200, s.pickFolder))
}

// openDesktopInput names the agent whose Desktop pops out.
type openDesktopInput struct {
	Workspace string `json:"workspace"`
	Agent     string `json:"agent"`
}

// desktopHash is the address fragment of the page that shows only one
// agent's Desktop (the frontend's popped-out screen).
func desktopHash(wsID, agentID string) string {
	return "#desktop=" + url.PathEscape(wsID) + "/" + url.PathEscape(agentID)
}

// openDesktop pops an agent's Desktop out into a window of its own: the
// desktop window cannot open a second one itself (window.open makes none
// there), so the person's default browser opens the page of that Desktop,
// signed in by a one-time code in its address (never the UI token: the
// browser's command line is readable by every user of the computer). A page in a browser opens the window
// itself: without OpenURL (rerun serve) this is a 409.
func (s *Server) openDesktop(ctx context.Context, _ *http.Request, in openDesktopInput) (none, error) {
	wsID, agentID := strings.TrimSpace(in.Workspace), strings.TrimSpace(in.Agent)
	if wsID == "" || agentID == "" {
		return none{}, fault.Invalid("name the workspace and the agent whose Desktop to open")
	}
	ws, err := s.cfg.Home.Workspace(wsID)
	if err != nil {
		return none{}, err
	}
	if _, err := ws.Agents.Get(ctx, agentID); err != nil {
		return none{}, err
	}
	if s.cfg.OpenURL == nil || s.cfg.LocalURL == "" {
		return none{}, fault.Conflict("Rerun cannot open a window from here; open the Desktop in its own window from your browser (Pop out there)")
	}
	target := strings.TrimSuffix(s.cfg.LocalURL, "/") + "/?login=" + s.logins.issue(time.Now()) + desktopHash(wsID, agentID)
	if err := s.cfg.OpenURL(target); err != nil {
		return none{}, fmt.Errorf("open the browser: %w", err)
	}
	return none{}, nil
}

type pickFolderInput struct {
	Title string `json:"title"`
	Start string `json:"start"`
}

type pickedFolder struct {
	Path string `json:"path"` // "" when the person cancelled
}

// pickFolder shows the system's folder dialog in the desktop window (for
// the backups folder). Only the window has one: a browser's page types
// the path.
func (s *Server) pickFolder(ctx context.Context, _ *http.Request, in pickFolderInput) (pickedFolder, error) {
	if s.cfg.PickFolder == nil {
		return pickedFolder{}, fault.Conflict("only the desktop window can show a folder dialog; type the folder's path")
	}
	title := strings.TrimSpace(in.Title)
	if title == "" {
		title = "Choose a folder"
	}
	start := strings.TrimSpace(in.Start)
	if start != "" {
		if fi, err := os.Stat(start); err != nil || !fi.IsDir() {
			start = "" // the dialog opens where the system starts
		}
	}
	path, err := s.cfg.PickFolder(ctx, clipTitle(title), start)
	if err != nil {
		return pickedFolder{}, fmt.Errorf("show the folder dialog: %w", err)
	}
	return pickedFolder{Path: path}, nil
}

// clipTitle keeps a dialog's title to one short line.
func clipTitle(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80])
	}
	return s
}

// navigateInput is the Desktop's address bar: go to url, back, forward or
// reload (browser.NavGo …).
type navigateInput struct {
	Action string `json:"action"`
	URL    string `json:"url"`
}

// decodeOptional is decode for a body that may be left out.
func decodeOptional(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	return handleHint(jsonarg.Decode(body, v)) // an empty body is {}
}

// browserErr says what to install when there is no browser, as a 400:
// nothing is wrong with the app, the computer lacks Chromium.
func browserErr(err error) error {
	if errors.Is(err, browser.ErrNoBrowser) {
		return fault.Invalid("%v", err)
	}
	return err
}

// screenToken is the UI token, for a page that reached us through the
// desktop window's asset server rather than this server's own address: its
// screen WebSocket must go to LocalURL itself, where neither the window's
// token nor a cookie goes along, so it carries the token in its address.
// Empty for any other page (its cookie goes with the socket).
func (s *Server) screenToken(r *http.Request) string {
	u, err := url.Parse(s.cfg.LocalURL)
	if s.cfg.LocalURL == "" || err != nil {
		return ""
	}
	_, localPort, _ := net.SplitHostPort(u.Host)
	_, port, _ := net.SplitHostPort(r.Host)
	if strings.EqualFold(r.Host, u.Host) || loopbackHost(r.Host) && port == localPort {
		return ""
	}
	return s.cfg.Token
}

// isWebSocket reports whether r asks to open a WebSocket.
func isWebSocket(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Screen socket limits.
const (
	screenWriteTimeout = 10 * time.Second // a frame or message the client does not take in time ends the socket
	screenInputTimeout = 5 * time.Second
	screenReadLimit    = 64 << 10 // one input message
)

// screenInput is one input message of the person (docs/http-api.md).
type screenInput struct {
	Type       string  `json:"type"`
	X          float64 `json:"x"`
	Y          float64 `json:"y"`
	Button     string  `json:"button"`
	DeltaX     float64 `json:"delta_x"`
	DeltaY     float64 `json:"delta_y"`
	Key        string  `json:"key"`
	Code       string  `json:"code"`
	KeyCode    int     `json:"key_code"`
	Text       string  `json:"text"`
	Modifiers  int     `json:"modifiers"`
	ClickCount int     `json:"click_count"`
}

func (in screenInput) event() browser.Event {
	return browser.Event{Type: in.Type, X: in.X, Y: in.Y, Button: in.Button, DeltaX: in.DeltaX, DeltaY: in.DeltaY,
		Key: in.Key, Code: in.Code, KeyCode: in.KeyCode, Text: in.Text, Modifiers: in.Modifiers, ClickCount: in.ClickCount}
}

// screen is the WebSocket of an agent's live screen. Server → client: a
// text header {"type":"frame",…} then the JPEG as a binary message, per
// frame; {"type":"state",…} when the browser's state changes; {"type":
// "error","message"} when an input is refused. Client → server: input
// messages, dispatched only while the person holds the browser.
//
// It ends at the first failed write, when the client goes (a read fails or
// a ping goes unanswered), and when the app closes.
func (s *Server) screen(w http.ResponseWriter, r *http.Request) {
	ws, err := s.cfg.Home.Workspace(r.PathValue("ws"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	if _, err := ws.Agents.Get(r.Context(), id); err != nil {
		s.fail(w, r, err)
		return
	}
	// The guard has checked Origin already (our own page, or the window's
	// origin): let the same ones through here.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.ExtraOrigins, CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept has answered
	}
	defer c.CloseNow()
	c.SetReadLimit(screenReadLimit)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// Subscribed before anything starts, so no change is missed.
	changes, stop := s.cfg.Home.Events().Subscribe()
	defer stop()

	sc := &screenConn{c: c, ctx: ctx, fail: cancel}
	b, err := ws.Browsers.For(ctx, id)
	if err != nil {
		sc.send(map[string]string{"type": "error", "message": err.Error()})
		c.Close(websocket.StatusInternalError, "the browser did not start")
		return
	}
	s.log.Debug("screen opened", "workspace", ws.Info().ID, "agent", id)
	defer s.log.Debug("screen closed", "workspace", ws.Info().ID, "agent", id)
	sc.state(b)

	go func() { // the person's input
		defer cancel()
		var refused time.Time
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			if typ != websocket.MessageText {
				continue
			}
			var in screenInput
			if err := json.Unmarshal(data, &in); err != nil {
				sc.send(map[string]string{"type": "error", "message": "an input message must be a JSON object like {\"type\":\"click\",\"x\":10,\"y\":20}"})
				continue
			}
			ictx, icancel := context.WithTimeout(ctx, screenInputTimeout)
			err = b.Input(ictx, in.event())
			icancel()
			switch {
			case errors.Is(err, browser.ErrNotInControl):
				// A burst of moves gets one answer, not one each.
				if time.Since(refused) > time.Second {
					refused = time.Now()
					sc.send(map[string]string{"type": "error", "message": err.Error()})
				}
			case err != nil && ctx.Err() == nil:
				sc.send(map[string]string{"type": "error", "message": "input " + in.Type + ": " + err.Error()})
			}
		}
	}()
	go func() { // a client that went away without closing stops answering pings
		defer cancel()
		tick := time.NewTicker(s.cfg.Heartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				// A pong on this computer takes a millisecond.
				pctx, pcancel := context.WithTimeout(ctx, max(s.cfg.Heartbeat, time.Second))
				err := c.Ping(pctx)
				pcancel()
				if err != nil {
					return
				}
			}
		}
	}()
	go func() { // state changes
		for {
			select {
			case <-ctx.Done():
				return
			case ch, ok := <-changes:
				if !ok {
					cancel()
					return
				}
				if ch.Kind == workspace.KindBrowser && ch.Agent == id && ch.Workspace == ws.Info().ID {
					sc.state(b)
				}
			}
		}
	}()
	err = b.Screencast(ctx, sc.frame)
	if errors.Is(err, browser.ErrClosed) {
		c.Close(websocket.StatusGoingAway, "the browsers are shut down")
	}
}

// screenConn writes one screen socket's messages: a frame's header and
// picture stay together, and the first failed write ends the socket.
type screenConn struct {
	c    *websocket.Conn
	ctx  context.Context
	fail context.CancelFunc

	mu        sync.Mutex
	lastState []byte
}

func (sc *screenConn) write(typ websocket.MessageType, data []byte) bool {
	ctx, cancel := context.WithTimeout(sc.ctx, screenWriteTimeout)
	defer cancel()
	if err := sc.c.Write(ctx, typ, data); err != nil {
		sc.fail()
		return false
	}
	return true
}

func (sc *screenConn) send(v any) {
	data, _ := json.Marshal(v)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.write(websocket.MessageText, data)
}

// state sends b's state when it differs from the last one sent.
func (sc *screenConn) state(b *browser.Browser) {
	data, _ := json.Marshal(struct {
		Type string `json:"type"`
		browserState
	}{"state", stateOf(b)})
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if bytes.Equal(data, sc.lastState) {
		return
	}
	if sc.write(websocket.MessageText, data) {
		sc.lastState = data
	}
}

func (sc *screenConn) frame(f browser.Frame) {
	header, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		URL    string `json:"url"`
		Title  string `json:"title"`
	}{"frame", f.Width, f.Height, f.URL, f.Title})
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.write(websocket.MessageText, header) {
		sc.write(websocket.MessageBinary, f.Data)
	}
}
