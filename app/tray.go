//go:build !darwin || cgo

package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// trayActions are what the tray's menu asks of the window.
type trayActions struct {
	Open func() // show and raise the window
	Quit func() // quit the app
	// NewVersion is the newer Rerun the last update check found, "" none
	// (nil: none); read on every change, update.checked among them.
	NewVersion func() string
}

// tray is the icon in the notification area (a D-Bus StatusNotifierItem on
// Linux, so it needs no GTK loop of its own): how many coworkers work and
// how much waits for the person, updated live, a newer Rerun when one was
// found (it opens the window, whose top bar says the rest), and Open,
// Pause all / Resume all, Quit. There is one per process: fyne.io/systray is global
// and starts once (a second startTray returns nil).
type tray struct {
	home *workspace.Home
	act  trayActions
	log  *slog.Logger
	conn *dbus.Conn // the session bus, to ask whether a tray shows the icon

	dirty chan struct{}
	mu    sync.Mutex
	items trayItems
}

type trayItems struct {
	open, update, working, waiting, hold, quit *systray.MenuItem
}

// trayOnce guards the process's one tray: systray can start only once.
var trayOnce sync.Once

// startTray shows the icon and keeps its menu up to date until ctx ends,
// then removes it. Without a D-Bus session bus there is no tray: it returns
// nil and the window behaves as without one.
func startTray(ctx context.Context, home *workspace.Home, act trayActions, log *slog.Logger) (t *tray) {
	conn, err := dbus.SessionBus()
	if err != nil {
		log.Info("no tray icon: no D-Bus session bus", "err", err)
		return nil
	}
	trayOnce.Do(func() {
		t = &tray{home: home, act: act, log: log, conn: conn, dirty: make(chan struct{}, 1)}
		ready := make(chan struct{})
		start, end := systray.RunWithExternalLoop(func() { t.build(); close(ready) }, nil)
		start()
		changes, unsubscribe := home.Events().Subscribe()
		go func() {
			defer end()
			defer unsubscribe()
			<-ready
			t.refresh(ctx)
			for {
				select {
				case <-ctx.Done():
					return
				case c, ok := <-changes:
					if !ok {
						return
					}
					if c.Kind != event.KindDelta {
						t.touch()
					}
				case <-t.dirty:
					t.refresh(ctx)
				}
			}
		}()
		go t.clicks(ctx, ready)
	})
	return t
}

// build adds the menu; systray calls it once, when it starts.
func (t *tray) build() {
	systray.SetIcon(icon)
	systray.SetTitle("Rerun")
	systray.SetTooltip("Rerun")
	systray.SetOnTapped(t.act.Open)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items.open = systray.AddMenuItem("Open Rerun", "Show the window")
	t.items.update = systray.AddMenuItem("Update available", "Open Rerun to see what changed")
	t.items.update.Hide()
	systray.AddSeparator()
	t.items.working = systray.AddMenuItem("No coworker working", "")
	t.items.working.Disable()
	t.items.waiting = systray.AddMenuItem("Nothing waits for you", "")
	t.items.waiting.Disable()
	systray.AddSeparator()
	t.items.hold = systray.AddMenuItem("Pause all coworkers", "Stop every coworker at its next step; schedules and triggers still queue")
	systray.AddSeparator()
	t.items.quit = systray.AddMenuItem("Quit Rerun", "Stop every coworker and quit")
}

// clicks acts on the menu's items until ctx ends.
func (t *tray) clicks(ctx context.Context, ready <-chan struct{}) {
	<-ready
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.items.open.ClickedCh:
			t.act.Open()
		case <-t.items.update.ClickedCh:
			t.act.Open()
		case <-t.items.hold.ClickedCh:
			t.holdAll(ctx, !t.allHeld())
		case <-t.items.quit.ClickedCh:
			t.act.Quit()
		}
	}
}

// touch asks for a refresh; refreshes asked for meanwhile become one.
func (t *tray) touch() {
	select {
	case t.dirty <- struct{}{}:
	default:
	}
}

// status is what the tray shows, summed over the home's workspaces.
type trayStatus struct {
	Working, Waiting int
	Held             bool // every workspace's coworkers are paused
}

func (t *tray) status(ctx context.Context) trayStatus {
	st := trayStatus{Held: true}
	for _, info := range t.home.List() {
		w, err := t.home.Workspace(info.ID)
		if err != nil {
			continue
		}
		if n, err := w.Runs.Working(ctx); err == nil {
			st.Working += n
		}
		if n, _, err := w.Notify.Open(ctx); err == nil {
			st.Waiting += n
		}
		st.Held = st.Held && w.Runs.Held()
	}
	return st
}

func (t *tray) allHeld() bool { return t.status(context.Background()).Held }

// holdAll pauses (on) or resumes the coworkers of every workspace.
func (t *tray) holdAll(ctx context.Context, on bool) {
	for _, info := range t.home.List() {
		w, err := t.home.Workspace(info.ID)
		if err != nil {
			continue
		}
		if err := w.Runs.Hold(ctx, on); err != nil {
			t.log.Warn("pause all coworkers from the tray", "workspace", info.ID, "err", err)
		}
	}
	t.touch()
}

// refresh shows the current counts.
func (t *tray) refresh(ctx context.Context) {
	st := t.status(ctx)
	working, waiting := trayLabels(st)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.items.working.SetTitle(working)
	t.items.waiting.SetTitle(waiting)
	if v := t.newVersion(); v != "" {
		t.items.update.SetTitle("Update available: " + v)
		t.items.update.Show()
	} else {
		t.items.update.Hide()
	}
	if st.Held {
		t.items.hold.SetTitle("Resume all coworkers")
	} else {
		t.items.hold.SetTitle("Pause all coworkers")
	}
	systray.SetTooltip("Rerun: " + working + ", " + waiting)
}

func (t *tray) newVersion() string {
	if t.act.NewVersion == nil {
		return ""
	}
	return t.act.NewVersion()
}

// trayLabels are the menu's two status lines.
func trayLabels(st trayStatus) (working, waiting string) {
	switch {
	case st.Held:
		working = "All coworkers paused"
	case st.Working == 0:
		working = "No coworker working"
	case st.Working == 1:
		working = "1 coworker working"
	default:
		working = fmt.Sprintf("%d coworkers working", st.Working)
	}
	if st.Waiting == 0 {
		waiting = "Nothing waits for you"
	} else {
		waiting = fmt.Sprintf("%d waiting for you", st.Waiting)
	}
	return working, waiting
}

// shown reports whether something shows the icon now: a
// StatusNotifierWatcher owns its name on the session bus, with a host (a
// panel) registered when it says. Asked at each close of the window, since
// a panel can come and go.
func (t *tray) shown() bool {
	if t == nil {
		return false
	}
	return watcherPresent(t.conn)
}

const watcherName = "org.kde.StatusNotifierWatcher"

func watcherPresent(conn *dbus.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var has bool
	if err := conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&has); err != nil || !has {
		return false
	}
	v, err := conn.Object(watcherName, "/StatusNotifierWatcher").GetProperty(watcherName + ".IsStatusNotifierHostRegistered")
	if err != nil {
		return true // a watcher without the property: trust it
	}
	host, ok := v.Value().(bool)
	return !ok || host
}
