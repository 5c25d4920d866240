package connector

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// slot holds the connection of one installed app. connecting serialises
// opening it; c is guarded by Service.mu.
type slot struct {
	connecting sync.Mutex
	c          *conn
}

// conn is one open MCP session.
type conn struct {
	client *mcpclient.Client
	stdio  *stdioTransport // stdio servers only

	mu      sync.Mutex
	tools   map[string]liveTool // by the server's name
	stale   bool                // the server said its tool list changed
	active  int                 // calls in flight
	lastUse time.Time
}

type liveTool struct {
	def  Definition
	hash string
}

// close ends the session and, for a stdio server, its whole process group
// (see stdioTransport.Close).
func (c *conn) close() {
	c.client.Close()
}

// dead reports a stdio server that exited or hung up since the last call:
// the next one starts it again.
func (c *conn) dead() bool {
	return c.stdio != nil && c.stdio.ended()
}

// errClosed is returned once the service has stopped.
var errClosed = errors.New("the apps service has stopped")

// connection returns the open session of an installed app, opening it when
// there is none. The tool list it holds is fresh (relisted when the server
// said it changed).
func (s *Service) connection(ctx context.Context, id string) (*conn, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errClosed
	}
	sl := s.slots[id]
	if sl == nil {
		sl = &slot{}
		s.slots[id] = sl
	}
	s.mu.Unlock()

	sl.connecting.Lock()
	defer sl.connecting.Unlock()
	s.mu.Lock()
	c := sl.c
	s.mu.Unlock()
	if c != nil {
		c.mu.Lock()
		stale := c.stale
		c.mu.Unlock()
		switch {
		case c.dead():
			s.dropConn(id, c)
		case !stale:
			return c, nil
		case s.relist(ctx, id, c) == nil:
			return c, nil
		default:
			// The session is gone (an SSE stream dropped, the server
			// restarted): open a new one.
			s.dropConn(id, c)
		}
	}

	cn, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(cn.Missing) > 0 {
		return nil, fault.Invalid("%s is not signed in: %s", cn.Name, cn.Next)
	}
	c, err = s.open(ctx, cn)
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err() // the caller gave up: says nothing about the app
	}
	if err != nil {
		s.failed(ctx, cn, err)
		return nil, s.connectError(cn, err)
	}
	s.mu.Lock()
	if s.closed || s.slots[id] != sl {
		s.mu.Unlock()
		c.close()
		if s.closed {
			return nil, errClosed
		}
		return nil, fault.NotFound("%s was uninstalled", cn.Name)
	}
	sl.c = c
	s.mu.Unlock()
	if err := s.record(ctx, cn, c); err != nil {
		s.dropConn(id, c)
		return nil, err
	}
	return c, nil
}

// open starts the transport, runs the MCP handshake and lists the tools.
func (s *Service) open(ctx context.Context, cn Connector) (*conn, error) {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	t, err := cn.Transport.resolve(s.resolve)
	if err != nil {
		return nil, err
	}
	if err := s.checkHosts(cn, t); err != nil {
		return nil, err
	}
	c, err := s.dial(cctx, cn, t)
	if err != nil && t.Type == TransportHTTP && errors.Is(err, transport.ErrLegacySSEServer) {
		t.Type = TransportSSE
		c, err = s.dial(cctx, cn, t)
	}
	if err != nil {
		return nil, err
	}
	c.lastUse = s.now()
	if err := s.list(cctx, c); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// dial connects one transport and initialises the session.
func (s *Service) dial(ctx context.Context, cn Connector, t Transport) (*conn, error) {
	c := &conn{}
	var oauth *transport.OAuthConfig
	if cn.Auth == AuthOAuth && t.Type != TransportStdio {
		cfg, err := s.oauthConfig(cn)
		if err != nil {
			return nil, err
		}
		oauth = &cfg
	}
	var tr transport.Interface
	switch t.Type {
	case TransportStdio:
		// Not CommandContext: the process lives as long as the
		// connection, not as long as the call that opened it.
		cmd, boxEnv, tmp, err := s.sandboxedCommand(ctx, cn.AgentID, t)
		if err != nil {
			return nil, fmt.Errorf("start the server in its sandbox: %w", err)
		}
		base := baseEnv()
		if boxEnv != nil {
			base = append(sandboxedEnv(base), boxEnv...)
		}
		cmd.Env = append(base, envList(t.Env)...)
		if s.cfg.AgentsDir != "" {
			if d := filepath.Join(s.cfg.AgentsDir, cn.AgentID, "files"); isDir(d) {
				cmd.Dir = d
			}
		}
		stderr := &tail{max: 4 << 10}
		cmd.Stderr, cmd.WaitDelay = stderr, 2*time.Second
		c.stdio = newStdioTransport(cmd, stderr)
		c.stdio.tmp = tmp
		tr = c.stdio
	case TransportHTTP:
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(t.Headers),
			transport.WithHTTPBasicClient(s.cfg.HTTPClient), transport.WithHTTPLogger(s.log)}
		if oauth != nil {
			opts = append(opts, transport.WithHTTPOAuth(*oauth))
		}
		h, err := transport.NewStreamableHTTP(t.URL, opts...)
		if err != nil {
			return nil, fault.Invalid("the server URL is not valid: %v", err)
		}
		tr = h
	case TransportSSE:
		opts := []transport.ClientOption{transport.WithHeaders(t.Headers),
			transport.WithHTTPClient(s.cfg.HTTPClient), transport.WithSSELogger(s.log)}
		if oauth != nil {
			opts = append(opts, transport.WithOAuth(*oauth))
		}
		h, err := transport.NewSSE(t.URL, opts...)
		if err != nil {
			return nil, fault.Invalid("the server URL is not valid: %v", err)
		}
		tr = h
	default:
		return nil, fault.Invalid("unknown transport %q", t.Type)
	}
	fail := func(err error) (*conn, error) {
		c.close()
		if c.stdio != nil {
			if text := c.stdio.stderr.String(); text != "" {
				return nil, &stderrError{err, text}
			}
		}
		return nil, err
	}
	c.client = mcpclient.NewClient(tr)
	c.client.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			c.mu.Lock()
			c.stale = true
			c.mu.Unlock()
		}
	})
	// The transport's own goroutines (stdio reader, SSE stream) live with
	// the service, not with this call.
	if err := c.client.Start(s.ctx); err != nil {
		return fail(err)
	}
	// An SSE stream that drops makes every later call fail: mark the
	// session stale so the next call relists, and fails over to a new one.
	c.client.OnConnectionLost(func(error) {
		c.mu.Lock()
		c.stale = true
		c.mu.Unlock()
	})
	_, err := c.client.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: s.cfg.ClientName, Version: s.cfg.ClientVersion},
	}})
	if err != nil {
		return fail(err)
	}
	return c, nil
}

// failed records a connection that could not be opened.
func (s *Service) failed(ctx context.Context, cn Connector, cause error) {
	status := StatusError
	if isAuthError(cause) {
		status = StatusNeedsSignIn
	}
	msg := s.redact(s.describe(cause))
	now := store.FormatTime(s.now())
	err := s.db.Tx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		_, err := tx.ExecContext(context.WithoutCancel(ctx), `UPDATE connectors SET status = ?, error = ?, checked_at = ? WHERE id = ?`, status, msg, now, cn.ID)
		return err
	})
	if err != nil {
		s.log.Error("record connector failure", "connector", cn.ID, "err", err)
		return
	}
	s.log.Info("app connection failed", "connector", cn.ID, "app", cn.Name, "status", status, "err", msg)
	if cn.Status != status || cn.Error != msg {
		cn.Status, cn.Error = status, msg
		s.publish(KindUpdated, cn)
	}
}

// describe turns a connection failure into a sentence, with what a stdio
// server wrote to stderr when it says more.
func (s *Service) describe(err error) string {
	var se *stderrError
	if errors.As(err, &se) {
		return se.Error()
	}
	return fault.Message(err)
}

// connectError is the error a caller sees when an app could not be reached.
func (s *Service) connectError(cn Connector, err error) error {
	if fault.Is(err) {
		return err
	}
	if isAuthError(err) {
		return fault.Invalid("%s refused the credentials: the person must sign in again in the agent's Apps tab", cn.Name)
	}
	return fmt.Errorf("could not connect to %s: %s", cn.Name, s.redact(s.describe(err)))
}

func isAuthError(err error) bool {
	var authErr *transport.AuthorizationRequiredError
	return mcpclient.IsOAuthAuthorizationRequiredError(err) || errors.As(err, &authErr) ||
		errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, transport.ErrOAuthAuthorizationRequired)
}

// dropConn closes c when it is still the app's connection; the next call
// opens a new one.
func (s *Service) dropConn(id string, c *conn) {
	s.mu.Lock()
	if sl := s.slots[id]; sl != nil && sl.c == c {
		sl.c = nil
	}
	s.mu.Unlock()
	c.close()
}

// drop closes an app's connection, if any.
func (s *Service) drop(id string) {
	s.mu.Lock()
	var c *conn
	if sl := s.slots[id]; sl != nil {
		c, sl.c = sl.c, nil
	}
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// forget closes an app's connection and its slot, for an uninstalled app:
// a connection being opened meanwhile is closed when it completes.
func (s *Service) forget(id string) {
	s.mu.Lock()
	sl := s.slots[id]
	delete(s.slots, id)
	var c *conn
	if sl != nil {
		c, sl.c = sl.c, nil
	}
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
}

// Close ends every connection and stdio process; later calls fail.
func (s *Service) Close() error {
	s.mu.Lock()
	s.closed = true
	var all []*conn
	for id, sl := range s.slots {
		if sl.c != nil {
			all = append(all, sl.c)
		}
		delete(s.slots, id)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range all {
		wg.Add(1)
		go func() { defer wg.Done(); c.close() }()
	}
	wg.Wait()
	s.cancel()
	return nil
}

// Serve closes connections idle for IdleTimeout (ending their processes)
// and those of apps uninstalled behind its back (an agent deleted), until
// ctx ends; then it closes everything.
func (s *Service) Serve(ctx context.Context) error {
	every := min(s.cfg.IdleTimeout/2, 30*time.Second)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.Close()
		case <-tick.C:
			s.sweep(ctx)
		}
	}
}

func (s *Service) sweep(ctx context.Context) {
	now := s.now()
	type idle struct {
		id string
		c  *conn
	}
	var ids []string
	var old []idle
	s.mu.Lock()
	for id, sl := range s.slots {
		ids = append(ids, id)
		if sl.c == nil {
			continue
		}
		sl.c.mu.Lock()
		if sl.c.active == 0 && now.Sub(sl.c.lastUse) >= s.cfg.IdleTimeout {
			old = append(old, idle{id, sl.c})
		}
		sl.c.mu.Unlock()
	}
	s.mu.Unlock()
	for _, x := range old {
		s.log.Debug("closing idle app connection", "connector", x.id)
		s.dropConn(x.id, x.c)
	}
	for _, id := range ids {
		if _, err := s.Get(ctx, id); errors.Is(err, fault.ErrNotFound) {
			s.forget(id)
		}
	}
}
