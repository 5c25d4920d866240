package update

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// clock is the Watch's fake clock: Now is set by Advance, and After tells
// the test each time the loop goes to sleep (and for how long) and never
// fires, so the loop moves only on Wake.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps chan time.Duration
}

func newClock() *clock {
	return &clock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), sleeps: make(chan time.Duration)}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *clock) After(d time.Duration) <-chan time.Time {
	c.sleeps <- d
	return nil
}

// countingFeed serves feed signed by priv at /feed.json and counts the
// requests for it.
func countingFeed(t *testing.T, feed string, priv ed25519.PrivateKey) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	sig := Sign(priv, []byte(feed))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			requests.Add(1)
			w.Write([]byte(feed))
		case "/feed.json.sig":
			w.Write(sig)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/feed.json", requests
}

// serve runs w.Serve until the test ends and waits for its first sleep.
func serve(t *testing.T, w *Watch, clk *clock) time.Duration {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		for {
			select {
			case <-done:
				return
			case <-clk.sleeps:
			}
		}
	})
	return sleep(t, w, clk)
}

// sleep waits until the loop goes to sleep with no wake pending, and says
// for how long it sleeps.
func sleep(t *testing.T, w *Watch, clk *clock) time.Duration {
	t.Helper()
	for {
		d := waittest.Recv(t, "the watch loop to sleep", clk.sleeps)
		if len(w.wake) == 0 {
			return d
		}
	}
}

// step wakes the loop and waits until it sleeps again: what it does on
// waking is done.
func step(t *testing.T, w *Watch, clk *clock) time.Duration {
	t.Helper()
	w.Wake()
	return sleep(t, w, clk)
}

func watchConfig(dir string, clk *clock, bus *event.Bus) WatchConfig {
	return WatchConfig{Path: filepath.Join(dir, WatchFile), Delay: 10 * time.Second, Every: 24 * time.Hour, Retry: time.Hour,
		Poll: time.Minute, Now: clk.Now, After: clk.After, Bus: bus}
}

// The first check comes Delay after start, the next a day later by the
// wall clock; what it found is kept and read back by the next start,
// which does not check again within the day.
func TestWatchChecksAfterStartThenDaily(t *testing.T) {
	pub, priv := keys(t)
	url, requests := countingFeed(t, feedJSON("v1.5.0"), priv)
	dir, clk, bus := t.TempDir(), newClock(), &event.Bus{}
	changes, stop := bus.Subscribe()
	defer stop()
	start := clk.Now()
	c := &Checker{FeedURL: url, PublicKey: pub, Current: "v1.4.2", Platform: "windows-amd64"}
	w := NewWatch(c, watchConfig(dir, clk, bus))
	w.SetDaily(true)

	if d := serve(t, w, clk); d != 10*time.Second || requests.Load() != 0 {
		t.Fatalf("at start: sleeps %s after %d requests, want 10s and none", d, requests.Load())
	}
	clk.Advance(10 * time.Second)
	if d := step(t, w, clk); d != time.Minute || requests.Load() != 1 {
		t.Fatalf("10 s after start: sleeps %s after %d requests, want 1m after 1", d, requests.Load())
	}
	last := w.Last()
	if !last.Available || last.Latest != "v1.5.0" || last.Current != "v1.4.2" || last.Notes != "Faster board." ||
		!last.CheckedAt.Equal(start.Add(10*time.Second)) || last.Error != "" {
		t.Fatalf("after the first check: %+v", last)
	}
	if ch := waittest.Recv(t, "the checked change", changes); ch.Kind != KindChecked || ch.Workspace != "" {
		t.Fatalf("published %+v, want %s for no workspace", ch, KindChecked)
	}

	// A laptop asleep for most of the day: the loop reads the wall clock.
	clk.Advance(23*time.Hour + 59*time.Minute)
	if step(t, w, clk); requests.Load() != 1 {
		t.Fatalf("within the day: %d requests, want 1", requests.Load())
	}
	clk.Advance(time.Minute)
	if step(t, w, clk); requests.Load() != 2 {
		t.Fatalf("a day later: %d requests, want 2", requests.Load())
	}
	checked := w.Last().CheckedAt

	// The next start reads it back and waits out the day.
	clk.Advance(3 * time.Hour)
	again := NewWatch(c, watchConfig(dir, clk, bus))
	if got := again.Last(); !got.CheckedAt.Equal(checked) || !got.Available || got.Latest != "v1.5.0" || got.Notes != "Faster board." {
		t.Fatalf("after a restart: %+v, want the check of %s", got, checked)
	}
	again.SetDaily(true)
	if serve(t, again, clk); requests.Load() != 2 {
		t.Fatalf("a restart within the day checked: %d requests, want 2", requests.Load())
	}
	// Once this version is installed, what was found is no longer newer.
	updated := NewWatch(&Checker{FeedURL: url, PublicKey: pub, Current: "v1.5.0"}, watchConfig(dir, clk, bus))
	if got := updated.Last(); got.Available || got.Current != "v1.5.0" || got.Latest != "v1.5.0" {
		t.Fatalf("after updating: %+v, want v1.5.0 not available", got)
	}
}

// A feed with a bad signature is remembered as an error, with no release
// in it, and tried again after Retry, not a day.
func TestWatchRemembersABadSignatureAsAnError(t *testing.T) {
	pub, _ := keys(t)
	_, other := keys(t)
	url, requests := countingFeed(t, feedJSON("v9.0.0"), other)
	dir, clk := t.TempDir(), newClock()
	c := &Checker{FeedURL: url, PublicKey: pub, Current: "v1.4.2"}
	w := NewWatch(c, watchConfig(dir, clk, nil))
	w.SetDaily(true)
	serve(t, w, clk)
	clk.Advance(10 * time.Second)
	step(t, w, clk)
	for name, got := range map[string]Result{"remembered": w.Last(), "read back": NewWatch(c, watchConfig(dir, clk, nil)).Last()} {
		if requests.Load() != 1 || got.Available || got.Latest != "" || got.URL != "" || got.Notes != "" ||
			!strings.Contains(got.Error, "signature is not valid") || got.CheckedAt.IsZero() {
			t.Errorf("%s: %+v after %d requests, want the signature error and no release", name, got, requests.Load())
		}
	}
	clk.Advance(59 * time.Minute)
	if step(t, w, clk); requests.Load() != 1 {
		t.Fatalf("before Retry: %d requests", requests.Load())
	}
	clk.Advance(time.Minute)
	if step(t, w, clk); requests.Load() != 2 {
		t.Fatalf("after Retry: %d requests, want 2", requests.Load())
	}
}

// "Only when I ask" makes no request however long it runs; turning the
// daily check on checks at once when the last check is old, and a click
// checks whatever the choice.
func TestWatchManualMakesNoRequest(t *testing.T) {
	pub, priv := keys(t)
	url, requests := countingFeed(t, feedJSON("v1.5.0"), priv)
	clk := newClock()
	w := NewWatch(&Checker{FeedURL: url, PublicKey: pub, Current: "v1.4.2"}, watchConfig(t.TempDir(), clk, nil))
	if d := serve(t, w, clk); d != time.Minute {
		t.Fatalf("manual sleeps %s, want the poll of 1m", d)
	}
	clk.Advance(72 * time.Hour)
	step(t, w, clk)
	if n := requests.Load(); n != 0 || !w.Last().CheckedAt.IsZero() {
		t.Fatalf("manual: %d requests, last %+v; want none", n, w.Last())
	}

	w.SetDaily(true)
	if sleep(t, w, clk); requests.Load() != 1 || !w.Last().Available {
		t.Fatalf("turned daily: %d requests, last %+v; want a check at once", requests.Load(), w.Last())
	}
	w.SetDaily(false)
	sleep(t, w, clk)
	clk.Advance(72 * time.Hour)
	if step(t, w, clk); requests.Load() != 1 {
		t.Fatalf("turned manual again: %d requests, want 1", requests.Load())
	}

	if st, err := w.Check(context.Background()); err != nil || !st.Available || requests.Load() != 2 || !w.Last().CheckedAt.Equal(clk.Now()) {
		t.Fatalf("a click: %+v, %v after %d requests; last %+v", st, err, requests.Load(), w.Last())
	}
}

// With checks off, or no key built in, nothing is fetched, remembered or
// served, even with a result kept from another build.
func TestWatchOffMakesNoRequest(t *testing.T) {
	pub, priv := keys(t)
	url, requests := countingFeed(t, feedJSON("v1.5.0"), priv)
	dir := t.TempDir()
	kept := NewWatch(&Checker{FeedURL: url, PublicKey: pub, Current: "v1.4.2"}, WatchConfig{Path: filepath.Join(dir, WatchFile)})
	if _, err := kept.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		c    *Checker
		want error
	}{
		{"feed off", &Checker{FeedURL: "off", PublicKey: pub, Current: "v1.4.2"}, ErrOff},
		{"no feed", &Checker{PublicKey: pub, Current: "v1.4.2"}, ErrOff},
		{"no key", &Checker{FeedURL: url, Current: "v1.4.2"}, ErrNoKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := requests.Load()
			clk := newClock()
			w := NewWatch(tc.c, watchConfig(dir, clk, nil))
			w.SetDaily(true)
			if !errors.Is(w.Off(), tc.want) || !w.Last().CheckedAt.IsZero() {
				t.Fatalf("Off = %v, last %+v; want %v and nothing kept", w.Off(), w.Last(), tc.want)
			}
			done := make(chan error, 1)
			go func() { done <- w.Serve(context.Background()) }()
			if err := waittest.Recv(t, "Serve to return", done); err != nil {
				t.Fatalf("Serve = %v", err)
			}
			if _, err := w.Check(context.Background()); !errors.Is(err, tc.want) || !w.Last().CheckedAt.IsZero() {
				t.Fatalf("Check = %v, last %+v", err, w.Last())
			}
			if n := requests.Load() - before; n != 0 {
				t.Fatalf("%d requests, want none", n)
			}
		})
	}
}

// A kept file that cannot be read, or that names a release no feed could,
// counts as no check: it never shows an update.
func TestParseResultRefusesWhatNoFeedSays(t *testing.T) {
	good := `"checked_at":"2026-03-02T09:00:10Z","latest":"v1.5.0","url":"https://example.com/a","sha256":"` + sum + `"`
	for name, b := range map[string]string{
		"not json":   `{`,
		"no time":    `{"latest":"v1.5.0","url":"https://example.com/a","sha256":"` + sum + `"}`,
		"bad latest": `{"checked_at":"2026-03-02T09:00:10Z","latest":"newest","url":"https://example.com/a","sha256":"` + sum + `"}`,
		"http url":   `{"checked_at":"2026-03-02T09:00:10Z","latest":"v1.5.0","url":"http://example.com/a","sha256":"` + sum + `"}`,
		"short hash": `{"checked_at":"2026-03-02T09:00:10Z","latest":"v1.5.0","url":"https://example.com/a","sha256":"ab"}`,
	} {
		t.Run(name, func(t *testing.T) {
			if r, err := parseResult([]byte(b), "v1.4.2"); err == nil {
				t.Errorf("got %+v, want an error", r)
			}
		})
	}
	r, err := parseResult([]byte(`{`+good+`,"available":false,"current":"v0.1.0"}`), "v1.4.2")
	if err != nil || !r.Available || r.Current != "v1.4.2" {
		t.Errorf("kept release: %+v, %v; want available against this build", r, err)
	}
	r, err = parseResult([]byte(`{`+good+`,"available":true,"error":"the release feed's signature is not valid"}`), "v1.4.2")
	if err != nil || r.Available || r.Latest != "" || r.URL != "" || r.Error == "" {
		t.Errorf("kept error: %+v, %v; want the error and no release", r, err)
	}
}

// A damaged file is replaced by the next check.
func TestWatchOverwritesADamagedFile(t *testing.T) {
	pub, priv := keys(t)
	url, _ := countingFeed(t, feedJSON("v1.5.0"), priv)
	dir := t.TempDir()
	path := filepath.Join(dir, WatchFile)
	os.WriteFile(path, []byte("{not json"), 0o600)
	c := &Checker{FeedURL: url, PublicKey: pub, Current: "v1.4.2"}
	if got := NewWatch(c, WatchConfig{Path: path}).Last(); !got.CheckedAt.IsZero() {
		t.Fatalf("damaged file read as %+v", got)
	}
	if _, err := NewWatch(c, WatchConfig{Path: path}).Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := NewWatch(c, WatchConfig{Path: path}).Last(); !got.Available || got.Latest != "v1.5.0" {
		t.Fatalf("after a check over a damaged file: %+v", got)
	}
}

// Whatever the kept file holds, it shows an update only for a release a
// feed could name, newer than this build, from a check that did not fail.
func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"checked_at":"2026-03-02T09:00:10Z","latest":"v1.5.0","url":"https://example.com/a","sha256":"` + sum + `"}`))
	f.Add([]byte(`{"checked_at":"2026-03-02T09:00:10Z","latest":"v1.5.0","available":true,"error":"x"}`))
	f.Add([]byte(`{"checked_at":"0001-01-01T00:00:00Z","available":true}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseResult(b, "v1.4.2")
		if err != nil {
			return
		}
		if r.Current != "v1.4.2" || r.CheckedAt.IsZero() {
			t.Fatalf("%q read as %+v", b, r)
		}
		if r.Available && (r.Error != "" || !Newer(r.Latest, "v1.4.2") || checkDownload("", Download{URL: r.URL, SHA256: r.SHA256}) != nil) {
			t.Fatalf("%q shows an update: %+v", b, r)
		}
	})
}
