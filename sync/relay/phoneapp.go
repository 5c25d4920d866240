package relay

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

//go:embed phoneapp
var phoneFiles embed.FS

// phoneApp serves the phone's web app under /p/: a page, its service
// worker, manifest and icons. Nothing in it is per workspace: what a phone
// holds (its secret, the phone key) stays in its browser.
func phoneApp() http.Handler {
	sub, _ := fs.Sub(phoneFiles, "phoneapp")
	files := http.StripPrefix(strings.TrimSuffix(protocol.PathPhoneApp, "/"), http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-cache")
		if strings.HasSuffix(r.URL.Path, ".webmanifest") {
			h.Set("Content-Type", "application/manifest+json")
		}
		files.ServeHTTP(w, r)
	})
}
