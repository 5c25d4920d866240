package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// maxPushBody bounds the JSON of a push: MaxPushBytes of records in base64
// (4/3) and, per change, its key, device and field names.
const maxPushBody = protocol.MaxPushBytes/3*4 + protocol.MaxPush*512

// pushChanges answers POST /v1/workspaces/{id}/changes with a
// protocol.ChangePush: 200 protocol.Pushed once committed; 400 saying what
// is wrong with the push, and nothing stored. The workspace's other
// sockets (on any relay process) hear the new newest seq.
func (s *Server) pushChanges(w http.ResponseWriter, r *http.Request, ws Workspace) {
	var push protocol.ChangePush
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxPushBody))
	if err := dec.Decode(&push); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the push is over %d MiB; send fewer changes at a time", maxPushBody>>20))
			return
		}
		writeError(w, http.StatusBadRequest, `the body must be {"changes": [{"key", "device", "body" (base64)}, …]}: `+err.Error())
		return
	}
	if err := protocol.CheckPush(push); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	last, err := s.store.PushChanges(r.Context(), ws.ID, push.Changes, s.cfg.Now())
	if err != nil {
		// Not ErrNotFound either: authed has just read the workspace, so
		// it was unlinked in between.
		s.log.Error("push changes", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the changes could not be stored; push them again")
		return
	}
	var size int
	for _, c := range push.Changes {
		size += len(c.Body)
	}
	s.metrics.changes.Add(int64(len(push.Changes)))
	// This process's sockets hear it now; with PostgreSQL the others hear
	// the NOTIFY of the push (and this one again: a seq already sent is
	// not sent twice).
	s.hub.changed(ws.ID, last, pushers(push.Changes))
	s.log.Debug("changes pushed", "workspace", ws.ID, "count", len(push.Changes), "bytes", size, "last", last)
	writeJSON(w, http.StatusOK, protocol.Pushed{Last: last})
}

// pullChanges answers GET /v1/workspaces/{id}/changes?after=N&limit=M with
// a protocol.ChangePage.
func (s *Server) pullChanges(w http.ResponseWriter, r *http.Request, ws Workspace) {
	q := r.URL.Query()
	var after int64
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("after=%.30q must be a seq: 0 or a positive whole number", v))
			return
		}
		after = n
	}
	limit := protocol.DefaultPull
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > protocol.MaxPull {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit=%.30q must be a whole number from 1 to %d", v, protocol.MaxPull))
			return
		}
		limit = n
	}
	page, err := s.store.Changes(r.Context(), ws.ID, after, limit)
	if err != nil {
		s.log.Error("pull changes", "workspace", ws.ID, "err", err)
		writeError(w, http.StatusInternalServerError, "the changes could not be read; try again")
		return
	}
	writeJSON(w, http.StatusOK, page)
}
