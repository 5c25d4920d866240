package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	if !s.tokens.has(hash) {
		_, err := s.store.TokenWorkspace(ctx, hash)
		if errors.Is(err, ErrNotFound) {
			return notRegistered(w)
		}
		if err != nil {
			s.log.Error("webhook: look up token", "token", shown(hash), "err", err)
			return writeError(w, http.StatusInternalServerError, "the webhook could not be taken; try again")
		}
		s.tokens.add(hash)
	}
	if r.ContentLength > s.cfg.MaxBody {
		return s.tooLarge(w)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return s.tooLarge(w)
	case err != nil:
		return writeError(w, http.StatusBadRequest, "the body could not be read")
	}
	now := s.cfg.Now()
	rec := Record{ExpiresAt: now.Add(s.cfg.Retention), Delivery: protocol.Delivery{
		ID: newDeliveryID(now), TokenHash: hash, ReceivedAt: now, Method: r.Method, Query: r.URL.RawQuery,
		Header: selectHeaders(r.Header), Body: body}}
	ws, err := s.commit(ctx, rec)
	if err != nil {
		s.log.Error("webhook: store", "token", shown(hash), "err", err)
		return writeError(w, http.StatusInternalServerError, "the webhook could not be stored; try again")
	}
	if ws == "" {
		// Unregistered since it was looked up (by another relay process,
		// say): nothing was stored.
		s.tokens.drop(hash)
		return notRegistered(w)
	}
	s.hub.poke(ws)
	s.log.Debug("webhook taken", "workspace", ws, "token", shown(hash), "delivery", rec.ID, "size", len(body))
	return writeJSON(w, http.StatusAccepted, protocol.Accepted{DeliveryID: rec.ID})
}

func notRegistered(w http.ResponseWriter) int {
	// The desktop registers its tokens' hashes when it connects: a
	// trigger made while it was offline is unknown until then.
	return writeError(w, http.StatusNotFound, "no trigger at this URL: the token is wrong or was rotated, or its desktop has not connected since the trigger was made")
}

func (s *Server) tooLarge(w http.ResponseWriter) int {
	return writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is over %d KiB", s.cfg.MaxBody>>10))
}

// tokenCache holds the token hashes the intake found registered, so that a
// call of a known token costs no lookup before its body is read. It need
// not be exact: an entry may outlive its token (unregistered through
// another relay process), since the commit checks each delivery's token
// again and stores nothing for one gone. The relay's own changes of
// tokens empty it.
type tokenCache struct {
	mu     sync.RWMutex
	hashes map[string]bool
}

// maxCachedTokens bounds the cache: past it, it starts over.
const maxCachedTokens = 1 << 16

func (c *tokenCache) has(hash string) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.hashes[hash]
}

func (c *tokenCache) add(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.hashes == nil || len(c.hashes) >= maxCachedTokens {
		c.hashes = map[string]bool{}
	}
	c.hashes[hash] = true
}

func (c *tokenCache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.hashes, hash)
}

func (c *tokenCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hashes = nil
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
	var named []string // by Connection: mostly none, or keep-alive
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			named = append(named, http.CanonicalHeaderKey(strings.TrimSpace(name)))
		}
	}
	out := make(http.Header, len(h))
	for k, v := range h {
		ck := http.CanonicalHeaderKey(k)
		if !hopHeaders[ck] && !slices.Contains(named, ck) {
			out[k] = v
		}
	}
	return out
}

// hopHeaders are the headers selectHeaders drops whatever Connection says.
var hopHeaders = map[string]bool{"Connection": true, "Keep-Alive": true, "Proxy-Connection": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true, "Cookie": true}

// write is one intake waiting for its delivery to be committed.
type write struct {
	rec  Record
	ws   string // set before done: the workspace it was stored for, "" if its token is not registered
	done chan error
}

// maxBatch bounds the deliveries committed together.
const maxBatch = 256

// commit stores rec durably and returns the workspace it was stored for
// ("" when its token is not registered: nothing was stored). Calls that
// arrive while a commit is under way share the next one (group commit):
// the intake then costs a fraction of an fsync a call.
func (s *Server) commit(ctx context.Context, rec Record) (string, error) {
	w := &write{rec: rec, done: make(chan error, 1)}
	select {
	case s.writes <- w:
	case <-ctx.Done():
		return "", ctx.Err()
	case <-s.base.Done():
		return "", errors.New("the relay is stopping")
	}
	select {
	case err := <-w.done:
		return w.ws, err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-s.base.Done():
		return "", errors.New("the relay is stopping")
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
		wss, err := s.store.AddDeliveries(wctx, recs)
		cancel()
		for i, w := range batch {
			if err == nil {
				w.ws = wss[i]
			}
			w.done <- err
		}
	}
}
