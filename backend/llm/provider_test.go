package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// providers are the two wire formats under test, each on its real client
// (the Anthropic SDK, the hand-written OpenAI one) against the fake server.
var providers = []struct {
	name string
	new  func(srv *llmtest.Server) llm.Provider
}{
	{"anthropic", func(srv *llmtest.Server) llm.Provider {
		return llm.NewAnthropic(llm.AnthropicConfig{APIKey: "test-key", BaseURL: srv.AnthropicURL()})
	}},
	{"openai", func(srv *llmtest.Server) llm.Provider {
		return llm.NewOpenAI(llm.OpenAIConfig{APIKey: "test-key", BaseURL: srv.OpenAIURL()})
	}},
}

// streaming runs a test once without and once with onDelta.
var streaming = []struct {
	name   string
	stream bool
}{{"json", false}, {"stream", true}}

// noWait is a Retry.Sleep that records the waits instead of waiting.
type noWait struct{ waits []time.Duration }

func (n *noWait) sleep(ctx context.Context, d time.Duration) error {
	n.waits = append(n.waits, d)
	return ctx.Err()
}

func chat(t *testing.T, p llm.Provider, req llm.Request, stream bool) (llm.Response, []string, error) {
	t.Helper()
	var deltas []string
	var on func(llm.Delta)
	if stream {
		on = func(d llm.Delta) { deltas = append(deltas, d.Text) }
	}
	resp, err := p.Chat(context.Background(), req, on)
	return resp, deltas, err
}

func userText(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: s}}}
}

var weatherTool = llm.ToolSpec{
	Name:        "weather",
	Description: "Current weather for a city",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`),
}

func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("got invalid JSON %q: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %q: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

func asError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var e *llm.Error
	if !errors.As(err, &e) {
		t.Fatalf("got error %v (%T), want *llm.Error", err, err)
	}
	return e
}

func TestChatText(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Text("Hello from the fake model."))
				req := llm.Request{Model: "test-model", System: "Be brief.", MaxTokens: 300, Messages: []llm.Message{userText("Hi")}}
				resp, _, err := chat(t, pc.new(srv), req, sc.stream)
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if got, want := resp.Text(), "Hello from the fake model."; got != want {
					t.Errorf("text: got %q, want %q", got, want)
				}
				if resp.StopReason != llm.StopEnd {
					t.Errorf("stop reason: got %q, want %q", resp.StopReason, llm.StopEnd)
				}
				if resp.Model != "test-model" {
					t.Errorf("model: got %q, want test-model", resp.Model)
				}
				reqs := srv.Requests()
				if len(reqs) != 1 {
					t.Fatalf("requests: got %d, want 1", len(reqs))
				}
				got := reqs[0]
				if got.API != pc.name || got.Model != "test-model" || got.System != "Be brief." || got.Stream != sc.stream || got.MaxTokens != 300 {
					t.Errorf("request: got api=%s model=%q system=%q stream=%v max=%d", got.API, got.Model, got.System, got.Stream, got.MaxTokens)
				}
				if len(got.Messages) != 1 || got.Messages[0].Role != "user" || got.Messages[0].Text != "Hi" {
					t.Errorf("messages: got %+v, want one user message Hi", got.Messages)
				}
			})
		}
	}
}

func TestChatStreamDeltas(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			chunks := []string{"The ", "quick brown ", "fox", " jumps."}
			srv.Script(llmtest.Reply{Chunks: chunks})
			resp, deltas, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("go")}}, true)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if !reflect.DeepEqual(deltas, chunks) {
				t.Errorf("deltas: got %q, want %q", deltas, chunks)
			}
			if got, want := resp.Text(), strings.Join(chunks, ""); got != want {
				t.Errorf("final text: got %q, want %q", got, want)
			}
			if pc.name == "openai" && !srv.Requests()[0].IncludeUsage {
				t.Errorf("stream_options.include_usage: got false, want true")
			}
		})
	}
}

func TestChatToolCall(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Tools(llmtest.ToolCall{ID: "call_1", Name: "weather", Args: `{"city":"Oslo"}`}))
				req := llm.Request{Model: "m", Messages: []llm.Message{userText("Weather in Oslo?")}, Tools: []llm.ToolSpec{weatherTool}}
				resp, deltas, err := chat(t, pc.new(srv), req, sc.stream)
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if len(deltas) != 0 {
					t.Errorf("deltas: got %q, want none for a tool call", deltas)
				}
				calls := resp.ToolCalls()
				if len(calls) != 1 {
					t.Fatalf("tool calls: got %d, want 1 (%+v)", len(calls), resp.Parts)
				}
				c := calls[0]
				if c.ToolCallID != "call_1" || c.ToolName != "weather" || !jsonEqual(t, string(c.Input), `{"city":"Oslo"}`) {
					t.Errorf("tool call: got id=%q name=%q input=%s", c.ToolCallID, c.ToolName, c.Input)
				}
				if resp.StopReason != llm.StopToolUse {
					t.Errorf("stop reason: got %q, want %q", resp.StopReason, llm.StopToolUse)
				}
				tools := srv.Requests()[0].Tools
				if len(tools) != 1 || tools[0].Name != "weather" || tools[0].Description != weatherTool.Description {
					t.Fatalf("tools sent: got %+v", tools)
				}
				if !jsonEqual(t, string(tools[0].Schema), string(weatherTool.InputSchema)) {
					t.Errorf("tool schema sent: got %s, want %s", tools[0].Schema, weatherTool.InputSchema)
				}
			})
		}
	}
}

func TestChatParallelToolCalls(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Reply{
					Text: "Checking both.",
					ToolCalls: []llmtest.ToolCall{
						{ID: "a", Name: "weather", Args: `{"city":"Oslo"}`},
						{ID: "b", Name: "weather", Args: `{"city":"Lima","units":{"temp":"C"}}`},
					},
				})
				req := llm.Request{Model: "m", Messages: []llm.Message{userText("Oslo and Lima?")}, Tools: []llm.ToolSpec{weatherTool}}
				resp, _, err := chat(t, pc.new(srv), req, sc.stream)
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if len(resp.Parts) != 3 || resp.Parts[0].Type != llm.PartText || resp.Parts[0].Text != "Checking both." {
					t.Fatalf("parts: got %+v, want text then two tool calls", resp.Parts)
				}
				calls := resp.ToolCalls()
				want := []struct{ id, args string }{{"a", `{"city":"Oslo"}`}, {"b", `{"city":"Lima","units":{"temp":"C"}}`}}
				for i, w := range want {
					if calls[i].ToolCallID != w.id || !jsonEqual(t, string(calls[i].Input), w.args) {
						t.Errorf("call %d: got id=%q input=%s, want id=%q input=%s", i, calls[i].ToolCallID, calls[i].Input, w.id, w.args)
					}
				}
			})
		}
	}
}

func TestOpenAIEmptyToolArguments(t *testing.T) {
	for _, sc := range streaming {
		t.Run(sc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Tools(llmtest.ToolCall{ID: "c", Name: "now", Args: ""}))
			p := llm.NewOpenAI(llm.OpenAIConfig{Name: "ollama", BaseURL: srv.OpenAIURL()})
			resp, _, err := chat(t, p, llm.Request{Model: "qwen3", Messages: []llm.Message{userText("time?")}}, sc.stream)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			calls := resp.ToolCalls()
			if len(calls) != 1 || string(calls[0].Input) != "{}" {
				t.Fatalf("tool call input: got %+v, want {}", calls)
			}
			if p.Name() != "ollama" {
				t.Errorf("Name: got %q, want ollama", p.Name())
			}
		})
	}
}

// weatherTurn is a conversation ending in the results of two tool calls of
// one turn, the second failed.
var weatherTurn = []llm.Message{
	userText("Weather in Oslo and Lima?"),
	{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartText, Text: "Let me look."},
		{Type: llm.PartToolUse, ToolCallID: "call_a", ToolName: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)},
		{Type: llm.PartToolUse, ToolCallID: "call_b", ToolName: "weather", Input: json.RawMessage(`{"city":"Lima"}`)},
	}},
	{Role: llm.RoleUser, Parts: []llm.Part{
		{Type: llm.PartToolResult, ToolCallID: "call_a", Output: "4°C, rain"},
		{Type: llm.PartToolResult, ToolCallID: "call_b", Output: "city not found", IsError: true},
	}},
}

// TestToolResultRoundTrip sends a conversation with two tool calls and
// their results and checks each wire format got them in its own shape.
func TestToolResultRoundTrip(t *testing.T) {
	conv := weatherTurn
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("Oslo is rainy."))
			_, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: conv, Tools: []llm.ToolSpec{weatherTool}}, false)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			msgs := srv.Requests()[0].Messages
			var raws []string
			for _, m := range msgs {
				raws = append(raws, string(m.Raw))
			}
			switch pc.name {
			case "anthropic":
				if len(msgs) != 3 {
					t.Fatalf("messages: got %d, want 3: %s", len(msgs), raws)
				}
				want := []string{
					`{"role":"user","content":[{"type":"text","text":"Weather in Oslo and Lima?"}]}`,
					`{"role":"assistant","content":[{"type":"text","text":"Let me look."},` +
						`{"type":"tool_use","id":"call_a","name":"weather","input":{"city":"Oslo"}},` +
						`{"type":"tool_use","id":"call_b","name":"weather","input":{"city":"Lima"}}]}`,
					`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a","content":[{"type":"text","text":"4°C, rain"}]},` +
						`{"type":"tool_result","tool_use_id":"call_b","is_error":true,"content":[{"type":"text","text":"city not found"}]}]}`,
				}
				for i := range want {
					if !jsonEqual(t, raws[i], want[i]) {
						t.Errorf("message %d:\n got %s\nwant %s", i, raws[i], want[i])
					}
				}
			case "openai":
				if len(msgs) != 4 {
					t.Fatalf("messages: got %d, want 4 (user, assistant, tool, tool): %s", len(msgs), raws)
				}
				want := []string{
					`{"role":"user","content":"Weather in Oslo and Lima?"}`,
					`{"role":"assistant","content":"Let me look.","tool_calls":[` +
						`{"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}},` +
						`{"id":"call_b","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Lima\"}"}}]}`,
					`{"role":"tool","tool_call_id":"call_a","content":"4°C, rain"}`,
					`{"role":"tool","tool_call_id":"call_b","content":"Error: city not found"}`,
				}
				for i := range want {
					if !jsonEqual(t, raws[i], want[i]) {
						t.Errorf("message %d:\n got %s\nwant %s", i, raws[i], want[i])
					}
				}
			}
		})
	}
}

func TestChatUsage(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Reply{Text: "ok", Usage: llmtest.Usage{Input: 100, Output: 20, CacheRead: 50, CacheWrite: 30}})
				resp, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, sc.stream)
				if err != nil {
					t.Fatalf("Chat: %v", err)
				}
				want := llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50, CacheWriteTokens: 30}
				if resp.Usage != want {
					t.Errorf("usage: got %+v, want %+v", resp.Usage, want)
				}
			})
		}
	}
}

func TestChatMaxTokensStop(t *testing.T) {
	stops := map[string]string{"anthropic": "max_tokens", "openai": "length"}
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Text: "cut sh", StopReason: stops[pc.name]})
			resp, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("long")}}, true)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.StopReason != llm.StopMaxTokens {
				t.Errorf("stop reason: got %q, want %q", resp.StopReason, llm.StopMaxTokens)
			}
		})
	}
}

func TestChatHTTPErrors(t *testing.T) {
	cases := []struct {
		name      string
		reply     llmtest.Reply
		retryable bool
		after     time.Duration
	}{
		{"bad request", llmtest.Error(400, "messages: roles must alternate"), false, 0},
		{"bad key", llmtest.Error(401, "invalid x-api-key"), false, 0},
		{"rate limited", llmtest.Reply{Status: 429, Message: "rate limit reached", RetryAfter: "7"}, true, 7 * time.Second},
		{"server error", llmtest.Error(500, "internal trouble"), true, 0},
		{"overloaded", llmtest.Error(529, "Overloaded"), true, 0},
	}
	for _, pc := range providers {
		for _, sc := range streaming {
			for _, tc := range cases {
				t.Run(pc.name+"/"+sc.name+"/"+tc.name, func(t *testing.T) {
					srv := llmtest.New(t)
					srv.Script(tc.reply)
					_, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, sc.stream)
					e := asError(t, err)
					if e.Status != tc.reply.Status || e.Message != tc.reply.Message || e.Retryable != tc.retryable || e.RetryAfter != tc.after || e.Provider != pc.name {
						t.Errorf("error: got %+v, want status %d message %q retryable %v retry-after %v", e, tc.reply.Status, tc.reply.Message, tc.retryable, tc.after)
					}
				})
			}
		}
	}
}

// retried is the outcome of one call through WithRetry to a fake server
// scripted with replies.
type retried struct {
	resp     llm.Response
	deltas   []string
	err      error
	requests int
	waits    []time.Duration
}

func chatWithRetry(t *testing.T, newProvider func(*llmtest.Server) llm.Provider, r llm.Retry, stream bool, replies ...llmtest.Reply) retried {
	t.Helper()
	srv := llmtest.New(t)
	srv.Script(replies...)
	var nw noWait
	r.Sleep = nw.sleep
	var out retried
	out.resp, out.deltas, out.err = chat(t, llm.WithRetry(newProvider(srv), r), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, stream)
	out.requests, out.waits = len(srv.Requests()), nw.waits
	return out
}

func TestRetryRateLimitThenSuccess(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				got := chatWithRetry(t, pc.new, llm.Retry{}, sc.stream,
					llmtest.Reply{Status: 429, Message: "slow down", RetryAfter: "3"}, llmtest.Text("finally"))
				if got.err != nil {
					t.Fatalf("Chat: %v", got.err)
				}
				if got.resp.Text() != "finally" {
					t.Errorf("text: got %q, want finally", got.resp.Text())
				}
				if got.requests != 2 {
					t.Errorf("requests: got %d, want 2", got.requests)
				}
				if !reflect.DeepEqual(got.waits, []time.Duration{3 * time.Second}) {
					t.Errorf("waits: got %v, want [3s] from Retry-After", got.waits)
				}
			})
		}
	}
}

func TestRetryServerErrorUntilFailure(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				fail := llmtest.Error(500, "internal trouble")
				got := chatWithRetry(t, pc.new, llm.Retry{Max: 3, Base: time.Second, MaxDelay: 3 * time.Second}, sc.stream,
					fail, fail, fail, fail, fail)
				e := asError(t, got.err)
				if e.Status != 500 || e.Message != "internal trouble" {
					t.Errorf("error: got %+v, want the provider's 500 internal trouble", e)
				}
				if !strings.Contains(got.err.Error(), "internal trouble") {
					t.Errorf("error text %q does not carry the provider's message", got.err)
				}
				if got.requests != 4 {
					t.Errorf("requests: got %d, want 4 (1 + Max 3)", got.requests)
				}
				// Backoff doubles from Base with jitter in [d/2, d], capped at MaxDelay.
				bounds := [][2]time.Duration{{500 * time.Millisecond, time.Second}, {time.Second, 2 * time.Second}, {1500 * time.Millisecond, 3 * time.Second}}
				if len(got.waits) != len(bounds) {
					t.Fatalf("waits: got %v, want %d", got.waits, len(bounds))
				}
				for i, b := range bounds {
					if got.waits[i] < b[0] || got.waits[i] > b[1] {
						t.Errorf("wait %d: got %v, want within [%v, %v]", i, got.waits[i], b[0], b[1])
					}
				}
			})
		}
	}
}

func TestRetryNeverOnClientError(t *testing.T) {
	got := chatWithRetry(t, providers[0].new, llm.Retry{}, false, llmtest.Error(400, "bad"), llmtest.Text("unused"))
	if e := asError(t, got.err); e.Status != 400 {
		t.Errorf("status: got %d, want 400", e.Status)
	}
	if got.requests != 1 {
		t.Errorf("requests: got %d, want 1", got.requests)
	}
}

func TestMalformedJSON(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				got := chatWithRetry(t, pc.new, llm.Retry{}, sc.stream, llmtest.Reply{Malformed: true}, llmtest.Text("unused"))
				e := asError(t, got.err)
				if e.Retryable || e.Status != 0 || !strings.Contains(e.Message, "unreadable answer") {
					t.Errorf("error: got %+v, want a non-retryable unreadable answer", e)
				}
				if got.requests != 1 {
					t.Errorf("requests: got %d, want 1", got.requests)
				}
			})
		}
	}
}

func TestStreamCutAfterOutputIsNotRetried(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			got := chatWithRetry(t, pc.new, llm.Retry{}, true,
				llmtest.Reply{Chunks: []string{"one ", "two ", "three ", "four"}, Cut: true, CutAfter: 2}, llmtest.Text("unused"))
			e := asError(t, got.err)
			if e.Retryable || !strings.Contains(e.Message, "stream was cut") {
				t.Errorf("error: got %+v, want a non-retryable cut stream", e)
			}
			if !reflect.DeepEqual(got.deltas, []string{"one ", "two "}) {
				t.Errorf("deltas: got %q, want the two sent before the cut", got.deltas)
			}
			if got.requests != 1 {
				t.Errorf("requests: got %d, want 1 (no retry after output)", got.requests)
			}
		})
	}
}

func TestStreamCutBeforeOutputIsRetried(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			got := chatWithRetry(t, pc.new, llm.Retry{}, true, llmtest.Reply{Text: "lost", Cut: true, CutAfter: 0}, llmtest.Text("second try"))
			if got.err != nil {
				t.Fatalf("Chat: %v", got.err)
			}
			if got.resp.Text() != "second try" || strings.Join(got.deltas, "") != "second try" {
				t.Errorf("got text %q deltas %q, want only the second try", got.resp.Text(), got.deltas)
			}
			if got.requests != 2 {
				t.Errorf("requests: got %d, want 2", got.requests)
			}
		})
	}
}

// TestStreamErrorEvent checks that an error event inside a 200 stream, a
// server failing after it started answering, becomes an *llm.Error carrying
// the server's message: retried while nothing was shown, final once text
// was.
func TestStreamErrorEvent(t *testing.T) {
	const msg = "upstream model crashed"
	for _, pc := range providers {
		t.Run(pc.name+"/before output", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Text: "lost", StreamError: msg})
			_, deltas, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, true)
			e := asError(t, err)
			if !e.Retryable || e.Message != msg {
				t.Errorf("error: got %+v, want retryable with message %q", e, msg)
			}
			if len(deltas) != 0 {
				t.Errorf("deltas: got %q, want none", deltas)
			}

			got := chatWithRetry(t, pc.new, llm.Retry{}, true, llmtest.Reply{Text: "lost", StreamError: msg}, llmtest.Text("second try"))
			if got.err != nil || got.resp.Text() != "second try" || got.requests != 2 {
				t.Errorf("with retry: got %q, %v after %d requests, want second try after 2", got.resp.Text(), got.err, got.requests)
			}
		})
		t.Run(pc.name+"/after output", func(t *testing.T) {
			got := chatWithRetry(t, pc.new, llm.Retry{}, true,
				llmtest.Reply{Chunks: []string{"one ", "two ", "three"}, StreamError: msg, CutAfter: 2}, llmtest.Text("unused"))
			e := asError(t, got.err)
			if e.Retryable || !strings.Contains(e.Message, "stream was cut") || !strings.Contains(e.Message, msg) {
				t.Errorf("error: got %+v, want a non-retryable cut stream naming %q", e, msg)
			}
			if !reflect.DeepEqual(got.deltas, []string{"one ", "two "}) {
				t.Errorf("deltas: got %q, want the two sent before the error", got.deltas)
			}
			if got.requests != 1 {
				t.Errorf("requests: got %d, want 1 (no retry after output)", got.requests)
			}
		})
	}
}

func TestJSONCutIsRetryable(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Reply{Text: "half", Cut: true})
			_, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, false)
			if e := asError(t, err); !e.Retryable || !strings.Contains(e.Message, "connection failed") {
				t.Errorf("error: got %+v, want a retryable connection failure", e)
			}
		})
	}
}

func TestChatContextCancel(t *testing.T) {
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Reply{Text: "too late", Delay: time.Minute}, llmtest.Text("unused"))
				p := llm.WithRetry(pc.new(srv), llm.Retry{Sleep: (&noWait{}).sleep})
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(50*time.Millisecond, cancel)
				var on func(llm.Delta)
				if sc.stream {
					on = func(llm.Delta) {}
				}
				_, err := p.Chat(ctx, llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, on)
				if !errors.Is(err, context.Canceled) {
					t.Errorf("error: got %v, want context.Canceled", err)
				}
				if n := len(srv.Requests()); n != 1 {
					t.Errorf("requests: got %d, want 1", n)
				}
			})
		}
	}
}

func TestRetryStopsWhenContextEndsWhileWaiting(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Error(503, "busy"), llmtest.Text("unused"))
	ctx, cancel := context.WithCancel(context.Background())
	sleep := func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	p := llm.WithRetry(providers[1].new(srv), llm.Retry{Sleep: sleep})
	_, err := p.Chat(ctx, llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "busy") {
		t.Errorf("error: got %v, want context.Canceled mentioning the last error", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("requests: got %d, want 1", n)
	}
}

func TestNoScriptedReplyLeft(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			_, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, false)
			if e := asError(t, err); e.Status != 500 || e.Message != "fake: no scripted reply left" {
				t.Errorf("error: got %+v, want 500 fake: no scripted reply left", e)
			}
		})
	}
}

func TestAnthropicLargeMaxTokensWithoutStreaming(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("long answer"))
	req := llm.Request{Model: "claude-sonnet-4-5", MaxTokens: 64000, Messages: []llm.Message{userText("write a lot")}}
	resp, _, err := chat(t, providers[0].new(srv), req, false)
	if err != nil || resp.Text() != "long answer" {
		t.Fatalf("Chat: got %q, %v", resp.Text(), err)
	}
	if got := srv.Requests()[0].MaxTokens; got != 64000 {
		t.Errorf("max_tokens sent: got %d, want 64000", got)
	}
}

func TestOpenAIMaxTokensField(t *testing.T) {
	cases := []struct{ name, field string }{{"openai", "max_completion_tokens"}, {"ollama", "max_tokens"}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("ok"))
			p := llm.NewOpenAI(llm.OpenAIConfig{Name: tc.name, APIKey: "k", BaseURL: srv.OpenAIURL()})
			if _, _, err := chat(t, p, llm.Request{Model: "m", MaxTokens: 123, Messages: []llm.Message{userText("hi")}}, false); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			var body map[string]any
			json.Unmarshal(srv.Requests()[0].Body, &body)
			if body[tc.field] != float64(123) || len(body) != 3 {
				t.Errorf("body: got %v, want model, messages and %s: 123", body, tc.field)
			}
		})
	}
}

// TestProvidersIgnoreEnvironment checks that configuration comes only from
// the caller: the SDKs' own environment variables must not redirect calls.
func TestProvidersIgnoreEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_API_KEY", "env-key")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("a"), llmtest.Text("b"))
	for _, pc := range providers {
		if _, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, false); err != nil {
			t.Fatalf("%s: Chat: %v", pc.name, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests at the configured URL: got %d, want 2", len(reqs))
	}
	if got := reqs[0].Header.Get("X-Api-Key"); got != "test-key" {
		t.Errorf("anthropic key: got %q, want test-key", got)
	}
	if got := reqs[1].Header.Get("Authorization") + reqs[1].Header.Get("OpenAI-Organization"); got != "Bearer test-key" {
		t.Errorf("openai auth headers: got %q, want Bearer test-key and no organization", got)
	}
}

// TestRequestGolden pins the exact request body each provider sends for a
// conversation of text, tool calls and tool results (one an error), so that
// a change to the encoding shows up as a diff of testdata/*.golden.json.
// Run with -update to rewrite the files after a deliberate change.
func TestRequestGolden(t *testing.T) {
	msgs := slices.Clone(weatherTurn)
	msgs[2].Parts = append(slices.Clone(msgs[2].Parts), llm.Part{Type: llm.PartText, Text: "Thanks."})
	req := llm.Request{Model: "m", System: "Be brief.", MaxTokens: 500, Tools: []llm.ToolSpec{weatherTool}, Messages: msgs}
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("ok"))
			if _, _, err := chat(t, pc.new(srv), req, false); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			got := srv.Requests()[0].Body
			path := filepath.Join("testdata", "request_"+pc.name+".golden.json")
			if *update {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("request body differs from %s:\n got %s\nwant %s", path, got, want)
			}
		})
	}
}

// TestOpenAIBaseURL checks the forms a base URL comes in: with or without a
// trailing slash it reaches …/chat/completions, and one that is not a URL
// fails the call saying so, without a retry.
func TestOpenAIBaseURL(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("a"), llmtest.Text("b"))
	for _, base := range []string{srv.OpenAIURL(), srv.OpenAIURL() + "/"} {
		p := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: base})
		if _, _, err := chat(t, p, llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, false); err != nil {
			t.Errorf("base %q: Chat: %v", base, err)
		}
	}
	for i, r := range srv.Requests() {
		if r.Path != "/v1/chat/completions" {
			t.Errorf("request %d: got path %q, want /v1/chat/completions", i, r.Path)
		}
	}
	p := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: "localhost:11434/v1"})
	_, _, err := chat(t, p, llm.Request{Model: "m", Messages: []llm.Message{userText("hi")}}, false)
	if e := asError(t, err); e.Retryable || !strings.Contains(e.Message, "base URL localhost:11434/v1 is not usable") {
		t.Errorf("error: got %+v, want a non-retryable unusable base URL", e)
	}
}
