//go:build desktop

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// Run opens the window and blocks until the app quits. With a tray icon
// shown, closing the window only hides it (the coworkers keep working) and
// the tray's Quit quits; without one, closing quits as it always did.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, stopNotifications := context.WithCancel(ctx)
	notificationsDone := make(chan struct{})
	var notices notifier

	var mu sync.Mutex
	var window context.Context // Wails' context, once the window is up
	withWindow := func(f func(context.Context)) {
		mu.Lock()
		c := window
		mu.Unlock()
		if c != nil {
			f(c)
		}
	}
	show := func() {
		withWindow(func(c context.Context) { runtime.WindowShow(c); runtime.WindowUnminimise(c) })
	}
	var quitting atomic.Bool
	var home atomic.Pointer[workspace.Home] // once open
	var t atomic.Pointer[tray]
	// confirmQuit asks before quitting while coworkers work (the window is
	// shown first: the question belongs to it). It runs off the UI thread:
	// a dialog opened from a close handler would wait for itself.
	confirmQuit := func() bool {
		title, message, ask := quitQuestion(working(ctx, home.Load()))
		if !ask {
			return true
		}
		ok := true
		withWindow(func(c context.Context) {
			show()
			answer, err := runtime.MessageDialog(c, runtime.MessageDialogOptions{
				Type: runtime.QuestionDialog, Title: title, Message: message,
				Buttons: []string{"Quit", "Keep working"}, DefaultButton: "Keep working", CancelButton: "Keep working",
			})
			if err != nil {
				log.Info("ask before quitting", "err", err)
				return
			}
			// Linux shows Yes/No whatever the buttons; macOS and Windows name them.
			ok = answer == "Quit" || answer == "Yes"
		})
		return ok
	}
	quit := func() {
		if !confirmQuit() {
			return
		}
		quitting.Store(true)
		withWindow(runtime.Quit)
	}
	// The window opens while the data directory does (the page shows the
	// board's shell at once); the tray and the notifications start once
	// the home is open.
	dataDir := o.DataDir
	opened := make(chan struct{})
	arrive := func() {
		var h *workspace.Home
		if o.Home != nil {
			h = <-o.Home
		}
		if h != nil && ctx.Err() == nil {
			home.Store(h)
			t.Store(startTray(ctx, h, trayActions{Open: show, Quit: quit, NewVersion: o.NewVersion}, h.Logger()))
		}
		close(opened)
	}
	// Started hidden (at login) only where the tray can bring it back:
	// that waits for the home and its tray. Elsewhere than Linux the tray
	// starts on this thread, before the window's loop, as it always did.
	hidden := false
	if o.Hidden || goruntime.GOOS != "linux" {
		arrive()
		hidden = o.Hidden && t.Load().shown()
		if o.Hidden && !hidden {
			log.Info("no tray icon shows here: opening the window instead of starting hidden")
		}
	} else {
		go arrive()
	}
	gpu := linux.WebviewGpuPolicyOnDemand
	if goruntime.GOOS == "linux" && !hasGPU("/dev") {
		gpu = linux.WebviewGpuPolicyNever
		log.Info("no graphics device: the window draws without GPU compositing")
	}
	err := wails.Run(&options.App{
		Title:       o.Title,
		Width:       1280,
		Height:      800,
		MinWidth:    720,
		MinHeight:   480,
		StartHidden: hidden,
		AssetServer: &assetserver.Options{
			Handler: withToken(o.Handler, o.Token),
		},
		BackgroundColour: options.NewRGB(246, 247, 249),
		Linux: &linux.Options{
			ProgramName:         "rerun",
			Icon:                icon,
			WebviewGpuPolicy:    gpu,
			WindowIsTranslucent: false,
		},
		// A second `rerun` on this data directory shows this window
		// (on Linux it asks before opening anything: HandOver).
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId:               InstanceID(dataDir),
			OnSecondInstanceLaunch: func(options.SecondInstanceData) { show() },
		},
		OnBeforeClose: func(wctx context.Context) (keep bool) {
			whenClosed := prefs.InBackground
			if dataDir != "" {
				whenClosed = prefs.Open(dataDir).Get().WhenClosed
			}
			switch onClose(quitting.Load(), t.Load().shown(), whenClosed) {
			case closeAnyway:
				return false
			case closeQuit:
				if working(ctx, home.Load()) == 0 {
					quitting.Store(true)
					return false
				}
				go quit() // asks first; the window stays until answered
				return true
			}
			runtime.WindowHide(wctx)
			if dataDir != "" {
				if err := backgroundHint(dataDir, notices.send); err != nil {
					log.Info("tell that Rerun keeps running", "err", err)
				}
			}
			return true
		},
		OnStartup: func(wctx context.Context) {
			log.Info("window open", "hidden", hidden)
			mu.Lock()
			window = wctx
			mu.Unlock()
			shown.Store(&wctx)
			// Off the startup path: a D-Bus that does not answer must not
			// hold the window.
			go func() {
				defer close(notificationsDone)
				select {
				case <-opened:
				case <-ctx.Done():
					return
				}
				h, l := home.Load(), log
				if h != nil {
					l = h.Logger()
				}
				runNotifications(ctx, wctx, h, &notices, l)
			}()
		},
		OnShutdown: func(wctx context.Context) {
			stopNotifications()
			select {
			case <-notificationsDone:
			case <-time.After(2 * time.Second):
			}
		},
	})
	stopNotifications()
	if err != nil {
		return fmt.Errorf("open window: %w", err)
	}
	return nil
}

// notifier shows OS notifications once they are ready.
type notifier struct {
	mu   sync.Mutex
	show sendFunc
}

func (n *notifier) ready(f sendFunc) {
	n.mu.Lock()
	n.show = f
	n.mu.Unlock()
}

func (n *notifier) send(id, title, body string) error {
	n.mu.Lock()
	f := n.show
	n.mu.Unlock()
	if f == nil {
		return errors.New("OS notifications are not available")
	}
	return f(id, title, body)
}

// HasWindow says this build can open a window.
const HasWindow = true

// shown is Wails' context of the open window, for PickFolder.
var shown atomic.Pointer[context.Context]

// PickFolder shows the system's folder dialog over the window, opening in
// start (when set), and returns the folder chosen: "" when the person
// cancelled. It fails with ErrNoWindow before the window is up.
func PickFolder(_ context.Context, title, start string) (string, error) {
	c := shown.Load()
	if c == nil {
		return "", ErrNoWindow
	}
	return runtime.OpenDirectoryDialog(*c, runtime.OpenDialogOptions{
		Title: title, DefaultDirectory: start, CanCreateDirectories: true,
	})
}

// runNotifications readies the OS notifications of the window (wctx), hands
// them to n, and shows the home's new notifications there (none without a
// home) until ctx ends. Without them the app works as before: the failure
// is logged once.
func runNotifications(ctx, wctx context.Context, home *workspace.Home, n *notifier, log *slog.Logger) {
	if err := runtime.InitializeNotifications(wctx); err != nil {
		log.Warn("OS notifications are not available", "err", err)
		return
	}
	defer runtime.CleanupNotifications(wctx)
	var authorize sync.Once
	send := func(id, title, body string) error {
		// macOS asks the person once, at the first notification rather than
		// at launch; elsewhere this is always granted.
		authorize.Do(func() {
			if ok, err := runtime.CheckNotificationAuthorization(wctx); err == nil && !ok {
				if _, err := runtime.RequestNotificationAuthorization(wctx); err != nil {
					log.Warn("ask for OS notification permission", "err", err)
				}
			}
		})
		return runtime.SendNotification(wctx, runtime.NotificationOptions{ID: id, Title: title, Body: body})
	}
	n.ready(send)
	if home == nil {
		<-ctx.Done()
		return
	}
	<-forwardNotifications(ctx, home, send, log)
}
