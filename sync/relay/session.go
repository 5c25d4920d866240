package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// statusReplaced closes a socket that a newer one of the same device
// replaces.
const statusReplaced websocket.StatusCode = 4001

// session is one device's socket.
type session struct {
	srv    *Server
	ws     Workspace
	device string // "" for a desktop from before devices
	hooks  bool   // takes webhook deliveries (when it is the hook socket)
	conn   *websocket.Conn
	wake   chan struct{} // look for due deliveries
	notify chan struct{} // heard or refresh changed
	heard  atomic.Int64  // the newest seq another device's push announced
	// refresh: notifications may have been lost; read the newest seq
	// from the store.
	refresh atomic.Bool
	cancel  context.CancelFunc
	once    sync.Once
}

func (s *session) poke() {
	select {
	case s.wake <- struct{}{}:
	default: // already woken
	}
}

// changed records that the change log grew to last (-1: read it from the
// store) and wakes the session to say so.
func (s *session) changed(last int64) {
	if last < 0 {
		s.refresh.Store(true)
	}
	for {
		old := s.heard.Load()
		if last <= old || s.heard.CompareAndSwap(old, last) {
			break
		}
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *session) end(code websocket.StatusCode, reason string) {
	s.once.Do(func() {
		// The close handshake first (it waits for the peer, 5 s at most),
		// then the session's context: cancelling a read drops the
		// connection without its close code.
		go func() {
			s.conn.Close(code, reason)
			s.cancel()
		}()
	})
}

// flight is a delivery sent and not yet answered.
type flight struct {
	sent    time.Time
	attempt int
}

// connect answers GET /v1/workspaces/{id}/connect?device=…&hooks=1|0: a
// device's socket. Without the query it is device "" with hooks, as
// desktops from before devices connect.
func (s *Server) connect(w http.ResponseWriter, r *http.Request, ws Workspace) {
	q := r.URL.Query()
	device := q.Get("device")
	if device != "" && !protocol.ValidDevice(device) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("device %.70q is not \"dev_\" and up to 60 letters or digits", device))
		return
	}
	hooks := true
	switch q.Get("hooks") {
	case "", "1":
	case "0":
		hooks = false
	default:
		writeError(w, http.StatusBadRequest, "hooks must be 1 (this device takes webhooks) or 0")
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered
	}
	conn.SetReadLimit(64 << 10) // acks and nacks only
	ctx, cancel := context.WithCancel(s.base)
	ss := &session{srv: s, ws: ws, device: device, hooks: hooks, conn: conn,
		wake: make(chan struct{}, 1), notify: make(chan struct{}, 1), cancel: cancel}
	s.hub.add(ss)
	s.log.Info("device connected", "workspace", ws.ID, "device", device, "hooks", hooks)
	err = ss.run(ctx)
	s.hub.remove(ss)
	ss.end(websocket.StatusGoingAway, "the relay is closing this connection")
	s.log.Info("device disconnected", "workspace", ws.ID, "device", device, "reason", err)
}

// run sends due deliveries, at most Window unanswered at a time, and
// handles the desktop's answers until the socket fails or ctx ends.
func (s *session) run(ctx context.Context) error {
	cfg := &s.srv.cfg
	hello := protocol.Frame{Type: protocol.TypeHello, WorkspaceID: s.ws.ID, Time: cfg.Now().UnixMilli(),
		HeartbeatMS: cfg.Heartbeat.Milliseconds(), HookBase: cfg.PublicURL + protocol.PathHooks}
	if err := s.write(ctx, protocol.Encode(hello, nil)); err != nil {
		return err
	}
	// Then the newest seq, read after the socket joined the hub: a push
	// from now on is announced too.
	s.refresh.Store(true)
	var sent int64 = -1
	if err := s.sendChanges(ctx, &sent); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	in := make(chan protocol.Frame)
	go func() {
		for {
			_, msg, err := s.conn.Read(ctx)
			if err != nil {
				cancel(err)
				return
			}
			f, _, err := protocol.Decode(msg)
			if err != nil {
				cancel(err)
				return
			}
			select {
			case in <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go heartbeat(ctx, s.conn, cfg.Heartbeat, cancel)

	inflight := map[string]flight{}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		next, err := s.send(ctx, inflight)
		if err != nil {
			return err
		}
		now := cfg.Now()
		// Wake for the next retry, the first answer overdue, or in any case
		// every 30 s (a notification from another process may be lost).
		wait := 30 * time.Second
		if !next.IsZero() {
			wait = min(wait, next.Sub(now))
		}
		for _, f := range inflight {
			wait = min(wait, f.sent.Add(cfg.AckTimeout).Sub(now))
		}
		timer.Reset(max(wait, time.Millisecond))
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-s.wake:
		case <-s.notify:
			if err := s.sendChanges(ctx, &sent); err != nil {
				return err
			}
		case <-timer.C:
		case f := <-in:
			if err := s.answer(ctx, f, inflight); err != nil {
				return err
			}
		}
	}
}

// sendChanges writes a changes frame when the newest seq heard (or read
// from the store, after a refresh) is past the one *sent last.
func (s *session) sendChanges(ctx context.Context, sent *int64) error {
	if s.refresh.Swap(false) {
		last, err := s.srv.store.LastSeq(ctx, s.ws.ID)
		if err != nil {
			return err
		}
		s.changed(last)
	}
	last := s.heard.Load()
	if last <= *sent {
		return nil
	}
	*sent = last
	return s.write(ctx, protocol.Encode(protocol.Frame{Type: protocol.TypeChanges, Last: last}, nil))
}

// send writes due deliveries while the window has room, and says when the
// next one not yet due will be. Deliveries whose answer is overdue are
// sent again. Only the workspace's hook socket sends.
func (s *session) send(ctx context.Context, inflight map[string]flight) (time.Time, error) {
	cfg := &s.srv.cfg
	if !s.hooks || !s.srv.hub.isHookSocket(s) {
		return time.Time{}, nil
	}
	now := cfg.Now()
	for id, f := range inflight {
		if now.Sub(f.sent) >= cfg.AckTimeout {
			delete(inflight, id)
		}
	}
	room := cfg.Window - len(inflight)
	if room <= 0 {
		return time.Time{}, nil
	}
	due, next, err := s.srv.store.Due(ctx, s.ws.ID, now, cfg.Window+len(inflight))
	if err != nil {
		return time.Time{}, err
	}
	for _, d := range due {
		if _, ok := inflight[d.ID]; ok {
			continue
		}
		if room == 0 {
			break
		}
		if err := s.write(ctx, protocol.SealDelivery(s.ws.SigningKey, d, cfg.Now())); err != nil {
			return time.Time{}, err
		}
		inflight[d.ID] = flight{sent: now, attempt: d.Attempt}
		room--
		s.srv.metrics.sent.Add(1)
	}
	return next, nil
}

// answer handles an ack, nack or refuse.
func (s *session) answer(ctx context.Context, f protocol.Frame, inflight map[string]flight) error {
	srv := s.srv
	now := srv.cfg.Now()
	switch f.Type {
	case protocol.TypeAck, protocol.TypeRefuse:
		ids := f.IDs
		if f.Type == protocol.TypeRefuse {
			ids = []string{f.ID}
			srv.log.Info("delivery refused by the desktop", "workspace", s.ws.ID, "delivery", f.ID, "reason", f.Error)
		}
		received, err := srv.store.Ack(ctx, s.ws.ID, ids)
		if err != nil {
			return err
		}
		for _, id := range ids {
			delete(inflight, id)
		}
		for _, t := range received {
			srv.metrics.latency.observe(now.Sub(t))
		}
		if f.Type == protocol.TypeRefuse {
			srv.metrics.refused.Add(int64(len(received)))
		} else {
			srv.metrics.acked.Add(int64(len(received)))
		}
	case protocol.TypeNack:
		fl, ok := inflight[f.ID]
		delete(inflight, f.ID)
		if !ok {
			return nil // answered on an earlier connection; it is due again anyway
		}
		if err := srv.store.Retry(ctx, s.ws.ID, f.ID, truncate(f.Error, 500), now.Add(backoff(fl.attempt))); err != nil {
			return err
		}
		srv.metrics.retried.Add(1)
		srv.log.Info("delivery nacked", "workspace", s.ws.ID, "delivery", f.ID, "attempt", fl.attempt+1, "reason", f.Error)
	default:
		srv.log.Debug("unknown frame from the desktop", "workspace", s.ws.ID, "type", f.Type)
	}
	return nil
}

// backoff is the wait before the next try of a delivery nacked attempt+1
// times: 1 s doubling to 10 min.
func backoff(attempt int) time.Duration {
	return min(time.Second<<min(attempt, 10), 10*time.Minute)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (s *session) write(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return s.conn.Write(ctx, websocket.MessageText, msg)
}

// heartbeat pings every interval; a ping unanswered for as long fails the
// connection (a desktop that slept, or a network that changed under it).
func heartbeat(ctx context.Context, conn *websocket.Conn, interval time.Duration, fail context.CancelCauseFunc) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			fail(errors.New("heartbeat: no pong"))
			return
		}
	}
}
