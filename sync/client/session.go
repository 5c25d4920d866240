package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// message is a frame read from the socket, with its payload.
type message struct {
	f       protocol.Frame
	payload []byte
}

// maxAckBatch bounds the ids recorded and acked together.
const maxAckBatch = 64

// session runs one connection: dial, hello, then deliveries until it
// fails. helloed says whether the relay accepted it.
func (c *Client) session(ctx context.Context, seen *seenSet, connected chan<- struct{}) (helloed bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, res, err := websocket.Dial(dctx, c.connectURL(), &websocket.DialOptions{
		HTTPClient: c.cfg.HTTPClient, // its Timeout bounds the handshake only
		HTTPHeader: http.Header{"Authorization": {"Bearer " + c.cfg.Secret}},
	})
	if err != nil {
		if res != nil && res.StatusCode == http.StatusUnauthorized {
			return false, ErrUnauthorized
		}
		return false, fmt.Errorf("connect to the relay: %w", err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(protocol.MaxFrame)

	_, msg, err := conn.Read(dctx)
	if err != nil {
		return false, fmt.Errorf("read the relay's hello: %w", err)
	}
	hello, _, err := protocol.Decode(msg)
	if err != nil || hello.Type != protocol.TypeHello {
		return false, fmt.Errorf("the relay did not say hello: %s", msg[:min(len(msg), 100)])
	}
	interval := c.cfg.Heartbeat
	if interval <= 0 {
		interval = 15 * time.Second
		if hello.HeartbeatMS > 0 {
			interval = time.Duration(hello.HeartbeatMS) * time.Millisecond
		}
	}
	if skew := c.cfg.Now().Sub(time.UnixMilli(hello.Time)); skew > protocol.Tolerance/2 || skew < -protocol.Tolerance/2 {
		c.log.Warn("this computer's clock differs from the relay's: deliveries are refused past 5 minutes; set the clock",
			"skew", skew.Round(time.Second))
	}
	c.setConnected(true, hello.HookBase, nil)
	c.log.Info("connected to the relay", "url", c.cfg.RelayURL)
	select {
	case connected <- struct{}{}:
	default:
	}

	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	frames := make(chan message, 256) // the relay's window (100) bounds what is unanswered
	go func() {
		for {
			_, msg, err := conn.Read(sctx)
			if err != nil {
				stop(fmt.Errorf("read from the relay: %w", err))
				return
			}
			f, payload, err := protocol.Decode(msg)
			if err != nil {
				stop(err)
				return
			}
			if f.Type == protocol.TypeChanges {
				c.heardChanges(f.Last)
				continue
			}
			select {
			case frames <- message{f, payload}:
			case <-sctx.Done():
				return
			}
		}
	}()
	go c.heartbeat(sctx, conn, interval, stop)
	c.deliver(ctx, sctx, conn, frames, seen)
	return true, context.Cause(sctx)
}

func (c *Client) url(suffix string) string {
	return c.base.String() + protocol.WorkspacePath(c.cfg.WorkspaceID, suffix)
}

// connectURL is the socket's URL: with the device and whether it takes
// webhooks (it does when there is a Deliver).
func (c *Client) connectURL() string {
	q := url.Values{}
	if c.cfg.Device != "" {
		q.Set("device", c.cfg.Device)
	}
	q.Set("hooks", "0")
	if c.cfg.Deliver != nil {
		q.Set("hooks", "1")
	}
	return c.url(protocol.PathConnect) + "?" + q.Encode()
}

// heardChanges handles a "changes" frame, in the read loop.
func (c *Client) heardChanges(last int64) {
	c.mu.Lock()
	c.status.LastChange = max(c.status.LastChange, last)
	c.mu.Unlock()
	if c.cfg.OnChanges != nil {
		c.cfg.OnChanges(last)
	}
}

// heartbeat pings the relay every interval and ends the connection when a
// pong does not come back in time, when the computer wakes from sleep (the
// socket is likely dead and the relay has likely dropped it), or on
// Reconnect.
func (c *Client) heartbeat(ctx context.Context, conn *websocket.Conn, interval time.Duration, fail context.CancelCauseFunc) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.reconnect:
			fail(errors.New("reconnect asked (network change or wake)"))
			return
		case <-t.C:
		}
		// The monotonic clock stops while the computer sleeps; the wall
		// clock does not. Round(0) drops the monotonic reading.
		now := time.Now()
		if slept := now.Round(0).Sub(last.Round(0)) - now.Sub(last); slept > 2*time.Second {
			fail(fmt.Errorf("woke from %s of sleep", slept.Round(time.Second)))
			return
		}
		last = now
		pctx, cancel := context.WithTimeout(ctx, interval)
		err := conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			fail(errors.New("heartbeat: the relay did not answer a ping"))
			return
		}
	}
}

// deliver hands each delivery frame to Deliver in turn, records the ids
// delivered and acks them, in batches when frames queue up. Deliver runs
// under ctx (the client's), so a dropped connection does not interrupt a
// run being queued; the loop ends with sctx (the connection's).
func (c *Client) deliver(ctx, sctx context.Context, conn *websocket.Conn, frames <-chan message, seen *seenSet) {
	var batch []seenEntry // delivered, not yet recorded
	var acks []string     // recorded (or seen before), not yet acked
	pending := map[string]bool{}
	flush := func() {
		if len(batch) > 0 {
			// Recorded even when the connection is gone: the runs are queued.
			if err := seen.add(context.WithoutCancel(ctx), batch, c.cfg.Now()); err != nil {
				// Not acked: the relay sends them again, and Deliver's
				// idempotency key keeps the runs single.
				c.log.Error("record delivered ids", "err", err)
				batch, acks = nil, nil
				clear(pending)
				return
			}
			ids := make([]string, len(batch))
			for i, e := range batch {
				ids[i] = e.id
			}
			if h := c.hook().recorded; h != nil {
				h(ids)
			}
			c.mu.Lock()
			c.status.Delivered += int64(len(batch))
			c.status.LastDelivery = c.cfg.Now()
			c.mu.Unlock()
			batch = nil
			clear(pending)
		}
		if len(acks) > 0 {
			c.send(sctx, conn, protocol.Frame{Type: protocol.TypeAck, IDs: acks})
			acks = nil
		}
	}
	for {
		var m message
		select {
		case <-sctx.Done():
			flush()
			return
		case m = <-frames:
		}
		if m.f.Type == protocol.TypeDelivery {
			if id, runID, ack := c.handle(ctx, sctx, conn, m, seen, pending); ack {
				acks = append(acks, id)
				if runID != "" {
					batch = append(batch, seenEntry{id, runID})
					pending[id] = true
				}
			}
		}
		if len(frames) == 0 || len(acks) >= maxAckBatch {
			flush()
		}
	}
}

// handle verifies one delivery frame and hands it to Deliver unless it was
// delivered before. ack says whether to ack id; runID is set when Deliver
// ran. Nacks and refusals are sent here.
func (c *Client) handle(ctx, sctx context.Context, conn *websocket.Conn, m message, seen *seenSet, pending map[string]bool) (id, runID string, ack bool) {
	d, err := protocol.OpenDelivery(protocol.SigningKey(c.cfg.Secret), m.f, m.payload, c.cfg.Now())
	if err != nil {
		c.log.Warn("delivery frame refused", "delivery", m.f.ID, "err", err)
		c.send(sctx, conn, protocol.Frame{Type: protocol.TypeNack, ID: m.f.ID, Error: err.Error()})
		return "", "", false
	}
	if h := c.hook().received; h != nil {
		h(d.ID)
	}
	if c.cfg.Deliver == nil { // never sent to a socket with hooks=0
		c.send(sctx, conn, protocol.Frame{Type: protocol.TypeNack, ID: d.ID, Error: "this device takes no webhooks"})
		return "", "", false
	}
	if pending[d.ID] {
		return d.ID, "", true
	}
	done, err := seen.has(ctx, d.ID)
	if err != nil {
		c.log.Error("check delivered ids", "delivery", d.ID, "err", err)
		c.send(sctx, conn, protocol.Frame{Type: protocol.TypeNack, ID: d.ID, Error: "the desktop could not read its delivered ids"})
		return "", "", false
	}
	if done {
		c.log.Debug("delivery seen before: acked again", "delivery", d.ID)
		return d.ID, "", true
	}
	runID, err = c.cfg.Deliver(ctx, d)
	switch {
	case errors.Is(err, ErrRefused):
		c.log.Info("delivery refused", "delivery", d.ID, "err", err)
		c.send(sctx, conn, protocol.Frame{Type: protocol.TypeRefuse, ID: d.ID, Error: err.Error()})
		return "", "", false
	case err != nil:
		c.log.Warn("delivery not taken; the relay retries it", "delivery", d.ID, "err", err)
		c.send(sctx, conn, protocol.Frame{Type: protocol.TypeNack, ID: d.ID, Error: err.Error()})
		return "", "", false
	}
	if h := c.hook().delivered; h != nil {
		h(d.ID)
	}
	if runID == "" {
		runID = "-" // Deliver queued a run without naming it
	}
	return d.ID, runID, true
}

// send writes a frame; a failure ends the connection by itself (the reader
// sees it), and unanswered deliveries come again.
func (c *Client) send(ctx context.Context, conn *websocket.Conn, f protocol.Frame) {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := conn.Write(wctx, websocket.MessageText, protocol.Encode(f, nil)); err != nil {
		c.log.Debug("write to the relay", "type", f.Type, "err", err)
	}
}
