package llmtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// OpenAI's Responses API (POST /v1/responses), the wire format Codex CLI
// speaks: the typed streaming events and the final response object, and
// the request's input items. The app itself does not call it; the fake
// serves it so outside clients built on it can be driven by a script.

func (a *answer) responseID() string { return fmt.Sprintf("resp_fake_%d", a.seq) }

func (a *answer) responsesUsage() map[string]any {
	u := a.usage()
	in := u.Input + u.CacheRead + u.CacheWrite
	return map[string]any{
		"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": u.CacheRead},
		"output_tokens": u.Output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens": in + u.Output,
	}
}

// responsesItems is the reply as output items: one message with its text,
// then one function_call per tool call.
func (a *answer) responsesItems() []map[string]any {
	var items []map[string]any
	if text := strings.Join(a.chunks(), ""); text != "" {
		items = append(items, a.responsesMessage(text, "completed"))
	}
	for i, c := range a.reply.ToolCalls {
		items = append(items, a.responsesCall(i, c.Args, "completed"))
	}
	return items
}

func (a *answer) responsesMessage(text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = append(content, map[string]any{"type": "output_text", "text": text, "annotations": []any{}})
	}
	return map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake_%d", a.seq), "status": status,
		"role": "assistant", "content": content}
}

func (a *answer) responsesCall(i int, arguments, status string) map[string]any {
	c := a.reply.ToolCalls[i]
	item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake_%d_%d", a.seq, i), "status": status,
		"call_id": a.callID(i), "name": c.Name, "arguments": arguments}
	if c.Namespace != "" {
		item["namespace"] = c.Namespace
	}
	return item
}

func (a *answer) responsesObject(status string, output []map[string]any) map[string]any {
	r := map[string]any{"id": a.responseID(), "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": a.req.Model, "output": output}
	if output == nil {
		r["output"] = []any{}
	}
	if status == "completed" {
		r["usage"] = a.responsesUsage()
	}
	return r
}

func (a *answer) responsesStream() {
	a.startSSE()
	seq := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		a.event(typ, fields)
	}
	emit("response.created", map[string]any{"response": a.responsesObject("in_progress", nil)})
	if a.reply.Malformed {
		a.event("response.output_text.delta", `{"type": "response.output_text.delta", "delta": "x`)
		return
	}
	out := 0
	if chunks := a.chunks(); strings.Join(chunks, "") != "" {
		msg := a.responsesMessage("", "in_progress")
		emit("response.output_item.added", map[string]any{"output_index": out, "item": msg})
		emit("response.content_part.added", map[string]any{"item_id": msg["id"], "output_index": out, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": "", "annotations": []any{}}})
		for _, c := range chunks {
			if !a.beforeContent() {
				return
			}
			emit("response.output_text.delta", map[string]any{"item_id": msg["id"], "output_index": out, "content_index": 0, "delta": c})
		}
		text := strings.Join(chunks, "")
		emit("response.output_text.done", map[string]any{"item_id": msg["id"], "output_index": out, "content_index": 0, "text": text})
		emit("response.content_part.done", map[string]any{"item_id": msg["id"], "output_index": out, "content_index": 0,
			"part": map[string]any{"type": "output_text", "text": text, "annotations": []any{}}})
		emit("response.output_item.done", map[string]any{"output_index": out, "item": a.responsesMessage(text, "completed")})
		out++
	}
	for i, c := range a.reply.ToolCalls {
		if !a.beforeContent() {
			return
		}
		item := a.responsesCall(i, "", "in_progress")
		emit("response.output_item.added", map[string]any{"output_index": out, "item": item})
		for _, piece := range splitN(c.Args, 3) {
			if !a.beforeContent() {
				return
			}
			emit("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": out, "delta": piece})
		}
		emit("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": out, "arguments": c.Args})
		emit("response.output_item.done", map[string]any{"output_index": out, "item": a.responsesCall(i, c.Args, "completed")})
		out++
	}
	if !a.beforeEnd() {
		return
	}
	emit("response.completed", map[string]any{"response": a.responsesObject("completed", a.responsesItems())})
}

// responsesTool is one entry of a Responses request's tools: a function,
// or a namespace grouping functions.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tools       []responsesTool `json:"tools"`
}

// parseResponses reads a Responses API request: instructions, input items
// (messages, function calls and their outputs) and function tools.
func parseResponses(req *Request, body []byte) error {
	var in struct {
		Model           string          `json:"model"`
		Instructions    string          `json:"instructions"`
		Input           json.RawMessage `json:"input"`
		Stream          bool            `json:"stream"`
		MaxOutputTokens int             `json:"max_output_tokens"`
		Tools           []responsesTool `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return fmt.Errorf("request is not a Responses request: %w", err)
	}
	req.Model, req.Stream, req.MaxTokens, req.IncludeUsage = in.Model, in.Stream, in.MaxOutputTokens, true
	for _, t := range in.Tools {
		switch t.Type {
		case "function":
			req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.Parameters})
		case "namespace":
			for _, f := range t.Tools {
				if f.Type == "function" {
					req.Tools = append(req.Tools, Tool{Name: f.Name, Description: f.Description, Schema: f.Parameters, Namespace: t.Name})
				}
			}
		}
	}
	system := []string{}
	if in.Instructions != "" {
		system = append(system, in.Instructions)
	}
	var text string
	if json.Unmarshal(in.Input, &text) == nil {
		req.Messages = append(req.Messages, Message{Role: "user", Text: text, Raw: in.Input})
		req.System = strings.Join(system, "\n")
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(in.Input, &items); err != nil {
		return fmt.Errorf("input is neither text nor a list of items: %w", err)
	}
	for i, raw := range items {
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments string          `json:"arguments"`
			Namespace string          `json:"namespace"`
			Output    json.RawMessage `json:"output"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("input[%d]: %w", i, err)
		}
		switch {
		case it.Type == "function_call":
			call := ToolCall{ID: it.CallID, Name: it.Name, Args: it.Arguments, Namespace: it.Namespace}
			if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "assistant" {
				req.Messages[n-1].ToolCalls = append(req.Messages[n-1].ToolCalls, call)
			} else {
				req.Messages = append(req.Messages, Message{Role: "assistant", Raw: raw, ToolCalls: []ToolCall{call}})
			}
		case it.Type == "function_call_output":
			req.Messages = append(req.Messages, Message{Role: "tool", Raw: raw,
				ToolResults: []ToolResult{{ToolCallID: it.CallID, Content: textOf(it.Output)}}})
		case it.Role == "system" || it.Role == "developer":
			system = append(system, textOf(it.Content))
		case it.Type == "message" || it.Type == "" && it.Role != "":
			req.Messages = append(req.Messages, Message{Role: it.Role, Raw: raw, Text: textOf(it.Content)})
		}
	}
	req.System = strings.Join(system, "\n")
	return nil
}
