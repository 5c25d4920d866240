package browser

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
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

func asRoot() bool { return runtime.GOOS != "windows" && os.Geteuid() == 0 }
