// Package frontend exports the built UI (Vite's dist/) for the Go binary.
//
// `make frontend` fills dist/; a fresh clone has only dist/.gitkeep so Go code
// compiles, and the server then shows a page saying to build the frontend.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist is the built frontend, index.html at its root.
func Dist() fs.FS {
	sub, _ := fs.Sub(dist, "dist")
	return sub
}
