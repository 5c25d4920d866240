package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The OpenAI Chat Completions wire format: answers, streams, errors, parsing.

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
		imgs, err := openAIImages(m.Content)
		if err != nil {
			return fmt.Errorf("messages[%d]: %w", i, err)
		}
		if len(imgs) > 0 && m.Role != "user" {
			// As the API does: only user messages may carry images.
			return fmt.Errorf("messages[%d]: image content is only supported in user messages, not in %q messages", i, m.Role)
		}
		msg.Images = imgs
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	req.System = strings.Join(system, "\n")
	return nil
}

// openAIImages reads the image_url parts of a message's content, which is a
// string or a list of parts.
func openAIImages(content json.RawMessage) ([]Image, error) {
	var parts []struct {
		Type     string `json:"type"`
		ImageURL struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return nil, nil
	}
	var out []Image
	for i, p := range parts {
		if p.Type != "image_url" {
			continue
		}
		img, err := dataURLImage(p.ImageURL.URL)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out = append(out, img)
	}
	return out, nil
}

// dataURLImage decodes a data:<media type>;base64,<data> URL.
func dataURLImage(url string) (Image, error) {
	rest, ok := strings.CutPrefix(url, "data:")
	meta, data, ok2 := strings.Cut(rest, ",")
	mediaType, ok3 := strings.CutSuffix(meta, ";base64")
	if !ok || !ok2 || !ok3 {
		return Image{}, fmt.Errorf("image_url %.40q: only base64 data: URLs are supported", url)
	}
	b, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		return Image{}, fmt.Errorf("image_url data is not base64: %w", err)
	}
	return Image{MediaType: mediaType, Data: b}, nil
}

// ---- echo ----
