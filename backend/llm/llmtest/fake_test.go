package llmtest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

func user(s string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: s}}}
}

// TestServeEcho runs the standalone server the way cmd/fakellm does and
// talks to it with both real providers. The tool result carries an image,
// which an OpenAI client sends after it.
func TestServeEcho(t *testing.T) {
	srv, err := llmtest.Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	long := strings.Repeat("x", 300)
	providers := []llm.Provider{
		llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.AnthropicURL()}),
		llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.OpenAIURL()}),
	}
	for _, p := range providers {
		t.Run(p.Name(), func(t *testing.T) {
			ctx := context.Background()
			var deltas []string
			resp, err := p.Chat(ctx, llm.Request{Model: "echo", Messages: []llm.Message{user("hello there, fake model")}},
				func(d llm.Delta) { deltas = append(deltas, d.Text) })
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if want := "You said: hello there, fake model"; resp.Text() != want || strings.Join(deltas, "") != want {
				t.Errorf("text: got %q (deltas %q), want %q", resp.Text(), deltas, want)
			}
			if len(deltas) < 2 {
				t.Errorf("deltas: got %d, want the text in several chunks", len(deltas))
			}
			if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
				t.Errorf("usage: got %+v, want non-zero", resp.Usage)
			}

			conv := []llm.Message{user(`use tool search {"q": "rerun"}`)}
			resp, err = p.Chat(ctx, llm.Request{Model: "echo", Messages: conv}, nil)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			calls := resp.ToolCalls()
			var args map[string]string
			if len(calls) == 1 {
				json.Unmarshal(calls[0].Input, &args)
			}
			if len(calls) != 1 || calls[0].ToolName != "search" || args["q"] != "rerun" || resp.StopReason != llm.StopToolUse {
				t.Fatalf("tool call: got %+v stop %q, want search {\"q\": \"rerun\"}", calls, resp.StopReason)
			}

			conv = append(conv,
				llm.Message{Role: llm.RoleAssistant, Parts: calls},
				llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartToolResult, ToolCallID: calls[0].ToolCallID, Output: long,
					Images: []llm.Image{{MediaType: "image/png", Data: []byte("png")}}}}})
			resp, err = p.Chat(ctx, llm.Request{Model: "echo", Messages: conv}, nil)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if want := "Tool said: " + long[:200]; resp.Text() != want {
				t.Errorf("text: got %q, want %q", resp.Text(), want)
			}
		})
	}
}

func TestUnknownRoute(t *testing.T) {
	srv := llmtest.New(t)
	res, err := http.Get(srv.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Error struct{ Message string } `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&body)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body.Error.Message, "no route") {
		t.Errorf("got %d %q, want 404 no route", res.StatusCode, body.Error.Message)
	}
}

func TestScriptOrderAcrossAPIs(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("first"), llmtest.Text("second"))
	a := llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.AnthropicURL()})
	o := llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.OpenAIURL()})
	var got []string
	for _, p := range []llm.Provider{o, a} {
		resp, err := p.Chat(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{user("hi")}}, nil)
		if err != nil {
			t.Fatalf("%s: %v", p.Name(), err)
		}
		got = append(got, resp.Text())
	}
	if !reflect.DeepEqual(got, []string{"first", "second"}) {
		t.Errorf("answers: got %q, want first then second", got)
	}
	if srv.Remaining() != 0 {
		t.Errorf("Remaining: got %d, want 0", srv.Remaining())
	}
	if apis := []string{srv.Requests()[0].API, srv.Requests()[1].API}; !reflect.DeepEqual(apis, []string{"openai", "anthropic"}) {
		t.Errorf("recorded APIs: got %v", apis)
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want []string
	}{
		{"", 4, nil},
		{"one", 4, []string{"one"}},
		{"a b c", 4, []string{"a ", "b ", "c"}},
		{"a b c d e f g h", 4, []string{"a b ", "c d ", "e f ", "g h"}},
	}
	for _, tc := range cases {
		if got := llmtest.Split(tc.in, tc.n); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Split(%q, %d): got %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestParseImages posts images in each wire format and checks how the fake
// reads them, and that it refuses what the real APIs refuse or it cannot
// read.
func TestParseImages(t *testing.T) {
	png := llmtest.Image{MediaType: "image/png", Data: []byte("png")} // "cG5n" in base64
	cases := []struct {
		name, path, body string
		want             []llmtest.Message // Role, Text, Images and ToolResults compared
		status           int               // when not 200
	}{
		{"anthropic tool result", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` +
			`{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"shot"},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"cG5n"}}]}]}]}`,
			[]llmtest.Message{{Role: "user", ToolResults: []llmtest.ToolResult{{ToolCallID: "t", Content: "shot", Images: []llmtest.Image{png}}}}}, 0},
		{"anthropic user image", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` +
			`{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"cG5n"}}]}]}`,
			[]llmtest.Message{{Role: "user", Text: "see", Images: []llmtest.Image{png}}}, 0},
		{"anthropic image by url", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[` +
			`{"type":"image","source":{"type":"url","url":"https://example.com/a.png"}}]}]}`, nil, 400},
		{"openai user image", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[` +
			`{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,cG5n"}}]}]}`,
			[]llmtest.Message{{Role: "user", Text: "see", Images: []llmtest.Image{png}}}, 0},
		{"openai image by url", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[` +
			`{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}`, nil, 400},
		{"openai bad base64", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,!!"}}]}]}`, nil, 400},
		{"openai image in tool message", "/v1/chat/completions", `{"model":"m","messages":[{"role":"tool","tool_call_id":"t","content":[` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,cG5n"}}]}]}`, nil, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("ok"))
			res, err := http.Post(srv.URL()+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if want := max(tc.status, 200); res.StatusCode != want {
				t.Fatalf("status: got %d, want %d", res.StatusCode, want)
			}
			if tc.status != 0 {
				return
			}
			got := srv.Requests()[0].Messages
			for i := range got {
				got[i].Raw = nil
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("messages: got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestReplyIsCutAtMaxTokens: an answer longer than the request's max_tokens
// stops there, as a real model's does, on both APIs, and the server
// records the cap it received.
func TestReplyIsCutAtMaxTokens(t *testing.T) {
	srv := llmtest.New(t)
	for _, p := range []llm.Provider{
		llm.NewAnthropic(llm.AnthropicConfig{APIKey: "k", BaseURL: srv.AnthropicURL()}),
		llm.NewOpenAI(llm.OpenAIConfig{APIKey: "k", BaseURL: srv.OpenAIURL()}),
	} {
		t.Run(p.Name(), func(t *testing.T) {
			long := strings.Repeat("word ", 400) // about 500 tokens by the fake's count
			srv.Script(llmtest.Reply{Text: long, ToolCalls: []llmtest.ToolCall{{Name: "x"}}}, llmtest.Text("short"))
			resp, err := p.Chat(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{user("hi")}, MaxTokens: 50}, nil)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if got := reqs[len(reqs)-1].MaxTokens; got != 50 {
				t.Errorf("max_tokens received = %d, want 50", got)
			}
			if resp.Usage.OutputTokens != 50 || resp.StopReason != llm.StopMaxTokens || len(resp.Text()) != 200 || len(resp.ToolCalls()) != 0 {
				t.Errorf("capped answer: usage %+v, stop %q, %d bytes, %d tool calls; want 50 tokens, max_tokens, 200 bytes, no calls",
					resp.Usage, resp.StopReason, len(resp.Text()), len(resp.ToolCalls()))
			}
			resp, err = p.Chat(context.Background(), llm.Request{Model: "m", Messages: []llm.Message{user("hi")}, MaxTokens: 50}, nil)
			if err != nil || resp.Text() != "short" || resp.StopReason != llm.StopEnd {
				t.Errorf("an answer under the cap: %q stop %q (%v)", resp.Text(), resp.StopReason, err)
			}
		})
	}
}
