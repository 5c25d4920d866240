// Package llmtest is the fake model server: one HTTP server on 127.0.0.1
// speaking the real wire formats of Anthropic's Messages API
// (POST /v1/messages, JSON and SSE) and OpenAI's Chat Completions API
// (POST /v1/chat/completions, JSON and SSE), so the real SDK clients in
// backend/llm are tested end to end with no mocks.
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
}

// Usage is the token counts a reply reports.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int
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
	API          string // "anthropic" or "openai"
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
	ToolCalls   []ToolCall
	ToolResults []ToolResult
	Raw         json.RawMessage // the message exactly as sent
}

// ToolResult is a tool result sent back to the model.
type ToolResult struct {
	ToolCallID string
	Content    string
	IsError    bool
}

// Tool is a tool offered to the model.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage
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

// OpenAIURL is the base URL to give the OpenAI SDK.
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
	cut   bool // the connection was closed
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
	if a.reply.Cut {
		a.closeConn()
		return false
	}
	return true
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

func (a *answer) usage() Usage {
	u := a.reply.Usage
	if u == (Usage{}) {
		u = Usage{Input: 10 + 5*len(a.req.Messages), Output: 1 + len(a.reply.Text)/4 + 10*len(a.reply.ToolCalls)}
	}
	return u
}

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

func (a *answer) anthropicStop() string {
	switch {
	case a.reply.StopReason != "":
		return a.reply.StopReason
	case len(a.reply.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

func (a *answer) anthropicMessage() map[string]any {
	content := []any{}
	if text := strings.Join(a.chunks(), ""); text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for i, c := range a.reply.ToolCalls {
		content = append(content, map[string]any{"type": "tool_use", "id": a.callID(i), "name": c.Name, "input": json.RawMessage(args(c))})
	}
	u := a.usage()
	return map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", a.seq), "type": "message", "role": "assistant",
		"model": a.req.Model, "content": content,
		"stop_reason": a.anthropicStop(), "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": u.Input, "output_tokens": u.Output,
			"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite,
		},
	}
}

func (a *answer) anthropicStream() {
	a.startSSE()
	u := a.usage()
	a.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", a.seq), "type": "message", "role": "assistant",
		"model": a.req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": u.Input, "output_tokens": 1,
			"cache_read_input_tokens": u.CacheRead, "cache_creation_input_tokens": u.CacheWrite,
		},
	}})
	a.event("ping", map[string]any{"type": "ping"})
	if a.reply.Malformed {
		a.event("content_block_start", `{"type": "content_block_start", "index": 0, "content_bl`)
		return
	}
	index := 0
	if chunks := a.chunks(); len(chunks) > 0 {
		a.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}})
		for _, c := range chunks {
			if !a.beforeContent() {
				return
			}
			a.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": c}})
		}
		a.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	for i, c := range a.reply.ToolCalls {
		a.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": a.callID(i), "name": c.Name, "input": map[string]any{}}})
		for _, piece := range splitN(args(c), 3) {
			if !a.beforeContent() {
				return
			}
			a.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
		}
		a.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index})
		index++
	}
	if !a.beforeEnd() {
		return
	}
	a.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": a.anthropicStop(), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": u.Output}})
	a.event("message_stop", map[string]any{"type": "message_stop"})
}

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

func (a *answer) openAIFinish() string {
	switch {
	case a.reply.StopReason != "":
		return a.reply.StopReason
	case len(a.reply.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (a *answer) openAIUsage() map[string]any {
	u := a.usage()
	prompt := u.Input + u.CacheRead + u.CacheWrite
	return map[string]any{
		"prompt_tokens": prompt, "completion_tokens": u.Output, "total_tokens": prompt + u.Output,
		"prompt_tokens_details":     map[string]any{"cached_tokens": u.CacheRead, "cache_write_tokens": u.CacheWrite},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0},
	}
}

func (a *answer) openAICompletion() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
	if text := strings.Join(a.chunks(), ""); text != "" {
		msg["content"] = text
	}
	if len(a.reply.ToolCalls) > 0 {
		var calls []any
		for i, c := range a.reply.ToolCalls {
			calls = append(calls, map[string]any{"id": a.callID(i), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Args}})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": fmt.Sprintf("chatcmpl-fake-%d", a.seq), "object": "chat.completion",
		"created": time.Now().Unix(), "model": a.req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": a.openAIFinish(), "logprobs": nil}},
		"usage":   a.openAIUsage(),
	}
}

func (a *answer) openAIStream() {
	a.startSSE()
	created := time.Now().Unix()
	chunk := func(choices []any, usage any) map[string]any {
		c := map[string]any{"id": fmt.Sprintf("chatcmpl-fake-%d", a.seq), "object": "chat.completion.chunk",
			"created": created, "model": a.req.Model, "choices": choices}
		if usage != nil {
			c["usage"] = usage
		}
		return c
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish, "logprobs": nil}}
	}
	a.event("", chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil))
	if a.reply.Malformed {
		a.event("", `{"id": "chatcmpl-broken", "choices": [{"index": 0, "delta": {"content": "x`)
		return
	}
	for _, c := range a.chunks() {
		if !a.beforeContent() {
			return
		}
		a.event("", chunk(delta(map[string]any{"content": c}, nil), nil))
	}
	for i, c := range a.reply.ToolCalls {
		if !a.beforeContent() {
			return
		}
		a.event("", chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": a.callID(i), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil), nil))
		if c.Args == "" {
			continue
		}
		for _, piece := range splitN(c.Args, 3) {
			if !a.beforeContent() {
				return
			}
			a.event("", chunk(delta(map[string]any{"tool_calls": []any{map[string]any{"index": i,
				"function": map[string]any{"arguments": piece}}}}, nil), nil))
		}
	}
	if !a.beforeEnd() {
		return
	}
	a.event("", chunk(delta(map[string]any{}, a.openAIFinish()), nil))
	if a.req.IncludeUsage {
		a.event("", chunk([]any{}, a.openAIUsage()))
	}
	a.event("", "[DONE]")
}

// ---- errors ----

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

func anthropicErrorType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 504:
		return "timeout_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

func openAIErrorType(status int) string {
	switch {
	case status == 429:
		return "rate_limit_exceeded"
	case status == 401:
		return "authentication_error"
	case status < 500:
		return "invalid_request_error"
	}
	return "server_error"
}

// ---- request parsing ----

func parseRequest(api string, body []byte) (Request, error) {
	req := Request{API: api, Body: append(json.RawMessage(nil), body...)}
	if api == "anthropic" {
		return req, parseAnthropic(&req, body)
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

func parseAnthropic(req *Request, body []byte) error {
	var in struct {
		Model     string          `json:"model"`
		System    json.RawMessage `json:"system"`
		MaxTokens int             `json:"max_tokens"`
		Stream    bool            `json:"stream"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("request is not a Messages API request: %w", err)
	}
	req.Model, req.MaxTokens, req.Stream = in.Model, in.MaxTokens, in.Stream
	req.System = textOf(in.System)
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	for i, m := range in.Messages {
		raw, _ := json.Marshal(m)
		msg := Message{Role: m.Role, Raw: raw}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return fmt.Errorf("messages[%d].content is neither a string nor a list of blocks", i)
			}
			msg.Text = s
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "tool_result":
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolCallID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

func parseOpenAI(req *Request, body []byte) error {
	var in struct {
		Model               string `json:"model"`
		MaxTokens           int    `json:"max_tokens"`
		MaxCompletionTokens int    `json:"max_completion_tokens"`
		Stream              bool   `json:"stream"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []json.RawMessage `json:"messages"`
		Tools    []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("request is not a Chat Completions request: %w", err)
	}
	req.Model, req.Stream, req.IncludeUsage = in.Model, in.Stream, in.StreamOptions.IncludeUsage
	req.MaxTokens = max(in.MaxTokens, in.MaxCompletionTokens)
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, Tool{Name: t.Function.Name, Description: t.Function.Description, Schema: t.Function.Parameters})
	}
	var system []string
	for i, raw := range in.Messages {
		var m struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("messages[%d]: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, textOf(m.Content))
			continue
		}
		msg := Message{Role: m.Role, Raw: raw}
		if m.Role == "tool" {
			msg.ToolResults = []ToolResult{{ToolCallID: m.ToolCallID, Content: textOf(m.Content)}}
		} else {
			msg.Text = textOf(m.Content)
		}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	return nil
}

// ---- echo ----

// Echo is the scripted-free behaviour of cmd/fakellm: if the last user text
// is "use tool NAME {json}" it calls that tool; if the last message carries
// a tool result it answers "Tool said: " and the first 200 characters of the
// output; otherwise it streams back "You said: " and the text.
func Echo(req Request) Reply {
	if len(req.Messages) == 0 {
		return Text("You said nothing.")
	}
	last := req.Messages[len(req.Messages)-1]
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
