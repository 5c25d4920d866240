package connector

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
	group  *procGroup // stdio servers only
	stderr *tail      // stdio servers only

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

// close ends the session and, for a stdio server, its whole process group:
// a polite SIGTERM first, then the transport closes stdin and reaps the
// leader, then SIGKILL reaches anything left (npx's children included).
func (c *conn) close() {
	if c.group != nil {
		c.group.terminate()
	}
	c.client.Close()
	if c.group != nil {
		c.group.kill()
	}
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
		if !stale {
			return c, nil
		}
		if err := s.relist(ctx, id, c); err == nil {
			return c, nil
		}
		// The session is gone (an SSE stream dropped, the server
		// restarted): open a new one.
		s.dropConn(id, c)
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
		c.group = &procGroup{}
		c.stderr = &tail{max: 4 << 10}
		env := append(baseEnv(), envList(t.Env)...)
		dir := ""
		if s.cfg.AgentsDir != "" {
			if d := filepath.Join(s.cfg.AgentsDir, cn.AgentID, "files"); isDir(d) {
				dir = d
			}
		}
		g, stderr := c.group, c.stderr
		tr = transport.NewStdioWithOptions(t.Command, nil, t.Args,
			transport.WithCommandFunc(func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
				// Not CommandContext: the process lives as long as the
				// connection, not as long as the call that opened it.
				cmd := exec.Command(command, args...)
				cmd.Env, cmd.Dir = env, dir
				// exec copies stderr itself, so once the transport has
				// waited for the process all of it is in the tail; a
				// grandchild keeping the pipe open delays that by WaitDelay
				// at most.
				cmd.Stderr, cmd.WaitDelay = stderr, 2*time.Second
				g.attach(cmd)
				return cmd, nil
			}),
			transport.WithCommandLogger(s.log))
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
		if c.stderr != nil {
			if text := c.stderr.String(); text != "" {
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

// list reads the server's tools into c.
func (s *Service) list(ctx context.Context, c *conn) error {
	res, err := c.client.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	tools := map[string]liveTool{}
	for _, t := range res.Tools {
		def, hash, err := definitionOf(t)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		tools[t.Name] = liveTool{def, hash}
	}
	c.mu.Lock()
	c.tools, c.stale = tools, false
	c.mu.Unlock()
	return nil
}

// relist refreshes an open session's tools and records them.
func (s *Service) relist(ctx context.Context, id string, c *conn) error {
	cctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	defer cancel()
	if err := s.list(cctx, c); err != nil {
		return err
	}
	cn, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	return s.record(ctx, cn, c)
}

// definitionOf is what is pinned of a tool, and its hash: SHA-256 of the
// canonical JSON of name, description and input schema (keys sorted,
// numbers as written), so only a real change changes it.
func definitionOf(t mcp.Tool) (Definition, string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return Definition{}, "", err
	}
	var fields struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Definition{}, "", err
	}
	schema, err := canonicalJSON(fields.InputSchema)
	if err != nil {
		return Definition{}, "", fmt.Errorf("input schema: %w", err)
	}
	d := Definition{Name: t.Name, Description: t.Description, InputSchema: schema}
	b, err := canonicalJSON(mustJSON(d))
	if err != nil {
		return Definition{}, "", err
	}
	sum := sha256.Sum256(b)
	return d, hex.EncodeToString(sum[:]), nil
}

// canonicalJSON re-encodes a JSON value with object keys sorted, numbers
// kept as written and no HTML escaping; empty input is {}.
func canonicalJSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{}`), nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are encoded here
	}
	return b
}

// record stores what a connection listed: the live definitions, the first
// pin of an app never approved (trust on first use: the person set it up
// moments ago), and the status that follows.
func (s *Service) record(ctx context.Context, cn Connector, c *conn) error {
	c.mu.Lock()
	live := c.tools
	c.mu.Unlock()
	now := store.FormatTime(s.now())
	status := StatusConnected
	changed := false
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var pinnedAt sql.NullString
		var was, wasErr string
		if err := tx.QueryRowContext(ctx, `SELECT pinned_at, status, error FROM connectors WHERE id = ?`, cn.ID).Scan(&pinnedAt, &was, &wasErr); err != nil {
			return err
		}
		before := map[string]string{}
		rows, err := tx.QueryContext(ctx, `SELECT name, live_hash FROM connector_tools WHERE connector_id = ? AND live_hash != ''`, cn.ID)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n, h string
			if err := rows.Scan(&n, &h); err != nil {
				rows.Close()
				return err
			}
			before[n] = h
		}
		rows.Close()
		changed = len(before) != len(live) || !pinnedAt.Valid || wasErr != ""
		for name, t := range live {
			if before[name] != t.hash {
				changed = true
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE connector_tools SET live_hash = '', live = '' WHERE connector_id = ?`, cn.ID); err != nil {
			return err
		}
		for name, t := range live {
			if _, err := tx.ExecContext(ctx, `INSERT INTO connector_tools (connector_id, name, live_hash, live, seen_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (connector_id, name) DO UPDATE SET live_hash = excluded.live_hash, live = excluded.live, seen_at = excluded.seen_at`,
				cn.ID, name, t.hash, string(mustJSON(t.def)), now); err != nil {
				return err
			}
		}
		if !pinnedAt.Valid {
			if err := pinAll(ctx, tx, cn.ID, now); err != nil {
				return err
			}
		}
		var blocked int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM connector_tools
			WHERE connector_id = ? AND pinned_hash != '' AND live_hash != '' AND pinned_hash != live_hash`, cn.ID).Scan(&blocked); err != nil {
			return err
		}
		if blocked > 0 {
			status = StatusBlockedChanged
		}
		changed = changed || status != was
		_, err = tx.ExecContext(ctx, `UPDATE connectors SET status = ?, error = '', checked_at = ? WHERE id = ?`, status, now, cn.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("record tools of %s: %w", cn.Name, err)
	}
	if status == StatusBlockedChanged && cn.Status != StatusBlockedChanged {
		s.log.Warn("app changed pinned tool definitions; blocked until approved", "connector", cn.ID, "app", cn.Name, "agent", cn.AgentID)
		if s.onBlocked != nil {
			blockedCn := cn
			blockedCn.Status = status
			s.onBlocked(context.WithoutCancel(ctx), blockedCn)
		}
	}
	// Only news is published: the Apps tab refreshes on it, and may check
	// status again, which must not echo forever.
	if changed {
		cn.Status = status
		s.publish(KindUpdated, cn)
	}
	return nil
}

// pinAll approves the live definitions of every tool and forgets the
// tools the server no longer lists.
func pinAll(ctx context.Context, tx *sql.Tx, id, now string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM connector_tools WHERE connector_id = ? AND live_hash = ''`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE connector_tools SET pinned_hash = live_hash, pinned = live WHERE connector_id = ?`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE connectors SET pinned_at = ? WHERE id = ?`, now, id)
	return err
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

// procGroup is the process group of a stdio server.
type procGroup struct {
	mu  sync.Mutex
	cmd *exec.Cmd
}

func (g *procGroup) attach(cmd *exec.Cmd) {
	setProcessGroup(cmd)
	g.mu.Lock()
	g.cmd = cmd
	g.mu.Unlock()
}

func (g *procGroup) started() *exec.Cmd {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.cmd == nil || g.cmd.Process == nil {
		return nil
	}
	return g.cmd
}

func (g *procGroup) terminate() {
	if cmd := g.started(); cmd != nil {
		terminateGroup(cmd)
	}
}

func (g *procGroup) kill() {
	if cmd := g.started(); cmd != nil {
		killGroup(cmd)
	}
}

// baseEnv is what a stdio server inherits from the app: enough to find and
// run node, python and their package caches, and nothing else — the app's
// own credentials stay out of third-party processes.
func baseEnv() []string {
	keep := []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM",
		"TMPDIR", "TEMP", "TMP", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "NVM_DIR", "VOLTA_HOME", "UV_CACHE_DIR", "npm_config_cache"}
	if runtime.GOOS == "windows" {
		keep = append(keep, "USERPROFILE", "APPDATA", "LOCALAPPDATA", "ProgramFiles", "ProgramFiles(x86)",
			"SystemRoot", "SystemDrive", "ComSpec", "PATHEXT", "WINDIR", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE")
	}
	var env []string
	for _, k := range keep {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func envList(m map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, k+"="+m[k])
	}
	return out
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// tail keeps the last bytes a stdio server wrote to stderr, to explain a
// failed start.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// stderrError is a stdio server failure with what it printed.
type stderrError struct {
	err    error
	stderr string
}

func (e *stderrError) Error() string {
	s := e.stderr
	if len(s) > 1500 {
		s = "…" + s[len(s)-1500:]
	}
	return fmt.Sprintf("%s; the server printed: %s", fault.Message(e.err), s)
}

func (e *stderrError) Unwrap() error { return e.err }
