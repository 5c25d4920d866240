package update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
)

// A Watch is the check an installed app makes by itself: shortly after
// start, then once a day, it reads the feed as "Check for updates" does and
// remembers what it found, in memory and in a small file in the data
// directory. So the UI can say "Rerun v1.5.0 is available" and when it last
// looked without touching the network, and a restart does not check again
// within the day. It never downloads or installs anything.
//
// Go timers stop while a laptop sleeps: the loop sleeps at most
// WatchConfig.Poll and then reads the wall clock afresh (monotonic readings
// stripped), so a check that fell due during the night runs within Poll of
// waking.

// WatchFile is the file in the data directory that keeps the last result.
const WatchFile = "update-check.json"

// KindChecked is the change published (for no one workspace) after every
// check that was remembered: open pages read GET /api/update/last again.
const KindChecked = "update.checked"

// Result is what the last check found, automatic or clicked.
type Result struct {
	Status
	// CheckedAt is when that check ended; zero when there was none.
	CheckedAt time.Time `json:"checked_at,omitzero"`
	// Error says why it failed. A failed check keeps only Current: it
	// never shows a release as available.
	Error string `json:"error,omitempty"`
}

// WatchConfig tunes a Watch; zero values take the defaults.
type WatchConfig struct {
	// Path is the file the last result is kept in (DIR/WatchFile); "":
	// in memory only.
	Path string
	// Delay is how long after Serve starts the first check waits (default
	// 10 s): the start itself does not wait on the network.
	Delay time.Duration
	// Every is how long a check holds (default 24 h).
	Every time.Duration
	// Retry is how long a failed check holds (default 1 h): a laptop that
	// was offline checks again soon after it is back.
	Retry time.Duration
	// Poll is the longest the loop sleeps before it reads the wall clock
	// again (default 1 min).
	Poll time.Duration
	// Now and After are the clock (default time.Now, time.After); tests
	// pass a fake and step the loop with Wake.
	Now   func() time.Time
	After func(time.Duration) <-chan time.Time
	// Bus (may be nil) hears KindChecked.
	Bus *event.Bus
	Log *slog.Logger
}

func (c WatchConfig) withDefaults() WatchConfig {
	if c.Delay <= 0 {
		c.Delay = 10 * time.Second
	}
	if c.Every <= 0 {
		c.Every = 24 * time.Hour
	}
	if c.Retry <= 0 {
		c.Retry = time.Hour
	}
	if c.Poll <= 0 {
		c.Poll = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.After == nil {
		c.After = time.After
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// Watch checks one feed by itself and remembers the last result.
type Watch struct {
	c     *Checker
	cfg   WatchConfig
	daily atomic.Bool
	wake  chan struct{}

	mu   sync.Mutex // guards last and its file
	last Result

	passes atomic.Int64 // times the loop went to sleep (tests)
}

// NewWatch watches c's feed. It reads the result kept at cfg.Path (a file
// that cannot be read counts as no check yet); it checks by itself only
// once SetDaily(true) is called and Serve runs.
func NewWatch(c *Checker, cfg WatchConfig) *Watch {
	w := &Watch{c: c, cfg: cfg.withDefaults(), wake: make(chan struct{}, 1)}
	if c.Ready() == nil {
		w.last = w.load()
	}
	return w
}

// Checker is the watched checker ("Download and verify" uses it).
func (w *Watch) Checker() *Checker { return w.c }

// Off is why this build checks no feed (ErrOff, ErrNoKey); nil when it can.
func (w *Watch) Off() error { return w.c.Ready() }

// SetDaily turns the daily check on or off; the loop looks at once.
func (w *Watch) SetDaily(on bool) {
	w.daily.Store(on)
	w.Wake()
}

// Daily says whether the daily check is on.
func (w *Watch) Daily() bool { return w.daily.Load() }

// Wake makes the loop read the clock now.
func (w *Watch) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Last is what the last check found; CheckedAt is zero when there was none.
func (w *Watch) Last() Result {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// Check reads the feed now (the person's click, or the loop) and
// remembers the result, unless checks are off or ctx ended first.
func (w *Watch) Check(ctx context.Context) (Status, error) {
	st, err := w.c.Check(ctx)
	if errors.Is(err, ErrOff) || errors.Is(err, ErrNoKey) || ctx.Err() != nil {
		return st, err
	}
	r := Result{Status: st, CheckedAt: w.now()}
	if err != nil {
		r = Result{Status: Status{Current: w.c.Current}, CheckedAt: r.CheckedAt, Error: Reason(err)}
	}
	w.remember(r)
	return st, err
}

// Serve checks when a check is due, while the daily check is on, until ctx
// ends. With checks off it returns at once. It returns nil when ctx ends.
func (w *Watch) Serve(ctx context.Context) error {
	if w.Off() != nil {
		return nil
	}
	start := w.now()
	for {
		wait := w.cfg.Poll
		if w.daily.Load() {
			now := w.now()
			due := w.due(start, now)
			if !now.Before(due) {
				if _, err := w.Check(ctx); err != nil && ctx.Err() == nil {
					w.cfg.Log.Warn("update check failed", "err", err)
				}
				if ctx.Err() != nil {
					return nil
				}
				continue // due again only after Every (or Retry)
			}
			wait = min(wait, due.Sub(now))
		}
		w.passes.Add(1)
		select {
		case <-ctx.Done():
			return nil
		case <-w.wake:
		case <-w.cfg.After(wait):
		}
	}
}

// due is when the next automatic check is: Delay after start, and not
// before the last check's result has held for Every (Retry after a
// failure). A last check in the future (the clock was set back) holds
// nothing.
func (w *Watch) due(start, now time.Time) time.Time {
	first := start.Add(w.cfg.Delay)
	last := w.Last()
	if last.CheckedAt.IsZero() || last.CheckedAt.After(now) {
		return first
	}
	hold := w.cfg.Every
	if last.Error != "" {
		hold = w.cfg.Retry
	}
	if next := last.CheckedAt.Add(hold); next.After(first) {
		return next
	}
	return first
}

// now is the wall clock without its monotonic reading, which stops while
// the computer sleeps.
func (w *Watch) now() time.Time { return w.cfg.Now().Round(0) }

// remember keeps r, in memory and in its file, and tells open pages.
func (w *Watch) remember(r Result) {
	w.mu.Lock()
	w.last = r
	err := w.save(r)
	w.mu.Unlock()
	if err != nil {
		w.cfg.Log.Warn("remember the update check", "err", err)
	}
	if r.Error == "" {
		w.cfg.Log.Info("update checked", "current", r.Current, "latest", r.Latest, "available", r.Available)
	}
	if w.cfg.Bus != nil {
		w.cfg.Bus.Publish(event.Change{Kind: KindChecked})
	}
}

func (w *Watch) save(r Result) error {
	if w.cfg.Path == "" {
		return nil
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := os.MkdirAll(filepath.Dir(w.cfg.Path), 0o700); err != nil {
		return err
	}
	tmp := w.cfg.Path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, w.cfg.Path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// load reads the kept result. What it says of a release is checked as a
// feed is, and measured against this build: after an update the release
// it found is no longer newer.
func (w *Watch) load() Result {
	if w.cfg.Path == "" {
		return Result{}
	}
	b, err := os.ReadFile(w.cfg.Path)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			w.cfg.Log.Warn("read the last update check", "err", err)
		}
		return Result{}
	}
	r, err := parseResult(b, w.c.Current)
	if err != nil {
		w.cfg.Log.Warn("read the last update check; it counts as none", "err", err)
		return Result{}
	}
	return r
}

// parseResult reads a kept result for a build of version current.
func parseResult(b []byte, current string) (Result, error) {
	var r Result
	if err := json.Unmarshal(b, &r); err != nil {
		return Result{}, fmt.Errorf("read %s: %w", WatchFile, err)
	}
	if r.CheckedAt.IsZero() {
		return Result{}, fmt.Errorf("read %s: it says no time", WatchFile)
	}
	r.Current = current
	if r.Error != "" || r.Latest == "" {
		r.Status = Status{Current: current}
		return r, nil
	}
	if _, ok := parseSemver(r.Latest); !ok {
		return Result{}, fmt.Errorf("read %s: version %q is not a version", WatchFile, r.Latest)
	}
	if err := checkDownload("", Download{URL: r.URL, SHA256: r.SHA256}); err != nil {
		return Result{}, fmt.Errorf("read %s: %w", WatchFile, err)
	}
	r.Available = Newer(r.Latest, current)
	return r, nil
}
