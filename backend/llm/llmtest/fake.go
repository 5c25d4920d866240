// Package llmtest is the fake model server: one HTTP server on 127.0.0.1
// speaking the real wire formats of Anthropic's Messages API
// (POST /v1/messages, JSON and SSE) and OpenAI's Chat Completions API
// (POST /v1/chat/completions, JSON and SSE), so the real clients in
// backend/llm are tested end to end with no mocks. It also speaks OpenAI's
// Responses API (POST /v1/responses), for outside clients such as Codex CLI.
//
// A test scripts the answers and then checks what the app sent:
//
//	srv := llmtest.New(t)
//	srv.Script(llmtest.Text("Hello there"), llmtest.Error(429, "slow down"))
//	p := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.OpenAIURL()})
//	…
//	got := srv.Requests()[0] // model, system, messages, tools, stream flag
//
// Each request takes the next scripted Reply, whichever API it came in on.
// A reply longer than the request's max_tokens is cut there, as a real
// model cuts it (see Reply.capped); Request.MaxTokens records the cap.
// When the script runs out the server answers 500 "fake: no scripted reply
// left", unless a fallback such as Echo was set.
//
// For end-to-end tests of the app, cmd/fakellm runs the server as a process
// with the Echo behaviour and prints its base URL as its first line; point
// OPENAI_BASE_URL (…/v1) or ANTHROPIC_BASE_URL at it. Serve does the same
// from Go.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Reply is one scripted answer. The zero Reply is an empty text answer.
type Reply struct {
	// Text is the answer's text, streamed in a few chunks (see Chunks).
	Text string
	// Chunks, when set, are the exact text deltas to stream (Text is then
	// ignored).
	Chunks []string
	// ToolCalls are tool calls made in this turn, after the text.
	ToolCalls []ToolCall
	// Usage is reported as the provider would; zero means small made-up
	// numbers.
	Usage Usage
	// StopReason overrides the stop reason in the provider's own words
	// ("max_tokens", "length", …); empty means end of turn or tool use.
	StopReason string

	// Status, when not 0, answers with this HTTP error status and Message
	// in the provider's error format.
	Status     int
	Message    string
	RetryAfter string // Retry-After header sent with the error

	// Malformed answers 200 with a body (or stream event) that is not JSON.
	Malformed bool
	// Cut closes the connection abruptly after CutAfter content chunks
	// (text or tool-argument deltas; for a JSON answer, halfway through).
	Cut      bool
	CutAfter int
	// StreamError fails a streamed answer midway: after CutAfter content
	// chunks the server sends an error event carrying this message, in the
	// API's own shape (OpenAI: data: {"error":{…}}; Anthropic and Responses:
	// event: error), and ends the stream. A JSON answer ignores it.
	StreamError string
	// Delay waits before answering (the request's cancellation ends it).
	Delay time.Duration
}

// ToolCall is a tool call the fake model makes.
type ToolCall struct {
	ID   string // default: made up
	Name string
	// Args is the arguments' JSON text. Empty is sent as {} to Anthropic
	// clients and as "" to OpenAI clients, as some compatible servers do.
	Args string
	// Namespace is sent with a Responses API function call to a tool that
	// was offered inside a namespace.
	Namespace string
}

// Usage is the token counts a reply reports.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
}

// defaultUsage is what a reply reports when its script gives no usage.
func (r Reply) defaultUsage(req Request) Usage {
	if r.Usage != (Usage{}) {
		return r.Usage
	}
	return Usage{Input: 10 + 5*len(req.Messages), Output: 1 + len(r.Text)/4 + 10*len(r.ToolCalls)}
}

// capped is r as a real model answers under the request's max_tokens: an
// answer whose output tokens pass the cap stops at it, reporting exactly
// max_tokens output tokens, its text cut to four bytes a token, its tool
// calls dropped, and the stop reason max_tokens ("length" for OpenAI).
func (r Reply) capped(req Request) Reply {
	if req.MaxTokens <= 0 || r.Status != 0 {
		return r
	}
	u := r.defaultUsage(req)
	if u.Output <= req.MaxTokens {
		return r
	}
	text := r.Text
	if len(r.Chunks) > 0 {
		text = strings.Join(r.Chunks, "")
	}
	if n := 4 * req.MaxTokens; len(text) > n {
		text = strings.ToValidUTF8(text[:n], "")
	}
	u.Output = req.MaxTokens
	r.Text, r.Chunks, r.ToolCalls, r.Usage = text, nil, nil, u
	r.StopReason = "max_tokens"
	if req.API == "openai" {
		r.StopReason = "length"
	}
	return r
}

// Text is a reply streaming text.
func Text(s string) Reply { return Reply{Text: s} }

// Tools is a reply making the given tool calls in one turn.
func Tools(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error is a reply failing with an HTTP status and message.
func Error(status int, msg string) Reply { return Reply{Status: status, Message: msg} }

// Request is a request the server received, parsed from either wire format
// into one shape. System prompts are in System, not in Messages.
type Request struct {
	API          string // "anthropic", "openai" or "responses"
	Path         string
	Header       http.Header
	Model        string
	System       string
	Messages     []Message
	Tools        []Tool
	Stream       bool
	IncludeUsage bool // OpenAI stream_options.include_usage
	MaxTokens    int  // max_tokens, or OpenAI's max_completion_tokens
	Body         json.RawMessage
}

// Message is one message of a received request.
type Message struct {
	Role        string // "user", "assistant", or OpenAI's "tool"
	Text        string // all text parts joined
	Images      []Image
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	Raw         json.RawMessage // the message exactly as sent
}

// ToolResult is a tool result sent back to the model. Only Anthropic's
// format has images in a tool result; OpenAI clients send them in a user
// message (Message.Images).
type ToolResult struct {
	ToolCallID string
	Content    string
	IsError    bool
	Images     []Image
}

// Image is an image sent inline: an Anthropic base64 image block or an
// OpenAI image_url part holding a data: URL. Images by address are refused.
type Image struct {
	MediaType string
	Data      []byte // decoded
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
	// Namespace is the group a Responses API client offered the tool in
	// (Codex puts each MCP server's tools in one, e.g. "mcp__rerun").
	Namespace string
}

// Server is the fake model server.
type Server struct {
	hs   *httptest.Server
	done chan struct{}
	once sync.Once
	t    testing.TB

	mu       sync.Mutex
	script   []Reply
	reqs     []Request
	fallback func(Request) Reply
	seq      int
}

// New starts a fake server on 127.0.0.1 that stops when the test ends.
func New(t testing.TB) *Server {
	s := &Server{done: make(chan struct{}), t: t}
	s.hs = httptest.NewServer(s)
	t.Cleanup(s.Close)
	return s
}

// Serve starts a fake server listening on addr ("127.0.0.1:0" picks a
// port) with the given script; with no script it answers with Echo. The
// caller closes it.
func Serve(addr string, script ...Reply) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Server{done: make(chan struct{}), script: script}
	if len(script) == 0 {
		s.fallback = Echo
	}
	s.hs = httptest.NewUnstartedServer(s)
	s.hs.Listener.Close()
	s.hs.Listener = l
	s.hs.Start()
	return s, nil
}

// URL is the server's root, e.g. http://127.0.0.1:41234.
func (s *Server) URL() string { return s.hs.URL }

// AnthropicURL is the base URL to give the Anthropic SDK.
func (s *Server) AnthropicURL() string { return s.hs.URL }

// OpenAIURL is the base URL to give the OpenAI provider (or any Chat Completions client).
func (s *Server) OpenAIURL() string { return s.hs.URL + "/v1" }

// Close stops the server, ending any delayed answer.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.done)
		s.hs.Close()
	})
}

// Script appends replies to the script.
func (s *Server) Script(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// SetFallback answers with f once the script has run out.
func (s *Server) SetFallback(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining is how many scripted replies have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// ServeHTTP answers one model request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var api string
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		api = "anthropic"
	case r.Method == http.MethodPost && (r.URL.Path == "/v1/chat/completions" || r.URL.Path == "/chat/completions"):
		api = "openai"
	case r.Method == http.MethodPost && (r.URL.Path == "/v1/responses" || r.URL.Path == "/responses"):
		api = "responses"
	default:
		writeError(w, "openai", http.StatusNotFound, "fake: no route for "+r.Method+" "+r.URL.Path, "")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, api, http.StatusBadRequest, "fake: read body: "+err.Error(), "")
		return
	}
	req, err := parseRequest(api, body)
	if err != nil {
		writeError(w, api, http.StatusBadRequest, "fake: "+err.Error(), "")
		return
	}
	req.Path = r.URL.Path
	req.Header = r.Header.Clone()

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	var (
		reply Reply
		ok    bool
	)
	if len(s.script) > 0 {
		reply, s.script, ok = s.script[0], s.script[1:], true
	}
	fallback := s.fallback
	s.seq++
	seq := s.seq
	s.mu.Unlock()
	if !ok && fallback != nil {
		reply, ok = fallback(req), true
	}
	reply = reply.capped(req)
	if !ok {
		if s.t != nil {
			s.t.Logf("llmtest: request %d to %s has no scripted reply left", seq, r.URL.Path)
		}
		writeError(w, api, http.StatusInternalServerError, "fake: no scripted reply left", "")
		return
	}

	if reply.Delay > 0 {
		t := time.NewTimer(reply.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.done:
			t.Stop()
			return
		}
	}
	a := &answer{w: w, reply: reply, req: req, seq: seq}
	switch {
	case reply.Status != 0:
		writeError(w, api, reply.Status, reply.Message, reply.RetryAfter)
	case api == "anthropic" && req.Stream:
		a.anthropicStream()
	case api == "anthropic":
		a.json(a.anthropicMessage())
	case api == "responses" && req.Stream:
		a.responsesStream()
	case api == "responses":
		a.json(a.responsesObject("completed", a.responsesItems()))
	case req.Stream:
		a.openAIStream()
	default:
		a.json(a.openAICompletion())
	}
}

// answer writes one successful (or cut, or malformed) reply.
type answer struct {
	w     http.ResponseWriter
	reply Reply
	req   Request
	seq   int
	sent  int  // content chunks written
	cut   bool // the answer was ended early: connection closed or error event sent
}

func (a *answer) json(v any) {
	if a.reply.Malformed {
		a.w.Header().Set("Content-Type", "application/json")
		io.WriteString(a.w, `{"id": "broken", "content": [ {"type": "text", "te`)
		return
	}
	b, _ := json.Marshal(v)
	a.w.Header().Set("Content-Type", "application/json")
	if a.reply.Cut {
		a.w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		a.w.WriteHeader(http.StatusOK)
		a.w.Write(b[:len(b)/2])
		a.closeConn()
		return
	}
	a.w.Write(b)
}

// closeConn drops the connection mid-answer, as a crashed proxy would.
func (a *answer) closeConn() {
	if f, ok := a.w.(http.Flusher); ok {
		f.Flush()
	}
	if h, ok := a.w.(http.Hijacker); ok {
		if conn, _, err := h.Hijack(); err == nil {
			conn.Close()
		}
	}
	a.cut = true
}

// beforeContent reports whether a content chunk may be written, cutting the
// connection when the script says so.
func (a *answer) beforeContent() bool {
	if a.cut {
		return false
	}
	if a.reply.StreamError != "" && a.sent >= a.reply.CutAfter {
		a.streamError()
		return false
	}
	if a.reply.Cut && a.sent >= a.reply.CutAfter {
		a.closeConn()
		return false
	}
	a.sent++
	return true
}

// beforeEnd is beforeContent for the closing events: a cut scheduled after
// more chunks than there were still happens before the stream completes.
func (a *answer) beforeEnd() bool {
	if a.cut {
		return false
	}
	if a.reply.StreamError != "" {
		a.streamError()
		return false
	}
	if a.reply.Cut {
		a.closeConn()
		return false
	}
	return true
}

// streamError sends the error event of Reply.StreamError and ends the
// answer, as a server failing after it had started to answer does.
func (a *answer) streamError() {
	msg := a.reply.StreamError
	switch a.req.API {
	case "anthropic":
		a.event("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": msg}})
	case "responses":
		a.event("error", map[string]any{"type": "error", "code": "server_error", "message": msg, "param": nil})
	default:
		a.event("", map[string]any{"error": map[string]any{"message": msg, "type": "server_error", "param": nil, "code": nil}})
	}
	a.cut = true
}

func (a *answer) startSSE() {
	h := a.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	a.w.WriteHeader(http.StatusOK)
}

func (a *answer) event(name string, v any) {
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		b, _ = json.Marshal(v)
	}
	if name != "" {
		fmt.Fprintf(a.w, "event: %s\n", name)
	}
	fmt.Fprintf(a.w, "data: %s\n\n", b)
	if f, ok := a.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (a *answer) chunks() []string {
	if len(a.reply.Chunks) > 0 {
		return a.reply.Chunks
	}
	return Split(a.reply.Text, 4)
}

func (a *answer) usage() Usage { return a.reply.defaultUsage(a.req) }

func (a *answer) callID(i int) string {
	if id := a.reply.ToolCalls[i].ID; id != "" {
		return id
	}
	if a.req.API == "anthropic" {
		return fmt.Sprintf("toolu_fake_%d_%d", a.seq, i)
	}
	return fmt.Sprintf("call_fake_%d_%d", a.seq, i)
}

// args is c's input as Anthropic sends it: always a JSON object.
func args(c ToolCall) string {
	if strings.TrimSpace(c.Args) == "" {
		return "{}"
	}
	return c.Args
}

// Split cuts s into at most n pieces at word boundaries, as a model streams
// text; joined, the pieces are s.
func Split(s string, n int) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	if n <= 0 || len(words) <= n {
		return words
	}
	per := (len(words) + n - 1) / n
	var out []string
	for i := 0; i < len(words); i += per {
		out = append(out, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return out
}

// ---- Anthropic ----

// splitN cuts s into at most n pieces of about equal length.
func splitN(s string, n int) []string {
	if len(s) <= n {
		return []string{s}
	}
	per := (len(s) + n - 1) / n
	var out []string
	for i := 0; i < len(s); i += per {
		out = append(out, s[i:min(i+per, len(s))])
	}
	return out
}

// ---- OpenAI ----

func writeError(w http.ResponseWriter, api string, status int, msg, retryAfter string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var body any
	if api == "anthropic" {
		body = map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(status), "message": msg}}
	} else {
		body = map[string]any{"error": map[string]any{"message": msg, "type": openAIErrorType(status), "param": nil, "code": nil}}
	}
	json.NewEncoder(w).Encode(body)
}

func parseRequest(api string, body []byte) (Request, error) {
	req := Request{API: api, Body: append(json.RawMessage(nil), body...)}
	switch api {
	case "anthropic":
		return req, parseAnthropic(&req, body)
	case "responses":
		return req, parseResponses(&req, body)
	}
	return req, parseOpenAI(&req, body)
}

// textOf reads a content value that is a string or a list of blocks with
// text, as both APIs allow.
func textOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		b.WriteString(bl.Text)
	}
	return b.String()
}

// Echo is the scripted-free behaviour of cmd/fakellm: if the last user text
// is "use tool NAME {json}" it calls that tool; if the last message carries
// a tool result it answers "Tool said: " and the first 200 characters of the
// output; otherwise it streams back "You said: " and the text.
func Echo(req Request) Reply {
	if len(req.Messages) == 0 {
		return Text("You said nothing.")
	}
	last := req.Messages[len(req.Messages)-1]
	if n := len(req.Messages); n > 1 && len(last.Images) > 0 && req.Messages[n-2].Role == "tool" {
		// An OpenAI client sends the images of tool results after them.
		last = req.Messages[n-2]
	}
	if n := len(last.ToolResults); n > 0 {
		out := []rune(last.ToolResults[n-1].Content)
		return Text("Tool said: " + string(out[:min(len(out), 200)]))
	}
	text := strings.TrimSpace(last.Text)
	if rest, ok := strings.CutPrefix(text, "use tool "); ok {
		name, argText, _ := strings.Cut(strings.TrimSpace(rest), " ")
		argText = strings.TrimSpace(argText)
		if argText == "" || !json.Valid([]byte(argText)) {
			argText = "{}"
		}
		return Tools(ToolCall{Name: name, Args: argText})
	}
	return Text("You said: " + text)
}
