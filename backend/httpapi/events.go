package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
)

// events streams workspace changes as Server-Sent Events.
//
// Inside the Wails window the ResponseWriter is not an http.Flusher and the
// request context is never cancelled when the page goes away, so the stream
// sends a heartbeat comment regularly and ends at the first failed write;
// otherwise goroutines would pile up, one per page load.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	changes, stop := s.cfg.Home.Events().Subscribe()
	defer stop()
	s.log.Info("ui event stream opened", "streams", s.cfg.Home.Events().Subscribers())
	defer s.log.Debug("ui event stream closed")
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(format string, args ...any) bool {
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if !send("retry: 1000\n: connected\n\n") {
		return
	}
	tick := time.NewTicker(s.cfg.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case c, ok := <-changes:
			if !ok {
				return
			}
			if !send("%s", frame(c)) {
				return
			}
		case <-tick.C:
			if !send(": ping\n\n") {
				return
			}
		}
	}
}

// frame renders one change as an SSE event: deltas as "delta" events
// ({workspace, run, agent, session, text}), everything else as "change".
func frame(c event.Change) string {
	if c.Kind == event.KindDelta {
		data, _ := json.Marshal(struct {
			Workspace string `json:"workspace"`
			Run       string `json:"run"`
			Agent     string `json:"agent"`
			Session   string `json:"session"`
			Text      string `json:"text"`
		}{c.Workspace, c.ID, c.Agent, c.Session, c.Text})
		return "event: delta\ndata: " + string(data) + "\n\n"
	}
	data, _ := json.Marshal(c)
	return "event: change\ndata: " + string(data) + "\n\n"
}
