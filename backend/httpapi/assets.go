package httpapi

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

const notBuilt = `<!doctype html><meta charset="utf-8"><title>Rerun</title>
<p style="font:16px system-ui;margin:3em">The frontend of this build is missing. Run <code>make run</code> (or <code>make frontend</code>) to build it.</p>`

// assets serves the built frontend. Unknown paths without a file extension get
// index.html, so a reload on a client-side route still opens the app.
func (s *Server) assets() http.Handler {
	if s.cfg.Assets == nil {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveNotBuilt(w) })
	}
	files := http.FileServerFS(s.cfg.Assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := fs.Stat(s.cfg.Assets, "index.html"); err != nil {
			serveNotBuilt(w)
			return
		}
		p := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if p == "" || p == "index.html" {
			serveIndex(w, s.cfg.Assets)
			return
		}
		if _, err := fs.Stat(s.cfg.Assets, p); err != nil && path.Ext(p) == "" {
			serveIndex(w, s.cfg.Assets)
			return
		}
		if strings.HasPrefix(p, "assets/") { // Vite names these by content hash
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		files.ServeHTTP(w, r)
	})
}

func serveIndex(w http.ResponseWriter, assets fs.FS) {
	b, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		serveNotBuilt(w)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}

func serveNotBuilt(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	w.Write([]byte(notBuilt))
}
