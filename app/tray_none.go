//go:build darwin && !cgo

package app

import (
	"context"
	"log/slog"

	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

type trayActions struct {
	Open, Quit func()
	NewVersion func() string
}

// tray: a macOS build without cgo has no tray icon.
type tray struct{}

func startTray(context.Context, *workspace.Home, trayActions, *slog.Logger) *tray { return nil }

func (t *tray) shown() bool { return false }
