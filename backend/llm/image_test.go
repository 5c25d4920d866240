package llm_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"reflect"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

// screenshot is a real PNG, as browser_screenshot takes.
func screenshot(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// screenshotTurn is a conversation whose last message holds parts, the
// results answering the assistant's tool calls.
func screenshotTurn(parts ...llm.Part) []llm.Message {
	var calls []llm.Part
	for _, r := range parts {
		if r.Type != llm.PartToolResult {
			continue
		}
		calls = append(calls, llm.Part{Type: llm.PartToolUse, ToolCallID: r.ToolCallID, ToolName: "browser_screenshot", Input: json.RawMessage(`{}`)})
	}
	return []llm.Message{
		userText("What does the page look like?"),
		{Role: llm.RoleAssistant, Parts: calls},
		{Role: llm.RoleUser, Parts: parts},
	}
}

func rawMessages(msgs []llmtest.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Raw))
	}
	return out
}

// TestToolResultImage sends a tool result carrying a PNG through each provider
// and checks the fake received it as an image, in the provider's shape.
func TestToolResultImage(t *testing.T) {
	shot := screenshot(t)
	want := []llmtest.Image{{MediaType: "image/png", Data: shot}}
	conv := screenshotTurn(llm.Part{Type: llm.PartToolResult, ToolCallID: "call_s", Output: "[image:browser-1] 3x2 screenshot",
		Images: []llm.Image{{MediaType: "image/png", Data: shot}}})
	for _, pc := range providers {
		for _, sc := range streaming {
			t.Run(pc.name+"/"+sc.name, func(t *testing.T) {
				srv := llmtest.New(t)
				srv.Script(llmtest.Text("A red dot."))
				if _, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: conv}, sc.stream); err != nil {
					t.Fatalf("Chat: %v", err)
				}
				msgs := srv.Requests()[0].Messages
				switch pc.name {
				case "anthropic":
					if len(msgs) != 3 || len(msgs[2].ToolResults) != 1 {
						t.Fatalf("messages: got %s, want user, assistant, user with one tool result", rawMessages(msgs))
					}
					res := msgs[2].ToolResults[0]
					if res.ToolCallID != "call_s" || res.Content != "[image:browser-1] 3x2 screenshot" {
						t.Errorf("tool result: got id=%q content=%q", res.ToolCallID, res.Content)
					}
					if !reflect.DeepEqual(res.Images, want) {
						t.Errorf("tool result images: got %+v, want one image/png of %d bytes", res.Images, len(shot))
					}
				case "openai":
					if len(msgs) != 4 {
						t.Fatalf("messages: got %s, want user, assistant, tool, user", rawMessages(msgs))
					}
					tool, user := msgs[2], msgs[3]
					if tool.Role != "tool" || len(tool.ToolResults) != 1 || tool.ToolResults[0].Content != "[image:browser-1] 3x2 screenshot" {
						t.Errorf("tool message: got %s", tool.Raw)
					}
					if user.Role != "user" || user.Text != "Images returned by tool call call_s:" {
						t.Errorf("image message: got role %q text %q, want user naming call_s", user.Role, user.Text)
					}
					if !reflect.DeepEqual(user.Images, want) {
						t.Errorf("images: got %+v, want one image/png of %d bytes", user.Images, len(shot))
					}
				}
			})
		}
	}
}

// TestToolResultImageWire pins each provider's encoding of a tool result
// with an image.
func TestToolResultImageWire(t *testing.T) {
	conv := screenshotTurn(llm.Part{Type: llm.PartToolResult, ToolCallID: "call_s", Output: "shot",
		Images: []llm.Image{{MediaType: "image/jpeg", Data: []byte("jpeg")}}})
	want := map[string]string{
		"anthropic": `{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_s","content":[` +
			`{"type":"text","text":"shot"},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"anBlZw=="}}]}]}`,
		"openai": `{"role":"user","content":[{"type":"text","text":"Images returned by tool call call_s:"},` +
			`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,anBlZw=="}}]}`,
	}
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("ok"))
			if _, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: conv}, false); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			msgs := srv.Requests()[0].Messages
			if got := string(msgs[len(msgs)-1].Raw); !jsonEqual(t, got, want[pc.name]) {
				t.Errorf("last message:\n got %s\nwant %s", got, want[pc.name])
			}
		})
	}
}

// TestOpenAIToolImagesOrder checks that when two tool calls of one turn both
// return images, every tool message comes right after the assistant's
// calls and the images follow in one user message, before any user text.
func TestOpenAIToolImagesOrder(t *testing.T) {
	a := llm.Part{Type: llm.PartToolResult, ToolCallID: "call_a", Output: "shot a", Images: []llm.Image{{MediaType: "image/png", Data: []byte("a")}}}
	b := llm.Part{Type: llm.PartToolResult, ToolCallID: "call_b", Output: "shot b", Images: []llm.Image{
		{MediaType: "image/png", Data: []byte("b1")}, {MediaType: "image/jpeg", Data: []byte("b2")}}}
	then := llm.Part{Type: llm.PartText, Text: "Compare them."}
	base := screenshotTurn(a, b)
	cases := []struct {
		name string
		conv []llm.Message
		text bool // the user's text follows the images
	}{
		{"one message", base, false},
		{"one message with text", screenshotTurn(a, b, then), true},
		{"a message per result", append(base[:2:2],
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{a}},
			llm.Message{Role: llm.RoleUser, Parts: []llm.Part{b, then}}), true},
	}
	images := `{"role":"user","content":[` +
		`{"type":"text","text":"Images returned by tool call call_a:"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,YQ=="}},` +
		`{"type":"text","text":"Images returned by tool call call_b:"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,YjE="}},` +
		`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,YjI="}}]}`
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("ok"))
			if _, _, err := chat(t, providers[1].new(srv), llm.Request{Model: "m", Messages: tc.conv}, false); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			want := []string{
				`{"role":"user","content":"What does the page look like?"}`,
				`{"role":"assistant","tool_calls":[` +
					`{"id":"call_a","type":"function","function":{"name":"browser_screenshot","arguments":"{}"}},` +
					`{"id":"call_b","type":"function","function":{"name":"browser_screenshot","arguments":"{}"}}]}`,
				`{"role":"tool","tool_call_id":"call_a","content":"shot a"}`,
				`{"role":"tool","tool_call_id":"call_b","content":"shot b"}`,
				images,
			}
			if tc.text {
				want = append(want, `{"role":"user","content":"Compare them."}`)
			}
			got := rawMessages(srv.Requests()[0].Messages)
			if len(got) != len(want) {
				t.Fatalf("messages: got %d, want %d:\n%s", len(got), len(want), got)
			}
			for i := range want {
				if !jsonEqual(t, got[i], want[i]) {
					t.Errorf("message %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
}

// TestUserImage sends an image of the user's own, between two texts.
func TestUserImage(t *testing.T) {
	conv := []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		{Type: llm.PartText, Text: "What is this?"},
		{Type: llm.PartImage, Images: []llm.Image{{MediaType: "image/webp", Data: []byte("webp")}}},
		{Type: llm.PartText, Text: "Be short."},
	}}}
	want := map[string]string{
		"anthropic": `{"role":"user","content":[{"type":"text","text":"What is this?"},` +
			`{"type":"image","source":{"type":"base64","media_type":"image/webp","data":"d2VicA=="}},` +
			`{"type":"text","text":"Be short."}]}`,
		"openai": `{"role":"user","content":[{"type":"text","text":"What is this?"},` +
			`{"type":"image_url","image_url":{"url":"data:image/webp;base64,d2VicA=="}},` +
			`{"type":"text","text":"Be short."}]}`,
	}
	for _, pc := range providers {
		t.Run(pc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Script(llmtest.Text("A picture."))
			if _, _, err := chat(t, pc.new(srv), llm.Request{Model: "m", Messages: conv}, false); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			msgs := srv.Requests()[0].Messages
			if len(msgs) != 1 {
				t.Fatalf("messages: got %s, want one", rawMessages(msgs))
			}
			if !jsonEqual(t, string(msgs[0].Raw), want[pc.name]) {
				t.Errorf("message:\n got %s\nwant %s", msgs[0].Raw, want[pc.name])
			}
			if wantImg := []llmtest.Image{{MediaType: "image/webp", Data: []byte("webp")}}; !reflect.DeepEqual(msgs[0].Images, wantImg) {
				t.Errorf("images: got %+v, want %+v", msgs[0].Images, wantImg)
			}
		})
	}
}

// TestPartJSON checks that Part's JSON keeps its shape without images and
// carries images as base64.
func TestPartJSON(t *testing.T) {
	cases := []struct {
		name string
		part llm.Part
		want string
	}{
		{"tool result", llm.Part{Type: llm.PartToolResult, ToolCallID: "c", ToolName: "t", Output: "ok", IsError: true},
			`{"type":"tool_result","tool_call_id":"c","tool_name":"t","output":"ok","is_error":true}`},
		{"tool result with image", llm.Part{Type: llm.PartToolResult, ToolCallID: "c", Output: "ok", Images: []llm.Image{{MediaType: "image/png", Data: []byte{1, 2}}}},
			`{"type":"tool_result","tool_call_id":"c","output":"ok","images":[{"media_type":"image/png","data":"AQI="}]}`},
		{"image", llm.Part{Type: llm.PartImage, Images: []llm.Image{{MediaType: "image/jpeg", Data: []byte{3}}}},
			`{"type":"image","images":[{"media_type":"image/jpeg","data":"Aw=="}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.part)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("JSON: got %s, want %s", b, tc.want)
			}
			var back llm.Part
			if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, tc.part) {
				t.Errorf("round trip: got %+v (%v), want %+v", back, err, tc.part)
			}
		})
	}
}
