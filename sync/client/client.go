// Package client is the desktop's end of the relay (package relay): it
// keeps one outbound WebSocket to the relay for a workspace, hands each
// webhook delivery to the app's Deliver function, and acks it only once
// Deliver has returned (the run is durably queued). It registers the
// workspace's trigger token hashes with the relay, de-duplicates
// deliveries by id in a small SQLite file of its own, and reconnects with
// exponential backoff and jitter after a failure, a wake from sleep or a
// network change. It also carries the workspace's change log for the
// desktop's sync engine: Push and Pull of sealed records (plain HTTPS
// calls), and OnChanges when the relay says another device pushed. A
// second device joins with a pairing code (Pairing, ParsePairing).
//
// The app wires one Client per linked workspace:
//
//	c, err := client.New(client.Config{
//		RelayURL: url, WorkspaceID: id, Secret: secret, Dir: workspaceDir,
//		TokenHashes: triggers.TokenHashes,                  // hex SHA-256 of each live trigger token
//		Deliver:     client.HandlerDeliver(intake, path),   // the local trigger intake, in process
//	})
//	go c.Serve(ctx)
//	// on every trigger create, rotate or delete: c.TokensChanged()
//	// on an OS network-change or wake notification: c.Reconnect()
//
// It imports nothing from backend/; the app adapts.
package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Delivery is one webhook call the relay took for this workspace.
type Delivery = protocol.Delivery

// Errors.
var (
	// ErrRefused, wrapped in an error Deliver returns, says the desktop
	// will never take this delivery (its trigger is gone, the method is
	// not allowed, the body is refused): the relay drops it instead of
	// retrying. Any other error is retried with backoff.
	ErrRefused = errors.New("refused by the desktop")
	// ErrUnauthorized: the relay does not know this workspace id and
	// secret (the link was removed, or the relay's store was reset).
	ErrUnauthorized = errors.New("the relay refused this workspace's id and secret: link the workspace again (Settings → Relay)")
	// ErrNotFound: no such dead letter.
	ErrNotFound = errors.New("not found")
)

// Config is what a Client needs. RelayURL, WorkspaceID, Secret and Dir are
// required; zero values of the rest take the defaults.
type Config struct {
	// RelayURL is the relay, https://relay.example.com.
	RelayURL    string
	WorkspaceID string
	Secret      string
	// Dir is where the client keeps DBFile, the ids of the deliveries it
	// has handed to Deliver (the workspace's data folder).
	Dir string
	// Device is this device's id ("dev_" and up to 60 letters or digits,
	// protocol.ValidDevice), sent when connecting: the relay keeps one
	// socket per device and does not tell a device about its own pushes.
	// Empty: a desktop from before devices (one socket per workspace).
	Device string
	// OnChanges is called with the workspace's newest change seq on each
	// "changes" frame: right after each connection, and whenever another
	// device pushes. It is called from the socket's read loop and must
	// return quickly (signal a puller; never Pull here).
	OnChanges func(last int64)
	// Deliver queues the run a delivery starts and returns its id. It must
	// return only once the run is durably queued: the delivery is acked
	// then, and never sent again. It is called for one delivery at a
	// time, with a context that outlives the connection. It should be
	// idempotent on d.ID (pass it as the intake's idempotency key, as
	// HandlerDeliver does): a process killed after Deliver returned and
	// before the id was recorded gets the delivery again.
	//
	// Nil: this device takes no webhooks (it connects with hooks=0, for
	// "changes" frames only) and registers no token hashes.
	Deliver func(ctx context.Context, d Delivery) (runID string, err error)
	// TokenHashes returns the hex SHA-256 (protocol.TokenHash) of every
	// trigger token of the workspace that works now, rotated-out tokens in
	// their grace period included. The client sends the full set to the
	// relay after it connects and after each TokensChanged. Nil registers
	// none: every public URL answers 404. Unused without Deliver.
	TokenHashes func(ctx context.Context) ([]string, error)
	// Retention is how long delivery ids are remembered (default
	// protocol.Retention, the relay's default; set it to the relay's).
	Retention time.Duration
	// MinBackoff and MaxBackoff bound the wait before reconnecting
	// (defaults 500 ms and 1 min); each failure doubles it, with jitter.
	MinBackoff, MaxBackoff time.Duration
	// Heartbeat is how often the client pings the relay; a ping
	// unanswered for as long ends the connection (default: the relay's,
	// from its hello, else 15 s).
	Heartbeat time.Duration
	// HTTPClient defaults to one with a 30 s timeout for API calls; the
	// WebSocket uses its Transport.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// Status is what the app shows of the relay link.
type Status struct {
	Device    string // Config.Device
	Connected bool
	Since     time.Time // when Connected last changed
	// HookBase + token is a trigger's public URL (from the relay's hello).
	HookBase     string
	LastDelivery time.Time
	Delivered    int64  // deliveries handed to Deliver and recorded, since Serve started
	LastChange   int64  // the newest change seq the relay announced (0 before any)
	Err          string // why the last connection failed or ended
}

// Client links one workspace to its relay. Its methods are safe for
// concurrent use.
type Client struct {
	cfg       Config
	log       *slog.Logger
	base      *url.URL
	reconnect chan struct{} // Reconnect: end the socket, or the wait for the next attempt
	tokens    chan struct{} // TokensChanged: send the hashes again

	mu     sync.Mutex
	status Status
	hooks  hooks // tests stop the process at chosen points
}

// hooks are called, when set, at the points where a desktop can die.
type hooks struct {
	received, delivered func(id string)
	recorded            func(ids []string) // seen ids committed, before the ack
	tokens              func(n int)        // token hashes registered
}

// New checks cfg and returns a client; Serve runs it.
func New(cfg Config) (*Client, error) {
	var missing []string
	for name, empty := range map[string]bool{"RelayURL": cfg.RelayURL == "", "WorkspaceID": cfg.WorkspaceID == "",
		"Secret": cfg.Secret == "", "Dir": cfg.Dir == ""} {
		if empty {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, fmt.Errorf("relay client: %s not set", strings.Join(missing, ", "))
	}
	base, err := url.Parse(strings.TrimRight(cfg.RelayURL, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("relay client: the relay URL %q is not an http(s) URL", cfg.RelayURL)
	}
	if cfg.Device != "" && !protocol.ValidDevice(cfg.Device) {
		return nil, fmt.Errorf("relay client: the device id %q is not \"dev_\" and up to 60 letters or digits", cfg.Device)
	}
	if cfg.Retention <= 0 {
		cfg.Retention = protocol.Retention
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(time.Minute, cfg.MinBackoff)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &Client{cfg: cfg, log: cfg.Logger.With("workspace", cfg.WorkspaceID), base: base,
		reconnect: make(chan struct{}, 1), tokens: make(chan struct{}, 1)}
	c.status.Device = cfg.Device
	return c, nil
}

// TokensChanged tells the client that the workspace's trigger tokens
// changed: it sends TokenHashes to the relay again.
func (c *Client) TokensChanged() { poke(c.tokens) }

// Reconnect drops the connection (or the wait for the next attempt) and
// connects again at once: call it when the OS reports a network change or a
// wake from sleep. The client also notices a sleep by itself.
func (c *Client) Reconnect() { poke(c.reconnect) }

func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Status returns the state of the link.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Client) setConnected(connected bool, hookBase string, why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.status.Connected != connected {
		c.status.Connected, c.status.Since = connected, c.cfg.Now()
	}
	if hookBase != "" {
		c.status.HookBase = hookBase
	}
	switch {
	case connected:
		c.status.Err = ""
	case why != nil:
		c.status.Err = why.Error()
	}
}

// Serve connects to the relay and takes deliveries until ctx ends,
// reconnecting after each failure.
func (c *Client) Serve(ctx context.Context) error {
	seen, err := openSeen(ctx, c.cfg.Dir)
	if err != nil {
		return err
	}
	defer seen.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	connected := make(chan struct{}, 1)
	if c.cfg.Deliver != nil {
		wg.Go(func() { c.registerTokens(ctx, connected) })
	}
	wg.Go(func() { c.prune(ctx, seen) })

	wait := c.cfg.MinBackoff
	for {
		helloed, err := c.session(ctx, seen, connected)
		c.setConnected(false, "", err)
		if ctx.Err() != nil {
			return nil
		}
		if helloed {
			wait = c.cfg.MinBackoff
		}
		level := slog.LevelInfo
		if errors.Is(err, ErrUnauthorized) {
			level, wait = slog.LevelError, c.cfg.MaxBackoff // it will not heal by itself soon
		}
		// Equal jitter: half the wait, plus up to as much again at random,
		// so that desktops cut off together do not return together.
		d := wait/2 + rand.N(wait/2+1)
		c.log.Log(ctx, level, "relay connection ended", "err", err, "retry_in", d.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-c.reconnect:
		case <-time.After(d):
		}
		wait = min(wait*2, c.cfg.MaxBackoff)
	}
}

// registerTokens sends the token hashes after the first connection and
// whenever they change, retrying until the relay has them. An unchanged
// set is not sent again on a reconnect: the relay keeps it.
func (c *Client) registerTokens(ctx context.Context, connected <-chan struct{}) {
	var sent []string
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-connected:
		case <-c.tokens:
		}
		for wait := c.cfg.MinBackoff; ; wait = min(wait*2, c.cfg.MaxBackoff) {
			var hashes []string
			var err error
			if c.cfg.TokenHashes != nil {
				hashes, err = c.cfg.TokenHashes(ctx)
			}
			if err == nil {
				slices.Sort(hashes)
				hashes = slices.Compact(hashes)
				if !first && slices.Equal(hashes, sent) {
					break
				}
				if err = c.putTokens(ctx, hashes); err == nil {
					sent, first = hashes, false
					c.log.Info("trigger tokens registered with the relay", "count", len(hashes))
					if h := c.hook().tokens; h != nil {
						h(len(hashes))
					}
					break
				}
			}
			c.log.Warn("register trigger tokens with the relay", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}

// prune forgets old delivery ids, at start and every hour.
func (c *Client) prune(ctx context.Context, seen *seenSet) {
	for {
		if err := seen.prune(ctx, c.cfg.Now().Add(-c.cfg.Retention)); err != nil && ctx.Err() == nil {
			c.log.Warn("prune seen deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Hour):
		}
	}
}

func (c *Client) hook() hooks {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hooks
}
