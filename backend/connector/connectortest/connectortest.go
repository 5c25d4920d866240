// Package connectortest is the fake of the apps seam: a real MCP server
// (mark3labs/mcp-go) with one echo tool, served over Streamable HTTP by
// httptest — optionally behind the MCP authorization flow (OAuth 2.1 with
// PKCE and dynamic client registration) — or over stdio by a test binary
// that runs itself as the server (ServeStdioIfAsked).
//
// The echo tool answers with its message and the Authorization header it
// was called with, so a test sees both that a ${VAR} header was resolved
// and that the value is masked before it reaches a model.
package connectortest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// EchoDescription is the echo tool's description until SetEchoDescription
// changes it.
const EchoDescription = "Echoes a message back."

// Token is the access token the OAuth flow of NewOAuth issues.
const Token = "connectortest-access-token"

// Server is an MCP server at URL + "/mcp".
type Server struct {
	*httptest.Server
	mcp *server.MCPServer

	mu         sync.Mutex
	authHeader string   // the Authorization header of the last MCP request
	challenge  string   // OAuth: the PKCE challenge of the last authorization URL
	redirects  []string // OAuth: the redirect URIs the last client registered
	calls      int
}

// New serves the MCP server over Streamable HTTP until the test ends.
func New(t testing.TB) *Server {
	s := &Server{mcp: newMCP()}
	s.addEcho(EchoDescription)
	mux := http.NewServeMux()
	mux.Handle("/mcp", s.recording(server.NewStreamableHTTPServer(s.mcp)))
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// NewOAuth is New behind the MCP authorization flow: /mcp answers 401 with
// resource metadata until the request carries Token, which the token
// endpoint issues for code "the-code" with the right PKCE verifier (see
// Authorize).
func NewOAuth(t testing.TB) *Server {
	s := &Server{mcp: newMCP()}
	s.addEcho(EchoDescription)
	mcpHandler := s.recording(server.NewStreamableHTTPServer(s.mcp))
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+Token {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "sign in", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	})
	resource := func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"resource": s.URL + "/mcp", "authorization_servers": []string{s.URL}})
	}
	mux.HandleFunc("/.well-known/oauth-protected-resource", resource)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", resource)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{
			"issuer": s.URL, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
			"registration_endpoint": s.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported":            []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			RedirectURIs []string `json:"redirect_uris"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		s.mu.Lock()
		s.redirects = req.RedirectURIs
		s.mu.Unlock()
		writeJSON(w, 201, map[string]any{"client_id": "client-1", "token_endpoint_auth_method": "none", "redirect_uris": req.RedirectURIs})
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		s.mu.Lock()
		challenge := s.challenge
		s.mu.Unlock()
		sum := sha256.Sum256([]byte(r.Form.Get("code_verifier")))
		switch {
		case r.Form.Get("grant_type") != "authorization_code" || r.Form.Get("code") != "the-code":
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
		case base64.RawURLEncoding.EncodeToString(sum[:]) != challenge:
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "PKCE verifier does not match"})
		default:
			writeJSON(w, 200, map[string]any{"access_token": Token, "token_type": "Bearer", "expires_in": 3600})
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Authorize plays the person signing in at the authorization URL the app
// opened: it returns where the provider sends the browser back (the
// redirect URI with code and state).
func (s *Server) Authorize(authURL string) (string, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	s.mu.Lock()
	s.challenge = q.Get("code_challenge")
	s.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		return "", err
	}
	back.RawQuery = url.Values{"code": {"the-code"}, "state": {q.Get("state")}}.Encode()
	return back.String(), nil
}

// SetEchoDescription changes the echo tool's definition, as a server that
// turned malicious would; sessions are told their tool list changed.
func (s *Server) SetEchoDescription(description string) { s.addEcho(description) }

// AuthHeader is the Authorization header of the last MCP request.
func (s *Server) AuthHeader() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.authHeader
}

// Redirects are the redirect URIs the last OAuth client registered with.
func (s *Server) Redirects() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.redirects
}

// Calls counts the echo tool's calls.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

func (s *Server) recording(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.authHeader = r.Header.Get("Authorization")
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

func (s *Server) addEcho(description string) {
	s.mcp.AddTool(echoTool(description), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		s.calls++
		auth := s.authHeader
		s.mu.Unlock()
		return echo(req, auth)
	})
}

func newMCP() *server.MCPServer {
	return server.NewMCPServer("connectortest", "1", server.WithToolCapabilities(true))
}

func echoTool(description string) mcp.Tool {
	return mcp.NewTool("echo", mcp.WithDescription(description),
		mcp.WithString("message", mcp.Required(), mcp.Description("What to echo.")))
}

// echo answers "echo: <message>", with " (Authorization: <auth>)" when the
// call carried one.
func echo(req mcp.CallToolRequest, auth string) (*mcp.CallToolResult, error) {
	msg, err := req.RequireString("message")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	out := "echo: " + msg
	if auth != "" {
		out += " (Authorization: " + auth + ")"
	}
	return mcp.NewToolResultText(out), nil
}

// StdioEnv is the environment variable that makes ServeStdioIfAsked serve.
const StdioEnv = "CONNECTORTEST_STDIO"

// CallLogEnv names a file the stdio server appends a line "<tool> <pid>"
// to as each call arrives, before it answers.
const CallLogEnv = "CONNECTORTEST_CALL_LOG"

// ServeStdioIfAsked serves the echo tool on stdin/stdout and exits when the
// process was started with StdioEnv=1: a test binary calls it first thing
// in TestMain, and registers itself (os.Executable) as a stdio server with
// that variable in its env. The echo answer carries the value of
// CONNECTORTEST_AUTH from the environment in place of a header. A second
// tool, crash, makes the server exit without answering: a server that dies
// in the middle of a call. A third, read, returns a file's content (or the
// error reading it): what a server's sandbox lets it reach. A fourth, mark,
// is a side effect to count: it appends "mark <message>" to the call log,
// then waits the seconds it was given before it answers, so that a crash
// can find it in the middle.
func ServeStdioIfAsked() {
	if os.Getenv(StdioEnv) != "1" {
		return
	}
	s := newMCP()
	s.AddTool(echoTool(EchoDescription), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		logCall("echo")
		return echo(req, os.Getenv("CONNECTORTEST_AUTH"))
	})
	s.AddTool(mcp.NewTool("read", mcp.WithDescription("Returns the content of the file at path."), mcp.WithString("path", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			logCall("read")
			b, err := os.ReadFile(req.GetString("path", ""))
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			return mcp.NewToolResultText(string(b)), nil
		})
	s.AddTool(mcp.NewTool("mark", mcp.WithDescription("Appends message to the call log, then waits seconds before it answers."),
		mcp.WithString("message", mcp.Required()), mcp.WithNumber("seconds")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			msg, err := req.RequireString("message")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			logCall("mark " + msg)
			select {
			case <-time.After(time.Duration(req.GetFloat("seconds", 0) * float64(time.Second))):
			case <-ctx.Done():
			}
			return mcp.NewToolResultText("marked " + msg), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits the server before it answers.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			logCall("crash")
			os.Exit(3)
			return nil, nil
		})
	if err := server.ServeStdio(s); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func logCall(tool string) {
	path := os.Getenv(CallLogEnv)
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	f.WriteString(tool + " " + strconv.Itoa(os.Getpid()) + "\n")
}

// CallLog is what the stdio servers wrote to the call log at path: one
// "<tool> <pid>" line per call that reached them.
func CallLog(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Processes lists the live processes whose environment holds name=value
// (Linux: it reads /proc; elsewhere the test is skipped). Mark a stdio
// server's env with a random value to find it, and what it spawned.
func Processes(t testing.TB, name, value string) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the process checks read /proc: Linux only")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	want := []byte(name + "=" + value + "\x00")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, want) {
			continue
		}
		// A zombie has left its environment behind but is no process.
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// Kill kills the processes (SIGKILL) and waits until each has exited
// with all its threads, so its pipes are closed. Processes alone cannot
// tell: an exiting process loses its environment before its files, and a
// leader thread turns zombie while the others still hold them.
func Kill(t testing.TB, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
	waittest.Until(t, fmt.Sprintf("processes %v exit", pids), func() bool {
		for _, pid := range pids {
			if !exited(pid) {
				return false
			}
		}
		return true
	})
}

func exited(pid int) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return true
	}
	if !strings.Contains(string(stat), ") Z ") && !strings.Contains(string(stat), ") X ") {
		return false
	}
	threads, err := os.ReadDir(filepath.Join(dir, "task"))
	return err != nil || len(threads) <= 1
}

// WaitNoProcesses waits until no process marked name=value runs, and
// fails the test when some still do after waittest.Patience.
func WaitNoProcesses(t testing.TB, name, value string) {
	t.Helper()
	waittest.Until(t, "the server's processes end", func() bool {
		return len(Processes(t, name, value)) == 0
	})
}
