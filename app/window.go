//go:build desktop

package app

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

//go:embed icon.png
var icon []byte

// Run opens the window and blocks until it is closed.
func Run(ctx context.Context, o Options) error {
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
		OnStartup: func(context.Context) {
			if o.Logger != nil {
				o.Logger.Info("window open")
			}
		},
	})
	if err != nil {
		return fmt.Errorf("open window: %w", err)
	}
	return nil
}

// HasWindow says this build can open a window.
const HasWindow = true
