//go:build desktop

// Command paintfloor is the floor under the desktop's launch → board
// painted time (build/bench-paint.sh): the same Wails window, the same
// size and drawing policy, showing a static page that reports itself
// painted the way the app's page does (two frames after its content is
// there), with nothing behind it. What the app takes beyond it is the
// app's own: its binary, its backend starting, its page.
//
// It prints the line the bench waits for, `msg="ui board painted"
// page_ms=N`, and ignores its arguments.
package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
)

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Floor</title></head>
<body><p>Painted.</p>
<script>
  requestAnimationFrame(() => requestAnimationFrame(() => fetch('/painted?ms=' + Math.round(performance.now()))));
</script></body></html>`

func main() {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/painted" {
			fmt.Fprintf(os.Stderr, "msg=\"ui board painted\" page_ms=%s\n", r.URL.Query().Get("ms"))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	gpu := linux.WebviewGpuPolicyNever // as the app draws without a graphics device (app/gpu.go)
	for _, pattern := range []string{"/dev/dri/renderD*", "/dev/nvidia[0-9]*"} {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			gpu = linux.WebviewGpuPolicyOnDemand
		}
	}
	err := wails.Run(&options.App{
		Title:            "Floor",
		Width:            1280,
		Height:           800,
		AssetServer:      &assetserver.Options{Handler: h},
		BackgroundColour: options.NewRGB(246, 247, 249),
		Linux:            &linux.Options{ProgramName: "paintfloor", WebviewGpuPolicy: gpu},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "paintfloor:", err)
		os.Exit(1)
	}
}
