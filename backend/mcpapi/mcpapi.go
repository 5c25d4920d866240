// Package mcpapi is the workspace's programmatic surface: one MCP endpoint,
// POST /api/mcp/account, speaking Streamable HTTP (stateless, so a bare
// JSON-RPC POST with curl works, and full sessions for SDK clients). Each
// tool is a thin layer over the same services the UI uses.
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
	"log/slog"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// Path is where the endpoint is mounted.
const Path = "/api/mcp/account"

type ctxKey struct{}

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
	s := server.NewMCPServer("rerun", version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(instructions),
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
	run    func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error)
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
// that fails.
func (t toolDef) handle(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	w, err := workspaceFrom(ctx)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	args, err := json.Marshal(req.GetRawArguments())
	if err != nil || string(args) == "null" {
		args = []byte(`{}`)
	}
	mask := func(s string) string { return s }
	if r := redactor(w); t.masked && r != nil {
		mask = r.Redact
	}
	out, err := t.run(ctx, w, args)
	if err != nil {
		return mcp.NewToolResultError(mask(t.errorText(err))), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	// A masked result keeps & < > as they are, as the agents' tools write
	// them: a value percent-encoded is masked as the agents' tools mask it.
	enc.SetEscapeHTML(!t.masked)
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("encode %s result: %w", t.name, err)
	}
	return mcp.NewToolResultText(mask(strings.TrimSuffix(b.String(), "\n"))), nil
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

// Handler serves the endpoint: it checks the API key (401 without a live
// one), binds the key's workspace to the request, and hands it to mcp-go in
// stateless mode. Host and Origin are checked by the server's guard before.
func Handler(home *workspace.Home, version string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mcpSrv := NewServer(version)
	streamable := server.NewStreamableHTTPServer(mcpSrv,
		server.WithStateLess(true),
		server.WithEndpointPath(Path),
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			if w, err := workspaceFrom(r.Context()); err == nil {
				ctx = WithWorkspace(ctx, w)
			}
			// The address the client reached, unless the server knows its own.
			u := localURL(r.Context())
			if u == "" {
				u = "http://" + r.Host
			}
			return WithLocalURL(ctx, u)
		}),
	)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		w, k, found := home.Authenticate(r.Context(), strings.TrimSpace(key))
		if !ok || !found {
			rw.Header().Set("WWW-Authenticate", `Bearer realm="rerun"`)
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(rw).Encode(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
				"code":    -32001,
				"message": "missing or unknown API key: send Authorization: Bearer <key>; create a key in the Rerun app (Settings → API keys) or with `rerun key create`",
			}})
			return
		}
		log.Debug("mcp request", "workspace", w.Info().ID, "key", k.Prefix)
		streamable.ServeHTTP(rw, r.WithContext(WithWorkspace(r.Context(), w)))
	})
}
