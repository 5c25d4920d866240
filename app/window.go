//go:build desktop

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"
)

// Run opens the window and blocks until it is closed.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, stopNotifications := context.WithCancel(ctx)
	notificationsDone := make(chan struct{})
	err := wails.Run(&options.App{
		Title:     o.Title,
		Width:     1280,
		Height:    800,
		MinWidth:  720,
		MinHeight: 480,
		AssetServer: &assetserver.Options{
			Handler: withToken(o.Handler, o.Token),
		},
		BackgroundColour: options.NewRGB(246, 247, 249),
		Linux: &linux.Options{
			ProgramName:         "rerun",
			Icon:                icon,
			WebviewGpuPolicy:    linux.WebviewGpuPolicyOnDemand,
			WindowIsTranslucent: false,
		},
		OnStartup: func(wctx context.Context) {
			log.Info("window open")
			// Off the startup path: a D-Bus that does not answer must not
			// hold the window.
			go func() {
				defer close(notificationsDone)
				if o.Home != nil {
					runNotifications(ctx, wctx, o.Home, log)
				}
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

// HasWindow says this build can open a window.
const HasWindow = true

// runNotifications readies the OS notifications of the window (wctx) and
// shows the home's new notifications there until ctx ends. Without them the
// app works as before: the failure is logged once.
func runNotifications(ctx, wctx context.Context, home *workspace.Home, log *slog.Logger) {
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
	<-forwardNotifications(ctx, home, send, log)
}
