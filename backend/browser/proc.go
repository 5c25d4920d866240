package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/launcher/flags"
	"github.com/go-rod/rod/lib/proto"
)

// windowW and windowH size the browser window; headless Chromium keeps some
// of the height for its invisible toolbar, so pages see a little less.
const windowW, windowH = 1280, 800

// proc is one running Chromium of an agent, from launch to exit.
type proc struct {
	b      *Browser
	pid    int
	rb     *rod.Browser // bound to ctx
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed when the DevTools connection ended

	mu        sync.Mutex
	tabs      []*tab
	nextTab   int
	active    *tab
	casting   *tab          // the tab whose screencast runs
	tick      chan struct{} // closed and replaced on every change worth waiting for
	blocked   []string      // forbidden addresses refused since the last tool took them
	notes     []string      // events for the next tool result
	downloads map[string]string
	stopping  bool
}

// tab is one page target of the browser.
type tab struct {
	id     int
	target proto.TargetTargetID
	page   *rod.Page // attached session; nil until attached
	opener proto.TargetTargetID

	// The rest is guarded by proc.mu.
	url, title  string
	docs        int // documents committed in the main frame
	navs        int // main-frame navigations, same-document ones included
	requested   int // navigations the page asked for (links, forms, scripts)
	loading     bool
	stops       int            // main-frame loads that ended (with or without a new document)
	blockedNav  string         // the forbidden address the main frame last tried to load
	seenNavs    int            // navs when the last tool call ended (browser_wait navigation)
	refs        []*rod.Element // elements of the last snapshot, numbered from 1
	descs       []string       // their role and name, as the snapshot showed them
	refsValid   bool
	staleReason string
	snap        string    // the last snapshot's full text, for paging with offset
	infoAt      time.Time // when freshen last asked for the address and title
	infoDue     bool      // a freshen is scheduled
}

// launch starts the agent's Chromium on its profile and connects to it.
func (b *Browser) launch(ctx context.Context) (*proc, error) {
	m := b.m
	bin, err := FindChrome(m.cfg.Bin)
	if err != nil {
		return nil, err
	}
	dir := b.profileDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create browser profile %s: %w", dir, err)
	}
	if killed, err := freeProfile(dir); err != nil {
		return nil, err
	} else if killed != 0 {
		m.log.Warn("killed a browser an earlier run left on the profile", "agent", b.agentID, "pid", killed)
	}

	start := time.Now()
	// leakless is a small guard process that kills the browser when the app
	// dies without stopping it. Antivirus tools flag it on Windows, and a
	// temp folder mounted noexec cannot run it: then go without (freeProfile
	// still clears what a killed app leaves).
	guard := runtime.GOOS != "windows"
	l, u, err := b.launchWith(ctx, bin, dir, guard)
	if err != nil && guard {
		m.log.Warn("starting the browser with its leak guard failed; trying without", "agent", b.agentID, "err", err)
		l, u, err = b.launchWith(ctx, bin, dir, false)
	}
	if err != nil {
		return nil, fmt.Errorf("start browser %s for agent %s: %w", bin, b.agentID, err)
	}
	pid := l.PID()
	fail := func(err error) (*proc, error) {
		killTree(pid)
		waitGone(pid, lockWait)
		return nil, err
	}
	if cu, err := url.Parse(u); err != nil || !loopbackHost(cu.Hostname()) {
		return fail(fmt.Errorf("browser DevTools listens on %q, not on loopback; refusing to use it", u))
	}
	pctx, cancel := context.WithCancel(context.Background())
	rb := rod.New().ControlURL(u).NoDefaultDevice().Context(pctx)
	if err := rb.Connect(); err != nil {
		cancel()
		return fail(fmt.Errorf("connect to browser for agent %s: %w", b.agentID, err))
	}
	p := &proc{
		b: b, pid: pid, rb: rb, ctx: pctx, cancel: cancel,
		done: make(chan struct{}), tick: make(chan struct{}), downloads: map[string]string{},
	}
	events := rb.Event()
	go p.loop(events)

	setup := func() error {
		if pats := m.forbid.patterns(); len(pats) > 0 {
			if err := (proto.FetchEnable{Patterns: pats}).Call(rb); err != nil {
				return fmt.Errorf("guard the local server: %w", err)
			}
		}
		if err := (proto.BrowserSetDownloadBehavior{
			Behavior:      proto.BrowserSetDownloadBehaviorBehaviorAllowAndName,
			DownloadPath:  b.downloadsDir(),
			EventsEnabled: true,
		}).Call(rb); err != nil {
			return fmt.Errorf("set the download folder: %w", err)
		}
		_, err := p.newTab(ctx, "about:blank")
		return err
	}
	if err := setup(); err != nil {
		p.stop(false)
		return nil, fmt.Errorf("start browser for agent %s: %w", b.agentID, err)
	}
	m.log.Info("browser started", "agent", b.agentID, "pid", pid, "took", time.Since(start).Round(time.Millisecond), "headless", m.cfg.Headless)
	return p, nil
}

// launchWith runs Chromium through go-rod's launcher and returns the
// DevTools address.
func (b *Browser) launchWith(ctx context.Context, bin, dir string, guard bool) (l *launcher.Launcher, u string, err error) {
	defer func() {
		// The launcher panics when it cannot write its guard binary.
		if r := recover(); r != nil {
			err = fmt.Errorf("launcher: %v", r)
		}
	}()
	l = launcher.New().Context(ctx)
	// go-rod's defaults turn off site isolation, the popup blocker and more
	// (they suit test scrapers, not a browser a person signs in with): start
	// from nothing but what the launcher itself needs.
	for f := range l.Flags {
		switch f {
		case flags.Bin, flags.UserDataDir, flags.RemoteDebuggingPort, flags.Leakless:
		default:
			delete(l.Flags, f)
		}
	}
	// Bin is always set, so the launcher never downloads a browser. Port 0:
	// Chromium picks a free port on 127.0.0.1.
	l.Bin(bin).UserDataDir(dir).RemoteDebuggingPort(0).Headless(b.m.cfg.Headless).Leakless(guard).
		Env(childEnv(os.Environ(), dir, runtime.GOOS)...)
	for _, f := range []string{
		"no-first-run", "no-default-browser-check", "no-startup-window", "hide-crash-restore-bubble",
		"disable-gpu", "disable-background-networking", "disable-component-update", "disable-sync",
		"disable-breakpad", "disable-default-apps", "mute-audio",
	} {
		l.Set(flags.Flag(f))
	}
	l.Set("window-size", fmt.Sprintf("%d,%d", windowW, windowH))
	l.Set("disable-features", "Translate")
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd":
		// No keyring prompts; a small /dev/shm (containers) crashes tabs.
		l.Set("password-store", "basic")
		l.Set("disable-dev-shm-usage")
	case "darwin":
		l.Set("use-mock-keychain")
	}
	if asRoot() {
		l.NoSandbox(true)
		b.m.log.Warn("running Chromium without its sandbox: the app runs as root, and Chromium refuses to sandbox a root process", "agent", b.agentID)
	}
	u, err = l.Launch()
	return l, u, err
}

// alive reports whether the browser is still connected.
func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stop ends the browser: politely first when graceful (Chromium then writes
// its cookies and session to the profile), then by killing the process tree,
// and waits for it to be gone.
func (p *proc) stop(graceful bool) {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	if graceful && p.alive() {
		ctx, cancel := context.WithTimeout(p.ctx, 3*time.Second)
		_ = proto.BrowserClose{}.Call(p.rb.Context(ctx))
		cancel()
		deadline := time.Now().Add(5 * time.Second)
		for treeAlive(p.pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Kill what is left (helpers of a crashed browser, or one that did not
	// close), unless the browser exited and its pid already went to
	// another program.
	if !processAlive(p.pid) || usesProfile(p.pid, p.b.profileDir()) {
		killTree(p.pid)
		if !waitGone(p.pid, lockWait) {
			p.b.m.log.Error("browser process did not exit", "agent", p.b.agentID, "pid", p.pid)
		}
	}
	p.cancel()
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
}

// loop consumes the browser's DevTools events until the connection ends.
// handle must not wait for Chromium: answers to calls come through the
// connection, but a paused request or a dialog only moves on when its event
// is handled here.
func (p *proc) loop(events <-chan *rod.Message) {
	defer func() {
		close(p.done)
		p.changed()
		p.b.procEnded(p)
	}()
	for msg := range events {
		p.handle(msg)
	}
}

// changed wakes everything waiting on the browser's state.
func (p *proc) changed() {
	p.mu.Lock()
	close(p.tick)
	p.tick = make(chan struct{})
	p.mu.Unlock()
}

// waitFor waits until cond (called with p.mu held) holds, ctx ends or the
// browser goes away.
func (p *proc) waitFor(ctx context.Context, cond func() bool) error {
	for {
		p.mu.Lock()
		ok, tick := cond(), p.tick
		p.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-tick:
		case <-ctx.Done():
			return ctx.Err()
		case <-p.done:
			return errBrowserGone
		}
	}
}

var errBrowserGone = errors.New("the browser stopped unexpectedly; it starts again with the next browser tool call (sign-ins are kept, open tabs are not)")

// handle applies one DevTools event.
func (p *proc) handle(msg *rod.Message) {
	switch msg.Method {
	case "Target.targetCreated":
		var e proto.TargetTargetCreated
		if msg.Load(&e) && e.TargetInfo.Type == proto.TargetTargetInfoTypePage && e.TargetInfo.Subtype == "" {
			p.addTab(e.TargetInfo)
		}
	case "Target.targetInfoChanged":
		var e proto.TargetTargetInfoChanged
		if msg.Load(&e) {
			p.mu.Lock()
			t := p.tabByTarget(e.TargetInfo.TargetID)
			if t != nil {
				t.url, t.title = e.TargetInfo.URL, e.TargetInfo.Title
			}
			p.mu.Unlock()
			if t != nil {
				p.b.changed()
			}
		}
	case "Target.targetDestroyed":
		var e proto.TargetTargetDestroyed
		if msg.Load(&e) {
			p.removeTab(e.TargetID)
		}
	case "Target.targetCrashed":
		var e proto.TargetTargetCrashed
		if msg.Load(&e) {
			p.mu.Lock()
			if t := p.tabByTarget(e.TargetID); t != nil {
				t.refsValid = false
				t.staleReason = "the tab crashed"
				p.notes = append(p.notes, fmt.Sprintf("Tab %d crashed (%s); open its page again.", t.id, e.Status))
			}
			p.mu.Unlock()
		}
	case "Page.frameNavigated":
		var e proto.PageFrameNavigated
		if msg.Load(&e) && e.Frame.ParentID == "" {
			p.mu.Lock()
			if t := p.tabBySession(msg.SessionID); t != nil {
				t.docs++
				t.navs++
				t.url = e.Frame.URL + e.Frame.URLFragment
				if t.refsValid {
					t.refsValid = false
					t.staleReason = "the tab went to another page (" + cutURL(t.url, 100) + ")"
				}
			}
			p.mu.Unlock()
		}
	case "Page.navigatedWithinDocument":
		var e proto.PageNavigatedWithinDocument
		if msg.Load(&e) {
			p.mu.Lock()
			if t := p.tabBySession(msg.SessionID); t != nil && string(e.FrameID) == string(t.target) {
				t.navs++
				t.url = e.URL
			}
			p.mu.Unlock()
		}
	case "Page.frameRequestedNavigation":
		var e proto.PageFrameRequestedNavigation
		if msg.Load(&e) {
			p.mu.Lock()
			if t := p.tabBySession(msg.SessionID); t != nil && string(e.FrameID) == string(t.target) {
				t.requested++
			}
			p.mu.Unlock()
		}
	case "Page.frameStartedLoading", "Page.frameStoppedLoading":
		var frame proto.PageFrameID
		if msg.Method == "Page.frameStartedLoading" {
			var e proto.PageFrameStartedLoading
			msg.Load(&e)
			frame = e.FrameID
		} else {
			var e proto.PageFrameStoppedLoading
			msg.Load(&e)
			frame = e.FrameID
		}
		p.mu.Lock()
		t := p.tabBySession(msg.SessionID)
		if t != nil && string(frame) == string(t.target) {
			t.loading = msg.Method == "Page.frameStartedLoading"
			if !t.loading {
				t.stops++
				// Title changes are not reliably announced: read it once
				// the page has loaded, for the Desktop panel.
				go func() {
					p.info(t)
					p.b.changed()
				}()
			}
		}
		p.mu.Unlock()
	case "Page.javascriptDialogOpening":
		var e proto.PageJavascriptDialogOpening
		if msg.Load(&e) {
			p.handleDialog(msg.SessionID, &e)
		}
	case "Page.screencastFrame":
		var e proto.PageScreencastFrame
		if msg.Load(&e) {
			p.frame(msg.SessionID, &e)
		}
	case "Fetch.requestPaused":
		var e proto.FetchRequestPaused
		if msg.Load(&e) {
			p.guard(&e)
		}
	case "Browser.downloadWillBegin":
		var e proto.BrowserDownloadWillBegin
		if msg.Load(&e) {
			p.mu.Lock()
			p.downloads[e.GUID] = e.SuggestedFilename
			p.mu.Unlock()
		}
	case "Browser.downloadProgress":
		var e proto.BrowserDownloadProgress
		if msg.Load(&e) && e.State != proto.BrowserDownloadProgressStateInProgress {
			p.downloaded(&e)
		}
	default:
		return
	}
	p.changed()
}

// guard fails requests to forbidden addresses and lets every other paused
// request go on.
func (p *proc) guard(e *proto.FetchRequestPaused) {
	u, _ := url.Parse(e.Request.URL)
	if !p.b.m.forbid.blocks(u) {
		go func() { _ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(p.rb) }()
		return
	}
	p.b.m.log.Warn("refused a request to the local server", "agent", p.b.agentID, "type", e.ResourceType)
	p.mu.Lock()
	p.blocked = append(p.blocked, e.Request.URL)
	if e.ResourceType == proto.NetworkResourceTypeDocument {
		if t := p.tabByTarget(proto.TargetTargetID(e.FrameID)); t != nil {
			t.blockedNav = e.Request.URL
		}
	}
	p.mu.Unlock()
	go func() {
		_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(p.rb)
	}()
}

// handleDialog answers alerts, confirms and prompts so they never block the
// page (and every tool with it), and tells the agent what was shown.
func (p *proc) handleDialog(session proto.TargetSessionID, e *proto.PageJavascriptDialogOpening) {
	p.mu.Lock()
	t := p.tabBySession(session)
	if t == nil {
		p.mu.Unlock()
		return
	}
	what := fmt.Sprintf("The page showed a %s dialog %q; it was accepted.", e.Type, clip(e.Message, 300))
	if e.Type == proto.PageDialogTypeBeforeunload {
		what = "The page asked to confirm leaving it; leaving was accepted."
	}
	p.notes = append(p.notes, what)
	page := t.page
	p.mu.Unlock()
	go func() {
		_ = proto.PageHandleJavaScriptDialog{Accept: true, PromptText: e.DefaultPrompt}.Call(page)
	}()
}

// downloaded moves a finished download from its GUID name to its own name
// in the agent's downloads folder and tells the agent.
func (p *proc) downloaded(e *proto.BrowserDownloadProgress) {
	p.mu.Lock()
	name := p.downloads[e.GUID]
	delete(p.downloads, e.GUID)
	p.mu.Unlock()
	dir := p.b.downloadsDir()
	var note string
	if e.State == proto.BrowserDownloadProgressStateCanceled {
		note = fmt.Sprintf("The download of %q was cancelled.", name)
	} else {
		final := uniqueName(dir, safeFileName(name))
		if err := os.Rename(filepath.Join(dir, e.GUID), filepath.Join(dir, final)); err != nil {
			p.b.m.log.Error("name a download", "agent", p.b.agentID, "err", err)
			final = e.GUID
		}
		note = fmt.Sprintf("Downloaded %s (%d bytes) to downloads/%s in your folder.", name, int64(e.ReceivedBytes), final)
	}
	p.mu.Lock()
	p.notes = append(p.notes, note)
	p.mu.Unlock()
}

// safeFileName keeps a suggested download name to one plain path element.
func safeFileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 32 || strings.ContainsRune(`/\:*?"<>|`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.Trim(name, ". ")
	if name == "" {
		return "download"
	}
	if len(name) > 120 {
		ext := filepath.Ext(name)
		if len(ext) > 20 {
			ext = ""
		}
		name = name[:120-len(ext)] + ext
	}
	return name
}

// uniqueName returns name, or "name (2).ext" and so on if taken in dir.
func uniqueName(dir, name string) string {
	ext := filepath.Ext(name)
	base := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		n := name
		if i > 1 {
			n = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		if _, err := os.Lstat(filepath.Join(dir, n)); os.IsNotExist(err) {
			return n
		}
	}
}

// addTab records a page target and attaches to it. A tab the current tab
// opened (a link with target=_blank, window.open) becomes the current tab,
// as it does in a browser window.
func (p *proc) addTab(info *proto.TargetTargetInfo) *tab {
	p.mu.Lock()
	if t := p.tabByTarget(info.TargetID); t != nil {
		p.mu.Unlock()
		return t
	}
	p.nextTab++
	t := &tab{id: p.nextTab, target: info.TargetID, opener: info.OpenerID, url: info.URL, title: info.Title}
	p.tabs = append(p.tabs, t)
	switchTo := p.active == nil || info.OpenerID != "" && p.active.target == info.OpenerID
	if switchTo {
		if p.active != nil {
			p.notes = append(p.notes, fmt.Sprintf("The page opened a new tab (tab %d), which is now the current tab; browser_tabs lists the tabs.", t.id))
		}
		p.active = t
	}
	p.mu.Unlock()
	// Never wait for Chromium on the event loop: attaching a tab whose first
	// request the guard paused waits for that request, which only the event
	// loop answers.
	go func() {
		if err := p.attach(t); err != nil {
			p.b.m.log.Debug("attach to tab", "agent", p.b.agentID, "err", err)
		}
		if switchTo {
			p.b.updateCast()
		}
	}()
	p.b.changed()
	return t
}

// removeTab forgets a closed tab; when it was the current one the most
// recently opened remaining tab takes its place.
func (p *proc) removeTab(id proto.TargetTargetID) {
	p.mu.Lock()
	var gone *tab
	for i, t := range p.tabs {
		if t.target == id {
			gone = t
			p.tabs = append(p.tabs[:i], p.tabs[i+1:]...)
			break
		}
	}
	if gone == nil {
		p.mu.Unlock()
		return
	}
	switched := false
	if p.active == gone {
		p.active = nil
		if n := len(p.tabs); n > 0 {
			p.active = p.tabs[n-1]
		}
		switched = true
	}
	if p.casting == gone {
		p.casting = nil
	}
	p.mu.Unlock()
	if switched {
		go p.b.updateCast()
	}
	p.b.changed()
}

func (p *proc) tabByTarget(id proto.TargetTargetID) *tab {
	for _, t := range p.tabs {
		if t.target == id {
			return t
		}
	}
	return nil
}

func (p *proc) tabBySession(s proto.TargetSessionID) *tab {
	for _, t := range p.tabs {
		if t.page != nil && t.page.SessionID == s {
			return t
		}
	}
	return nil
}

func (p *proc) tabByID(id int) *tab {
	for _, t := range p.tabs {
		if t.id == id {
			return t
		}
	}
	return nil
}

// newTab opens a tab on u and makes it the current one.
func (p *proc) newTab(ctx context.Context, u string) (*tab, error) {
	res, err := proto.TargetCreateTarget{URL: "about:blank"}.Call(p.rb.Context(ctx))
	if err != nil {
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	t := p.addTab(&proto.TargetTargetInfo{TargetID: res.TargetID, Type: proto.TargetTargetInfoTypePage, URL: "about:blank"})
	if err := p.attach(t); err != nil {
		return nil, fmt.Errorf("open a tab: %w", err)
	}
	if u != "about:blank" {
		if err := t.page.Context(ctx).Navigate(u); err != nil {
			return t, err
		}
	}
	if err := p.activate(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// activate makes t the current tab and brings it to the front (a
// background tab does not paint, so it would send no screen frames).
func (p *proc) activate(ctx context.Context, t *tab) error {
	if err := (proto.TargetActivateTarget{TargetID: t.target}).Call(p.rb.Context(ctx)); err != nil {
		return fmt.Errorf("switch to tab %d: %w", t.id, err)
	}
	p.mu.Lock()
	p.active = t
	p.mu.Unlock()
	if p.attach(t) == nil {
		if lm, err := (proto.PageGetLayoutMetrics{}).Call(t.page.Context(ctx)); err == nil && lm.CSSVisualViewport != nil {
			p.b.mu.Lock()
			p.b.viewport = [2]int{int(lm.CSSVisualViewport.ClientWidth), int(lm.CSSVisualViewport.ClientHeight)}
			p.b.mu.Unlock()
		}
	}
	p.b.updateCast()
	p.b.changed()
	return nil
}

// current returns the current tab, opening a blank one when none is left.
func (p *proc) current(ctx context.Context) (*tab, error) {
	p.mu.Lock()
	t := p.active
	if t == nil && len(p.tabs) > 0 {
		t = p.tabs[len(p.tabs)-1]
		p.active = t
	}
	p.mu.Unlock()
	if t == nil {
		return p.newTab(ctx, "about:blank")
	}
	if err := p.attach(t); err != nil {
		return nil, fmt.Errorf("attach to tab %d: %w", t.id, err)
	}
	return t, nil
}

// attach makes sure t has a DevTools session (go-rod attaches each target
// once and caches the page).
func (p *proc) attach(t *tab) error {
	p.mu.Lock()
	ok := t.page != nil
	p.mu.Unlock()
	if ok {
		return nil
	}
	page, err := p.rb.PageFromTarget(t.target)
	if err != nil {
		return err
	}
	p.mu.Lock()
	t.page = page
	p.mu.Unlock()
	return nil
}

// takeNotes returns and clears what happened in the browser since the last
// tool result: dialogs, new tabs, downloads, refused requests.
func (p *proc) takeNotes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	notes := p.notes
	p.notes = nil
	if n := len(p.blocked); n > 0 {
		s := fmt.Sprintf("Refused %d request(s) of the page to the Rerun app's own local server (%s), which its browsers never reach.", n, cutURL(p.blocked[0], 120))
		notes = append(notes, s)
		p.blocked = nil
	}
	return notes
}

// info returns a tab's address and title, asking the browser (the
// title-changed events lag behind a load).
func (p *proc) info(t *tab) (u, title string) {
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Second)
	defer cancel()
	res, err := proto.TargetGetTargetInfo{TargetID: t.target}.Call(p.rb.Context(ctx))
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil && res.TargetInfo != nil {
		t.url, t.title = res.TargetInfo.URL, res.TargetInfo.Title
	}
	return t.url, t.title
}

func asRoot() bool { return runtime.GOOS != "windows" && os.Geteuid() == 0 }
