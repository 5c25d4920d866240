// Package app is the desktop shell: the native window around the UI, and the
// OS notifications the workspace's delivery settings ask for. It holds no
// domain logic; the window shows the same httpapi handler `rerun serve`
// serves to a browser.
//
// Only builds with the "desktop" tag (and cgo, GTK/WebKit) get a window; other
// builds return ErrNoWindow from Run.
package app

import (
	_ "embed"
	"errors"
	"log/slog"
	"net/http"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// icon is the window's and the tray's icon.
//
//go:embed icon.png
var icon []byte

// ErrNoWindow is returned by Run in builds without the desktop shell.
var ErrNoWindow = errors.New("this build of rerun has no window (it was built without the desktop tag); run `rerun serve` and open the URL it prints, or build the desktop binary with `make build`")

// Options is what the window shows.
type Options struct {
	Title string
	// Handler is the UI (httpapi). Requests from the window reach it with the
	// UI token already attached: only the window talks to its asset server.
	Handler http.Handler
	Token   string
	Logger  *slog.Logger
	// DataDir is the data directory the window is the one window of.
	DataDir string
	// Home gives the data directory once it is open: the window opens
	// while it does, showing the board's shell, and its tray and OS
	// notifications (as the delivery settings say) start once it is
	// there. Closed without one (or nil): none.
	Home <-chan *workspace.Home
	// Hidden starts the app in the tray without a window (`rerun
	// --hidden`, how it starts at login), where a tray icon shows.
	Hidden bool
	// NewVersion is the newer Rerun the last update check found ("":
	// none); the tray offers it.
	NewVersion func() string
}

// WindowHosts and WindowOrigins are how the window's requests present
// themselves; the handler must accept them besides loopback names. WebKit
// (Linux, macOS) serves the page from wails://wails; WebView2 (Windows)
// from http://wails.localhost.
var (
	WindowHosts   = []string{"wails", "wails.localhost"}
	WindowOrigins = []string{"wails://wails", "http://wails.localhost"}
)

// withToken hands the window the UI token directly: every request coming
// through the window's asset server carries it, so the page never needs it.
func withToken(h http.Handler, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+token)
		h.ServeHTTP(w, r)
	})
}
