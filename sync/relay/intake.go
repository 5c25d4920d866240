package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// maxToken bounds a presented token: real ones are a few dozen characters.
const maxToken = 256

// intake takes a call of <relay>/h/{token}:
//
//	202 {"delivery_id"}  stored (committed) for the workspace's desktop
//	404                  no workspace registered this token's hash; nothing is stored
//	413                  the body is over MaxBody
//	500                  it could not be stored: try again
//
// The method is not checked here: the desktop's trigger decides.
func (s *Server) intake(w http.ResponseWriter, r *http.Request) {
	status := s.take(w, r)
	s.metrics.webhook(status)
}

func (s *Server) take(w http.ResponseWriter, r *http.Request) int {
	token := r.PathValue("token")
	if token == "" || len(token) > maxToken {
		return writeError(w, http.StatusNotFound, "no trigger at this URL")
	}
	ctx := r.Context()
	hash := protocol.TokenHash(token)
	ws, err := s.store.TokenWorkspace(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		// The desktop registers its tokens' hashes when it connects: a
		// trigger made while it was offline is unknown until then.
		return writeError(w, http.StatusNotFound, "no trigger at this URL: the token is wrong or was rotated, or its desktop has not connected since the trigger was made")
	}
	if err != nil {
		s.log.Error("webhook: look up token", "token", shown(hash), "err", err)
		return writeError(w, http.StatusInternalServerError, "the webhook could not be taken; try again")
	}
	tooLarge := fmt.Sprintf("the body is over %d KiB", s.cfg.MaxBody>>10)
	if r.ContentLength > s.cfg.MaxBody {
		return writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return writeError(w, http.StatusRequestEntityTooLarge, tooLarge)
	case err != nil:
		return writeError(w, http.StatusBadRequest, "the body could not be read")
	}
	now := s.cfg.Now()
	rec := Record{WorkspaceID: ws, ExpiresAt: now.Add(s.cfg.Retention), Delivery: protocol.Delivery{
		ID: newDeliveryID(now), TokenHash: hash, ReceivedAt: now, Method: r.Method, Query: r.URL.RawQuery,
		Header: selectHeaders(r.Header), Body: body}}
	if err := s.commit(ctx, rec); err != nil {
		s.log.Error("webhook: store", "workspace", ws, "token", shown(hash), "err", err)
		return writeError(w, http.StatusInternalServerError, "the webhook could not be stored; try again")
	}
	s.hub.poke(ws)
	s.log.Debug("webhook taken", "workspace", ws, "token", shown(hash), "delivery", rec.ID, "size", len(body))
	return writeJSON(w, http.StatusAccepted, protocol.Accepted{DeliveryID: rec.ID})
}

// shown is what logs print of a token hash: enough to tell two apart.
func shown(hash string) string { return hash[:min(len(hash), 8)] + "…" }

// selectHeaders returns the headers of a webhook call worth forwarding:
// all but the hop-by-hop ones (RFC 9110 §7.6.1, and those Connection
// names), Host (the relay's), Content-Length (recomputed) and Cookie (the
// relay sets none, so any is someone else's). Signature headers
// (webhook-id/-timestamp/-signature, X-Hub-Signature-256,
// Stripe-Signature…) and Authorization pass: the desktop's trigger may
// verify them.
func selectHeaders(h http.Header) http.Header {
	drop := map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
		"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
		"Host": true, "Content-Length": true, "Cookie": true}
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			drop[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	out := http.Header{}
	for k, v := range h {
		if !drop[http.CanonicalHeaderKey(k)] {
			out[k] = v
		}
	}
	return out
}

// write is one intake waiting for its delivery to be committed.
type write struct {
	rec  Record
	done chan error
}

// maxBatch bounds the deliveries committed together.
const maxBatch = 256

// commit stores rec durably. Calls that arrive while a commit is under way
// share the next one (group commit): the intake then costs a fraction of an
// fsync a call.
func (s *Server) commit(ctx context.Context, rec Record) error {
	w := &write{rec: rec, done: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-ctx.Done():
		return ctx.Err()
	case <-s.base.Done():
		return errors.New("the relay is stopping")
	}
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.base.Done():
		return errors.New("the relay is stopping")
	}
}

func (s *Server) commitLoop(ctx context.Context) {
	for {
		var batch []*write
		select {
		case <-ctx.Done():
			return
		case w := <-s.writes:
			batch = append(batch, w)
		}
	more:
		for len(batch) < maxBatch {
			select {
			case w := <-s.writes:
				batch = append(batch, w)
			default:
				break more
			}
		}
		recs := make([]Record, len(batch))
		for i, w := range batch {
			recs[i] = w.rec
		}
		// A batch under way is finished even when the relay stops: its
		// callers are waiting for the answer.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := s.store.AddDeliveries(wctx, recs)
		cancel()
		for _, w := range batch {
			w.done <- err
		}
	}
}
