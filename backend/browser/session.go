package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Browser is one agent's browser: the Chromium process behind it comes and
// goes (started on use, closed when idle, restarted after a crash), while
// the take-over state, the last action and the typed secrets stay.
type Browser struct {
	m       *Manager
	agentID string

	sem     chan struct{} // one tool call at a time
	startMu sync.Mutex    // one start or stop at a time
	castMu  sync.Mutex    // one screencast switch at a time

	mu           sync.Mutex
	proc         *proc
	stopNote     string // why the previous process ended, for the next tool result
	shut         bool
	closed       chan struct{} // closed by shutdown
	inControl    bool
	released     chan struct{} // closed when the person hands back
	handedBack   bool          // the next tool result starts with the hand-back note
	waiting      int           // tool calls waiting for the person
	busy         int           // tool calls running
	lastAction   string
	lastActionAt time.Time
	lastUsed     time.Time
	viewers      map[int]*viewer
	nextViewer   int
	lastFrame    *Frame
	viewport     [2]int
	buttons      int // mouse buttons the person holds down
	secrets      map[string]string
	redactor     *secret.Redactor
	short        [][2]string // name and `value="…"` of secrets under 4 bytes
}

func newBrowser(m *Manager, agentID string) *Browser {
	return &Browser{
		m: m, agentID: agentID,
		sem:      make(chan struct{}, 1),
		closed:   make(chan struct{}),
		viewers:  map[int]*viewer{},
		viewport: [2]int{windowW, windowH},
		lastUsed: m.now(),
	}
}

// AgentID is the agent this browser belongs to.
func (b *Browser) AgentID() string { return b.agentID }

func (b *Browser) profileDir() string {
	return filepath.Join(b.m.cfg.AgentsDir, b.agentID, "browser")
}

func (b *Browser) downloadsDir() string {
	return filepath.Join(b.m.cfg.AgentsDir, b.agentID, "files", "downloads")
}

// ensure returns the running process, starting one when there is none or
// the last one died.
func (b *Browser) ensure(ctx context.Context) (*proc, error) {
	b.mu.Lock()
	p := b.proc
	b.mu.Unlock()
	if p != nil && p.alive() {
		return p, nil
	}
	b.startMu.Lock()
	defer b.startMu.Unlock()
	b.mu.Lock()
	p, shut := b.proc, b.shut
	b.mu.Unlock()
	if shut {
		return nil, ErrClosed
	}
	if p != nil && p.alive() {
		return p, nil
	}
	if p != nil {
		// It died under us: make sure nothing of it is left.
		p.stop(false)
		b.mu.Lock()
		b.proc = nil
		b.mu.Unlock()
	}
	p, err := b.launch(ctx)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.proc = p
	b.lastUsed = b.m.now()
	b.mu.Unlock()
	b.updateCast()
	b.changed()
	return p, nil
}

// procEnded is called when a process's connection ends. An end nobody asked
// for is a crash: the next tool result says so.
func (b *Browser) procEnded(p *proc) {
	p.mu.Lock()
	asked := p.stopping
	p.mu.Unlock()
	b.mu.Lock()
	if b.proc == p && !asked {
		b.stopNote = "Your browser had stopped unexpectedly and was started again: earlier tabs are gone, sign-ins are kept."
		b.m.log.Warn("browser stopped unexpectedly", "agent", b.agentID, "pid", p.pid)
	}
	b.mu.Unlock()
	b.changed()
}

type stopReason int

const (
	stopIdle stopReason = iota
	stopClose
)

// stopProc stops the running process, if any. An idle stop gives way to a
// tool call, a viewer or the person: it only happens when the browser is
// still idle once it holds the tool lock.
func (b *Browser) stopProc(why stopReason) {
	if why == stopIdle {
		select {
		case b.sem <- struct{}{}:
			defer func() { <-b.sem }()
		default:
			return
		}
	}
	b.startMu.Lock()
	defer b.startMu.Unlock()
	b.mu.Lock()
	p := b.proc
	if p == nil || why == stopIdle && b.idleSinceLocked(b.m.now()) < b.m.cfg.IdleTimeout {
		b.mu.Unlock()
		return
	}
	b.proc = nil
	if why == stopIdle {
		b.stopNote = fmt.Sprintf("Your browser had been closed after %s unused and was started again: earlier tabs are gone, sign-ins are kept.", durText(b.m.cfg.IdleTimeout))
	}
	b.mu.Unlock()
	p.stop(true)
	b.changed()
}

// shutdown stops the browser for good (Manager.Close).
func (b *Browser) shutdown() error {
	b.mu.Lock()
	if !b.shut {
		b.shut = true
		close(b.closed)
	}
	b.mu.Unlock()
	b.stopProc(stopClose)
	return nil
}

// idleSince is how long nothing has used the browser; zero while it runs a
// tool, is watched, or is held by the person, or when it is not running.
func (b *Browser) idleSince(now time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.idleSinceLocked(now)
}

func (b *Browser) idleSinceLocked(now time.Time) time.Duration {
	if b.proc == nil || b.busy > 0 || b.waiting > 0 || len(b.viewers) > 0 || b.inControl {
		return 0
	}
	return now.Sub(b.lastUsed)
}

func (b *Browser) touch() {
	b.mu.Lock()
	b.lastUsed = b.m.now()
	b.mu.Unlock()
}

func (b *Browser) changed() { b.m.changed(b.agentID) }

// begin starts a tool call: it takes the tool lock and waits while the
// person holds the browser. handBack is true when the person handed the
// browser back since the previous tool call.
func (b *Browser) begin(ctx context.Context) (release func(), handBack bool, err error) {
	select {
	case b.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	case <-b.closed:
		return nil, false, ErrClosed
	}
	release = func() {
		b.mu.Lock()
		b.busy--
		b.lastUsed = b.m.now()
		b.mu.Unlock()
		<-b.sem
	}
	for {
		b.mu.Lock()
		if !b.inControl {
			handBack = b.handedBack
			b.handedBack = false
			b.busy++
			b.mu.Unlock()
			return release, handBack, nil
		}
		ch := b.released
		b.waiting++
		b.mu.Unlock()
		b.changed()
		var err error
		select {
		case <-ch:
		case <-ctx.Done():
			err = ctx.Err()
		case <-b.closed:
			err = ErrClosed
		}
		b.mu.Lock()
		b.waiting--
		b.mu.Unlock()
		b.changed()
		if err != nil {
			<-b.sem
			return nil, false, err
		}
	}
}

// TakeOver gives the browser to the person: browser tools wait until
// HandBack (a tool already running finishes), and Input is accepted. Element
// numbers of earlier snapshots stop being valid: the person may change the
// page.
func (b *Browser) TakeOver() {
	b.mu.Lock()
	if b.inControl {
		b.mu.Unlock()
		return
	}
	b.inControl = true
	b.released = make(chan struct{})
	p := b.proc
	b.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		for _, t := range p.tabs {
			if t.refsValid {
				t.refsValid = false
				t.staleReason = "the person has used the browser since"
			}
		}
		p.mu.Unlock()
	}
	b.m.log.Info("person took over the browser", "agent", b.agentID)
	b.changed()
}

// HandBack returns the browser to the agent; its next tool result starts
// with a note saying so and naming the current page.
func (b *Browser) HandBack() {
	b.mu.Lock()
	if !b.inControl {
		b.mu.Unlock()
		return
	}
	b.inControl = false
	b.handedBack = true
	b.buttons = 0
	close(b.released)
	b.mu.Unlock()
	b.m.log.Info("person handed the browser back", "agent", b.agentID)
	b.changed()
}

// InControl reports whether the person holds the browser.
func (b *Browser) InControl() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inControl
}

// LastAction is what the agent last did in its browser, for the Desktop
// panel, e.g. `clicked [12] button "Sign in"`. Typed text shows as the agent
// wrote it, ${NAME} references unresolved.
func (b *Browser) LastAction() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastAction
}

// State is a browser's state for the Desktop panel and the board.
type State struct {
	Running      bool      `json:"running"`
	URL          string    `json:"url"`
	Title        string    `json:"title"`
	Tabs         int       `json:"tabs"`
	InControl    bool      `json:"inControl"`  // the person holds the browser
	Waiting      bool      `json:"waiting"`    // a tool call waits for the person to hand back
	LastAction   string    `json:"lastAction"` // see LastAction
	LastActionAt time.Time `json:"lastActionAt"`
	CanGoBack    bool      `json:"canGoBack"`    // the current tab has an earlier page
	CanGoForward bool      `json:"canGoForward"` // and a later one (after going back)
}

// State returns the browser's current state.
func (b *Browser) State() State {
	b.mu.Lock()
	s := State{InControl: b.inControl, Waiting: b.waiting > 0, LastAction: b.lastAction, LastActionAt: b.lastActionAt}
	p := b.proc
	b.mu.Unlock()
	if p != nil && p.alive() {
		s.Running = true
		p.mu.Lock()
		if p.active != nil {
			s.URL, s.Title = p.active.url, p.active.title
			s.CanGoBack, s.CanGoForward = p.active.back, p.active.fwd
		}
		s.Tabs = len(p.tabs)
		p.mu.Unlock()
	}
	return s
}

// setAction records the agent's last action, masking typed secrets.
func (b *Browser) setAction(s string) {
	b.mu.Lock()
	if b.redactor != nil {
		s = b.redactor.Redact(s)
	}
	b.lastAction = s
	b.lastActionAt = b.m.now()
	b.mu.Unlock()
	b.changed()
}

// longest is the longest masked form of the typed values.
func (b *Browser) longest() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.redactor.Longest()
}

// remember keeps values resolved from variables, so later snapshots and
// results mask them.
func (b *Browser) remember(values map[string]string) {
	if len(values) == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.secrets == nil {
		b.secrets = map[string]string{}
	}
	grew := false
	for k, v := range values {
		if b.secrets[k] != v {
			b.secrets[k] = v
			grew = true
		}
	}
	if grew {
		b.redactor = secret.NewRedactor(b.secrets)
		b.short = nil
		for k, v := range b.secrets {
			if v != "" && len(v) < 4 {
				q, _ := json.Marshal(v)
				b.short = append(b.short, [2]string{k, "value=" + string(q)})
			}
		}
	}
}

// redact masks the typed secrets in s. Values too short to mask in free
// text without masking ordinary words along (a PIN) are still masked where
// a snapshot shows them as a field's whole value.
func (b *Browser) redact(s string) string {
	b.mu.Lock()
	r := b.redactor
	short := b.short
	b.mu.Unlock()
	if r == nil {
		return s
	}
	s = r.Redact(s)
	for _, kv := range short {
		s = strings.ReplaceAll(s, kv[1], `value="[redacted:`+kv[0]+`]"`)
	}
	return s
}

// current returns the running process, or nil.
func (b *Browser) running() *proc {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.proc != nil && b.proc.alive() {
		return b.proc
	}
	return nil
}

// durText writes d for a sentence: "10 minutes", "90 seconds".
func durText(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return plural(int(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	}
	return plural(int(d.Round(time.Second)/time.Second), "second")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
