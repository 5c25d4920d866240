// Package mcpapi is the workspace's programmatic surface: one MCP endpoint,
// /api/mcp/account, speaking Streamable HTTP: SDK clients get real sessions,
// and a bare JSON-RPC POST with curl works without one. Each tool is a thin
// layer over the same services the UI uses.
//
// The tool set reads its workspace from the context, so the built-in
// workspace agent can use it in process (WithWorkspace) exactly as an outside
// client does over HTTP with an API key.
package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Path is where the endpoint is mounted.
const Path = "/api/mcp/account"

type ctxKey struct{}

// keyKey holds the apikey.Key of an HTTP request.
type keyKey struct{}

// WithWorkspace returns a context whose tool calls act on w.
func WithWorkspace(ctx context.Context, w *workspace.Workspace) context.Context {
	return context.WithValue(ctx, ctxKey{}, w)
}

type localURLKey struct{}

// WithLocalURL returns a context whose tool calls show webhook URLs on the
// server at url (http://127.0.0.1:7777): Handler's requests carry one, an
// in-process caller passes the server's.
func WithLocalURL(ctx context.Context, url string) context.Context {
	return context.WithValue(ctx, localURLKey{}, strings.TrimSuffix(url, "/"))
}

// localURL is the server's address for the tool call in ctx, "" when none
// was given (URLs are then shown as paths).
func localURL(ctx context.Context) string {
	u, _ := ctx.Value(localURLKey{}).(string)
	return u
}

func workspaceFrom(ctx context.Context) (*workspace.Workspace, error) {
	w, _ := ctx.Value(ctxKey{}).(*workspace.Workspace)
	if w == nil {
		return nil, errors.New("no workspace for this call (missing API key)")
	}
	return w, nil
}

const instructions = `This server manages one Rerun workspace: its agents (AI coworkers) arranged in spaces (Boxes), their runs, and their databases. ` +
	`Find agents with list_agents, start work with send_message (optionally waiting for the answer), and read what happened with get_run. ` +
	`Give an agent work that starts on its own with upsert_schedule (a cron expression in a time zone, or a date) and upsert_trigger (a webhook URL other services call). ` +
	`Give it apps (GitHub, Slack, Notion…) with search_connectors and attach_connector; the person then signs in to them in the app. ` +
	`Package an agent for others to install with create_template (from_agent) and the other template tools; submit_template checks one and marks it submitted. ` +
	`Some things are deliberately left to the person in the Rerun app: creating spaces, entering credentials or API keys, managing API keys, answering an agent's questions or approvals, and publishing a template (the app exports the file to share).`

// NewServer returns the MCP server with every tool registered.
//
// Arguments are checked by each tool's strict decoding and the services'
// own validation rather than by mcp-go's schema validation, whose messages
// ("<root>: &{Properties:[handle]}") do not tell a client what to fix.
func NewServer(version string) *server.MCPServer {
	compact := map[string]bool{}
	for _, t := range coreTools() {
		compact[t.name] = true
	}
	s := server.NewMCPServer("rerun", version,
		server.WithToolCapabilities(true),
		server.WithRecovery(),
		server.WithInstructions(instructions),
		// A key with the compact tool set lists and calls the core tools only.
		server.WithToolFilter(func(ctx context.Context, list []mcp.Tool) []mcp.Tool {
			if k, ok := ctx.Value(keyKey{}).(apikey.Key); !ok || k.ToolSet != apikey.ToolsCompact {
				return list
			}
			return slices.DeleteFunc(list, func(t mcp.Tool) bool { return !compact[t.Name] })
		}),
	)
	for _, t := range tools() {
		s.AddTool(t.tool(), t.handle)
	}
	return s
}

// toolDef is one tool: its wire description and its handler.
type toolDef struct {
	name        string
	title       string
	description string
	schema      string // JSON Schema of the arguments
	readOnly    bool
	destructive bool
	idempotent  bool
	// masked: the result and error hold what agents wrote (database rows),
	// so the workspace's variable values are masked in them.
	masked bool
	// refused are argument names outside the schema that the tool refuses
	// with its own message (update_agent's handle) instead of ignoring.
	refused []string
	run     func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error)
}

func (t toolDef) tool() mcp.Tool {
	tool := mcp.NewToolWithRawSchema(t.name, t.description, json.RawMessage(t.schema))
	tool.Annotations = mcp.ToolAnnotation{
		Title:           t.title,
		ReadOnlyHint:    mcp.ToBoolPtr(t.readOnly),
		DestructiveHint: mcp.ToBoolPtr(t.destructive),
		IdempotentHint:  mcp.ToBoolPtr(t.idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	}
	return tool
}

// handle decodes, calls, encodes. Failures the client can fix are tool errors
// (isError) with a message saying what to do; nothing is stored by a call
// that fails. Arguments a client adds on its own (Gemini CLI's
// wait_for_previous) are dropped and named in the answer (see tolerate).
func (t toolDef) handle(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	w, err := workspaceFrom(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	raw := req.GetRawArguments()
	if s, ok := raw.(string); ok {
		return mcp.NewToolResultError(fmt.Sprintf("arguments must be a JSON object such as {\"agent\":\"@handle\"}, not a string (%.40q); send the object itself, not its JSON text", s)), nil
	}
	args := emptyArgs // the common case of a list: nothing to encode or check
	if m, ok := raw.(map[string]any); !ok || len(m) > 0 {
		if args, err = json.Marshal(raw); err != nil || string(args) == "null" {
			args = emptyArgs
		}
	}
	mask := func(s string) string { return s }
	if r := redactor(w); t.masked && r != nil {
		mask = r.Redact
	}
	args, ignored := t.tolerate(args)
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		ctx = context.WithValue(ctx, progressKey{}, req.Params.Meta.ProgressToken)
	}
	out, err := t.run(ctx, w, args)
	var res *mcp.CallToolResult
	if a, ok := out.(*answer); ok && err == nil && !t.masked {
		// Encoded before, with its wire form (readmodel.go).
		res = &mcp.CallToolResult{Content: []mcp.Content{encodedText{mcp.NewTextContent(a.text), hold(ctx, a.wire)}}}
	} else if err != nil {
		res = mcp.NewToolResultError(mask(t.errorText(err)))
	} else {
		// Compact: the answer is read by programs and models, and every
		// byte of it is escaped again into the JSON-RPC envelope. The
		// encoder writes its output once, so the Builder holds it in one
		// allocation that String does not copy.
		var b strings.Builder
		enc := json.NewEncoder(&b)
		// A masked result keeps & < > as they are, as the agents' tools
		// write them: a value percent-encoded is masked as the agents'
		// tools mask it.
		enc.SetEscapeHTML(!t.masked)
		if err := enc.Encode(out); err != nil {
			return nil, fmt.Errorf("encode %s result: %w", t.name, err)
		}
		res = mcp.NewToolResultText(mask(strings.TrimSuffix(b.String(), "\n")))
	}
	if len(ignored) > 0 {
		res.Content = append(res.Content, mcp.NewTextContent(fmt.Sprintf("Ignored argument(s) %s: not in %s's schema.", strings.Join(ignored, ", "), t.name)))
	}
	return res, nil
}

var emptyArgs = json.RawMessage(`{}`)

// tolerate drops the top-level arguments the tool's schema does not name,
// and returns their names, quoted. A name that looks like a credential, or
// that is a likely typo of a real one, is kept so decode refuses it with
// what to do ("did you mean …").
func (t toolDef) tolerate(args []byte) ([]byte, []string) {
	var in map[string]json.RawMessage
	if string(args) == "{}" || json.Unmarshal(args, &in) != nil || len(in) == 0 {
		return args, nil
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal([]byte(t.schema), &schema)
	known := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		known = append(known, name)
	}
	var ignored []string
	for name := range in {
		if slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, name) }) || slices.Contains(t.refused, name) ||
			looksLikeCredential(name) || jsonarg.Nearest(name, known) != "" {
			continue
		}
		delete(in, name)
		ignored = append(ignored, strconv.Quote(name))
	}
	if len(ignored) == 0 {
		return args, nil
	}
	sort.Strings(ignored)
	out, _ := json.Marshal(in)
	return out, ignored
}

// errorText is what the caller reads of a failed call: the message of a
// failure it can fix, or the tool's name and the error.
func (t toolDef) errorText(err error) string {
	if !errors.Is(err, fault.ErrInvalid) && !errors.Is(err, fault.ErrNotFound) && !errors.Is(err, fault.ErrConflict) {
		return t.name + " failed: " + err.Error()
	}
	return fault.Message(err)
}

// decode reads a tool's arguments strictly (jsonarg.Decode), and says more
// of an unknown argument named like a credential: no tool takes one.
func decode(args json.RawMessage, v any) error {
	err := jsonarg.Decode(args, v)
	if field, ok := jsonarg.UnknownField(err); ok && looksLikeCredential(field) {
		return fault.Invalid("argument %q looks like a credential: no tool accepts one. The person enters keys in the Rerun app (Settings), never through the API", field)
	} else if ok {
		// A client reads "argument", the word of the MCP schema, not "field".
		return fault.Invalid("%s", strings.Replace(err.Error(), "unknown field", "unknown argument", 1))
	}
	return err
}

func looksLikeCredential(field string) bool {
	f := strings.ToLower(field)
	for _, w := range []string{"key", "token", "secret", "password", "credential", "auth"} {
		if strings.Contains(f, w) {
			return true
		}
	}
	return false
}

// Option configures Handler.
type Option func(*handlerConfig)

type handlerConfig struct{ waits Waits }

// WithWaits sets how tool calls that wait behave over HTTP (see Waits).
func WithWaits(l Waits) Option { return func(c *handlerConfig) { c.waits = l } }

// Handler serves the endpoint: it checks the API key (401 without a live
// one), binds the key's workspace to the request, and hands it to mcp-go.
// Host and Origin are checked by the server's guard before.
//
// Transport: Streamable HTTP with real sessions for clients that
// initialize (Mcp-Session-Id, a GET stream for server notifications, DELETE
// to end one), while a POST with no session id is served on its own, so a
// bare curl JSON-RPC POST works without initialize. A GET without a session
// id is 405; a JSON-RPC batch is refused with -32600.
func Handler(home *workspace.Home, version string, log *slog.Logger, opts ...Option) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var cfg handlerConfig
	for _, o := range opts {
		o(&cfg)
	}
	waits := cfg.waits.withDefaults()
	mcpSrv := NewServer(version)
	sess := newSessions()
	var watchMu sync.Mutex
	watched := map[*apikey.Service]bool{}
	watchOnce := func(w *workspace.Workspace, f func(apikey.Key)) {
		watchMu.Lock()
		defer watchMu.Unlock()
		if !watched[w.Keys] {
			watched[w.Keys] = true
			w.Keys.Watch(f)
		}
	}
	streamable := server.NewStreamableHTTPServer(mcpSrv,
		server.WithSessionIdManager(sess),
		server.WithEndpointPath(Path),
		server.WithHeartbeatInterval(30*time.Second),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			if w, err := workspaceFrom(r.Context()); err == nil {
				ctx = WithWorkspace(ctx, w)
			}
			if k, ok := r.Context().Value(keyKey{}).(apikey.Key); ok {
				ctx = context.WithValue(ctx, keyKey{}, k)
			}
			// The address the client reached, unless the server knows its own.
			u := localURL(r.Context())
			if u == "" {
				u = "http://" + r.Host
			}
			ctx = context.WithValue(ctx, waitsKey{}, waits)
			return WithLocalURL(ctx, u)
		}),
	)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		w, k, found := home.Authenticate(r.Context(), strings.TrimSpace(key))
		if !ok || !found {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="rerun"`)
			writeRPCError(rw, http.StatusUnauthorized, -32001,
				"missing or unknown API key: send Authorization: Bearer <key>; create a key in the Rerun app (Settings → API keys) or with `rerun key create`")
			return
		}
		id := r.Header.Get(server.HeaderKeySessionID)
		if id != "" && !sess.owns(id, k.ID) {
			http.Error(rw, "unknown or ended MCP session: initialize again (or send no Mcp-Session-Id)", http.StatusNotFound)
			return
		}
		switch r.Method {
		case http.MethodGet:
			if id == "" {
				rw.Header().Set("Allow", "POST, DELETE")
				http.Error(rw, "GET opens a session's notification stream: initialize first and send its Mcp-Session-Id; without a session, POST JSON-RPC requests", http.StatusMethodNotAllowed)
				return
			}
		case http.MethodPost:
			// mcp-go reads the body before ServeHTTP returns, so its buffer
			// serves the next request.
			buf := bodies.Get().(*bytes.Buffer)
			buf.Reset()
			defer func() {
				if buf.Cap() <= 64<<10 {
					bodies.Put(buf)
				}
			}()
			_, err := buf.ReadFrom(http.MaxBytesReader(rw, r.Body, 8<<20))
			body := buf.Bytes()
			if err != nil {
				writeRPCError(rw, http.StatusRequestEntityTooLarge, -32700, "the request body is too large or could not be read")
				return
			}
			if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
				writeRPCError(rw, http.StatusOK, -32600, "JSON-RPC batches are not supported: send one request per POST")
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		if log.Enabled(r.Context(), slog.LevelDebug) {
			log.Debug("mcp request", "workspace", w.Info().ID, "key", k.Prefix)
		}
		if id == "" && r.Method == http.MethodPost {
			// An initialize answered with a new session id: the session is
			// the key's before the client can read the id and use it.
			rw = bindOnHeader(rw, func() {
				if n := rw.Header().Get(server.HeaderKeySessionID); n != "" {
					sess.bind(n, k.ID, w.Info().ID)
				}
			})
		}
		watchOnce(w, func(k apikey.Key) {
			// The key's tool set changed: its sessions list the tools again.
			for _, id := range sess.ofKey(k.ID) {
				mcpSrv.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationToolsListChanged), nil)
			}
		})
		ctx := context.WithValue(WithWorkspace(r.Context(), w), keyKey{}, k)
		if r.Method == http.MethodPost {
			ctx, rw = withSplicer(ctx, rw) // splice.go
		}
		streamable.ServeHTTP(rw, r.WithContext(ctx))
	})
}

// bodies are the buffers of requests' bodies.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// bindOnHeader returns rw calling bind once, just before the status line is
// written; it flushes only when rw does, so mcp-go streams only where it can.
func bindOnHeader(rw http.ResponseWriter, bind func()) http.ResponseWriter {
	b := &binding{ResponseWriter: rw, bind: bind}
	if f, ok := rw.(http.Flusher); ok {
		return &flushingBinding{b, f}
	}
	return b
}

type binding struct {
	http.ResponseWriter
	bind  func()
	wrote bool
}

func (b *binding) WriteHeader(code int) {
	if !b.wrote {
		b.wrote = true
		b.bind()
	}
	b.ResponseWriter.WriteHeader(code)
}

func (b *binding) Write(p []byte) (int, error) {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	return b.ResponseWriter.Write(p)
}

func (b *binding) Unwrap() http.ResponseWriter { return b.ResponseWriter }

type flushingBinding struct {
	*binding
	f http.Flusher
}

func (b *flushingBinding) Flush() {
	if !b.wrote {
		b.WriteHeader(http.StatusOK)
	}
	b.f.Flush()
}

func writeRPCError(rw http.ResponseWriter, status, code int, msg string) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	json.NewEncoder(rw).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
}
