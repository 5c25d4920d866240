package llmtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The Anthropic Messages wire format: answers, streams, errors, parsing.

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
			Source    anthropicSource `json:"source"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			var s string
			if err := json.Unmarshal(m.Content, &s); err != nil {
				return fmt.Errorf("messages[%d].content is neither a string nor a list of blocks", i)
			}
			msg.Text = s
		}
		for j, b := range blocks {
			switch b.Type {
			case "text":
				msg.Text += b.Text
			case "image":
				img, err := b.Source.image()
				if err != nil {
					return fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
				}
				msg.Images = append(msg.Images, img)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "tool_result":
				imgs, err := anthropicResultImages(b.Content)
				if err != nil {
					return fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
				}
				msg.ToolResults = append(msg.ToolResults, ToolResult{ToolCallID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError, Images: imgs})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	return nil
}

// anthropicSource is an image block's source.
type anthropicSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

func (s anthropicSource) image() (Image, error) {
	if s.Type != "base64" {
		return Image{}, fmt.Errorf("image source type %q: only base64 images are supported", s.Type)
	}
	data, err := base64.StdEncoding.DecodeString(s.Data)
	if err != nil {
		return Image{}, fmt.Errorf("image data is not base64: %w", err)
	}
	return Image{MediaType: s.MediaType, Data: data}, nil
}

// anthropicResultImages reads the image blocks of a tool_result's content,
// which is a string or a list of text and image blocks.
func anthropicResultImages(content json.RawMessage) ([]Image, error) {
	var blocks []struct {
		Type   string          `json:"type"`
		Source anthropicSource `json:"source"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		return nil, nil
	}
	var out []Image
	for i, b := range blocks {
		if b.Type != "image" {
			continue
		}
		img, err := b.Source.image()
		if err != nil {
			return nil, fmt.Errorf("tool_result content[%d]: %w", i, err)
		}
		out = append(out, img)
	}
	return out, nil
}
