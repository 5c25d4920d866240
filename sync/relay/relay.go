// Package relay is the rerun-relay server as a library: it takes public
// webhooks for linked workspaces, stores each durably before answering 202,
// and delivers them to the workspace's desktop over the WebSocket the
// desktop keeps open, until acked; and it carries each workspace's change
// log, sealed end to end, between the workspace's devices, telling each
// connected device when another pushed (see package protocol for the
// wire).
//
// The server keeps its state in a [Store] (SQLite for one process,
// PostgreSQL for several behind a load balancer, which wake each other
// with LISTEN/NOTIFY). Delivery is at least once: a desktop that
// reconnects may get a delivery again, and de-duplicates by its id.
//
// It imports nothing from backend/: it never sees a workspace's data, only
// webhook calls on their way to it and sealed records it cannot open.
// cmd/rerun-relay is its flags-only main; package client is the other end.
package relay

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

// Config tunes a Server. Zero values take the defaults.
type Config struct {
	// PublicURL is the relay as webhook senders reach it
	// (https://relay.example.com): a trigger's public URL is
	// PublicURL + "/h/" + token.
	PublicURL string
	// SignupToken, when set, lets POST /v1/workspaces with
	// "Authorization: Bearer <SignupToken>" link a new workspace. Empty
	// closes that door: the operator links workspaces with
	// [Server.CreateWorkspace] (rerun-relay -new-workspace).
	SignupToken string
	// Retention is how long a delivery is retried before it becomes a dead
	// letter (default protocol.Retention, 7 days).
	Retention time.Duration
	// DeadLetterRetention is how long a dead letter is kept for a replay
	// (default 30 days).
	DeadLetterRetention time.Duration
	// MaxBody bounds a webhook body (default protocol.MaxBody, 1 MiB).
	MaxBody int64
	// Heartbeat is how often each end of a delivery socket pings the other
	// (default 15 s); a ping unanswered for as long ends the connection.
	Heartbeat time.Duration
	// AckTimeout is how long a sent delivery waits for its answer before it
	// is sent again on the same connection (default 1 min).
	AckTimeout time.Duration
	// Window is how many deliveries may await an answer on one connection
	// (default 100).
	Window int
	// PushClient sends Web Push messages to phones' push services
	// (default: a client of its own; tests give one that trusts their
	// push service).
	PushClient *http.Client
	// PushHosts are the hosts a phone's push subscription may name: the
	// relay sends Web Push only there, so a pairing cannot point it at
	// another server (its own network, say). An entry starting with "."
	// matches any host under it. Default DefaultPushHosts; tests add
	// 127.0.0.1 for their push service.
	PushHosts []string
	// VAPIDSubject is the contact in the VAPID claims (RFC 8292): an
	// https URL or an email address (default: PublicURL when it is https,
	// else rerun-relay@localhost).
	VAPIDSubject string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests skew it.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	if c.Retention <= 0 {
		c.Retention = protocol.Retention
	}
	if c.DeadLetterRetention <= 0 {
		c.DeadLetterRetention = 30 * 24 * time.Hour
	}
	if c.MaxBody <= 0 {
		c.MaxBody = protocol.MaxBody
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.AckTimeout <= 0 {
		c.AckTimeout = time.Minute
	}
	if c.Window <= 0 {
		c.Window = 100
	}
	if c.PushClient == nil {
		c.PushClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.PushHosts == nil {
		c.PushHosts = DefaultPushHosts
	}
	if c.VAPIDSubject == "" {
		c.VAPIDSubject = "rerun-relay@localhost"
		if strings.HasPrefix(c.PublicURL, "https://") {
			c.VAPIDSubject = c.PublicURL
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Server is a relay. It is an http.Handler; [Server.Serve] must be running
// for webhooks to be taken and delivered.
type Server struct {
	store   Store
	cfg     Config
	log     *slog.Logger
	mux     *http.ServeMux
	hub     hub
	metrics metrics
	writes  chan *write // the intake's group commit
	tokens  tokenCache  // token hashes the intake found registered
	vapidKeys
	// base ends every delivery socket when Serve returns.
	base context.Context
	stop context.CancelFunc
}

// New returns a relay on store. The caller closes store after Serve
// returns.
func New(store Store, cfg Config) *Server {
	cfg.setDefaults()
	base, stop := context.WithCancel(context.Background())
	s := &Server{store: store, cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), hub: hub{rooms: map[string][]*session{}},
		writes: make(chan *write, 1024), base: base, stop: stop}
	s.metrics.init()
	s.routes()
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve runs the relay's workers (the intake's commits, expiry into the
// dead-letter list, notifications from other relay processes) until ctx
// ends, then closes the delivery sockets.
func (s *Server) Serve(ctx context.Context) error {
	defer s.stop()
	var wg sync.WaitGroup
	wg.Go(func() { s.commitLoop(ctx) })
	wg.Go(func() { s.expireLoop(ctx) })
	wg.Go(func() { s.listen(ctx) })
	<-ctx.Done()
	s.stop()
	wg.Wait()
	return nil
}

// listen wakes the sockets of workspaces whose deliveries or changes
// another relay process took (PostgreSQL), listening again after a
// failure.
func (s *Server) listen(ctx context.Context) {
	for {
		err := s.store.Listen(ctx, s.hub.notice)
		if err == nil || ctx.Err() != nil {
			return
		}
		s.log.Warn("listen for deliveries and changes taken by other relay processes", "err", err)
		s.hub.lost() // some may have been missed
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// CreateWorkspace links a new workspace and returns its id and secret: the
// only time the secret exists outside the desktop.
func (s *Server) CreateWorkspace(ctx context.Context) (protocol.Link, error) {
	id := "ws_" + random(10)
	secret := "rrs_" + random(32)
	w := Workspace{ID: id, Verifier: protocol.Verifier(secret), SigningKey: protocol.SigningKey(secret), CreatedAt: s.cfg.Now()}
	if err := s.store.CreateWorkspace(ctx, w); err != nil {
		return protocol.Link{}, err
	}
	s.log.Info("workspace linked", "workspace", id)
	return protocol.Link{WorkspaceID: id, Secret: secret, HookBase: s.cfg.PublicURL + protocol.PathHooks}, nil
}

// expireLoop moves deliveries past their retention to the dead-letter list
// and prunes old dead letters, at start and every minute.
func (s *Server) expireLoop(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		now := s.cfg.Now()
		expired, pruned, err := s.store.Expire(ctx, now, now.Add(-s.cfg.DeadLetterRetention))
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Error("expire deliveries", "err", err)
		case expired+pruned > 0:
			s.metrics.expired.Add(int64(expired))
			s.log.Info("deliveries expired", "dead_letters", expired, "pruned", pruned)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

var b32 = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// random returns n random bytes in lowercase base32.
func random(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails on supported platforms
	return b32.EncodeToString(b)
}

// newDeliveryID returns "dlv_" and 26 characters that sort by t (to the
// millisecond), then 80 random bits.
func newDeliveryID(t time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(t.UnixMilli())<<16)
	rand.Read(b[6:])
	return "dlv_" + b32.EncodeToString(b[:])
}
