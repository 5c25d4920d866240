package httpapi

import (
	"io/fs"
	"net/http"
	"strings"
	"sync"
)

// Pending is the window's handler while the data directory opens: the
// page's own files are served at once, so the window paints the board's
// shell instead of staying blank, and every other request (the API) waits
// until Ready hands over the real handler, then goes to it. After Fail the
// waiting and later API requests are answered 503 with the reason, which
// the page shows.
//
// It is for the window's asset server only, whose requests the window alone
// makes; a TCP listener gets the real handler once it exists.
type Pending struct {
	files http.Handler
	ready chan struct{}
	once  sync.Once
	next  http.Handler // set before ready closes
	err   error
}

// NewPending returns a Pending that serves the built frontend in assets.
func NewPending(assets fs.FS) *Pending {
	return &Pending{files: (&Server{cfg: Config{Assets: assets}}).assets(), ready: make(chan struct{})}
}

// Ready hands over the real handler; the requests waiting go to it.
func (p *Pending) Ready(h http.Handler) {
	p.once.Do(func() { p.next = h; close(p.ready) })
}

// Fail says the data directory could not be opened, and why.
func (p *Pending) Fail(err error) {
	p.once.Do(func() { p.err = err; close(p.ready) })
}

func (p *Pending) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	file := (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasPrefix(r.URL.Path, "/api/")
	select {
	case <-p.ready:
	default:
		if file {
			p.files.ServeHTTP(w, r)
			return
		}
		select {
		case <-p.ready:
		case <-r.Context().Done():
			return
		}
	}
	switch {
	case p.err == nil:
		p.next.ServeHTTP(w, r)
	case file:
		p.files.ServeHTTP(w, r) // the page loads, to say it
	default:
		writeError(w, http.StatusServiceUnavailable, "Rerun could not open its data: "+p.err.Error())
	}
}
