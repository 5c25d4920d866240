// Package llm talks to language models: one Provider interface (chat with
// tools, streaming, usage) implemented twice — on Anthropic's official Go SDK
// (anthropic.go), and on OpenAI's Chat Completions wire format spoken
// directly (openai.go, wire.go), which also serves Ollama, OpenRouter, LM
// Studio and vLLM by base URL — plus bounded retries and the price table that
// turns usage into cost.
//
// Why no openai-go: the SDK generates types for the whole OpenAI API and
// linked them all in for the one endpoint used here. Replacing it with the
// few hundred lines of wire.go and openai.go took the desktop binary
// (make build) from 88.4 MB to 51.2 MB and the headless one (make
// server) from 86.7 MB to 49.5 MB.
//
// Nothing here knows about agents or runs: the run loop builds a Request and
// records what comes back.
package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Role says who wrote a message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType says what a Part holds.
type PartType string

const (
	PartText       PartType = "text"        // Text
	PartToolUse    PartType = "tool_use"    // ToolCallID, ToolName, Input (assistant only)
	PartToolResult PartType = "tool_result" // ToolCallID, Output, IsError, Images (user only)
	PartImage      PartType = "image"       // Images (user only)
)

// Part is one piece of a message.
type Part struct {
	Type       PartType        `json:"type"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolName   string          `json:"tool_name,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Output     string          `json:"output,omitempty"`
	IsError    bool            `json:"is_error,omitempty"`
	// Images travel after Output in a tool result (a screenshot), or alone
	// in a PartImage. Only send them to a model that takes images.
	Images []Image `json:"images,omitempty"`
}

// Image is an inline image. MediaType is one that both APIs accept:
// image/png, image/jpeg, image/gif or image/webp.
type Image struct {
	MediaType string `json:"media_type"`
	Data      []byte `json:"data"` // the encoded file; base64 in JSON
}

// Message is one turn of the conversation. Tool results travel in a user
// message, as both APIs expect (OpenAI's "tool" role is produced by the
// OpenAI provider from these parts).
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
}

// ToolSpec describes a tool the model may call.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"` // a JSON Schema object
}

// Request is one model call.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default (4096)
}

// Usage is what one call consumed, as the provider reported it.
// InputTokens counts only uncached input, as Anthropic reports it; the OpenAI
// provider subtracts cached tokens from prompt_tokens so that the four counts
// never overlap and Prices.Cost can price each at its own rate.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens,
		u.CacheReadTokens + v.CacheReadTokens, u.CacheWriteTokens + v.CacheWriteTokens}
}

// Stop reasons, normalised across providers.
const (
	StopEnd       = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
)

// Response is the model's answer: text and tool_use parts in order.
type Response struct {
	Parts      []Part
	StopReason string
	Usage      Usage
	Model      string // the model that answered, as the provider named it
}

// Text is the concatenated text of the response.
func (r Response) Text() string {
	var s string
	for _, p := range r.Parts {
		if p.Type == PartText {
			s += p.Text
		}
	}
	return s
}

// ToolCalls are the response's tool_use parts.
func (r Response) ToolCalls() []Part {
	var out []Part
	for _, p := range r.Parts {
		if p.Type == PartToolUse {
			out = append(out, p)
		}
	}
	return out
}

// Delta is a piece of streamed output.
type Delta struct {
	Text string
}

// Provider is a model API.
type Provider interface {
	// Name is the provider's id: "anthropic", "openai", "ollama", …
	Name() string
	// Chat sends req and returns the whole answer. When onDelta is not nil the
	// call streams and onDelta receives text as it arrives (from the calling
	// goroutine); the Response is still complete at the end.
	Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// Error is a failed model call, with what the provider said.
type Error struct {
	Provider string
	Status   int    // HTTP status, 0 when none (network, malformed answer)
	Message  string // the provider's own message
	// Retryable: 408, 409, 429, 5xx (529 included), timeouts and connection
	// failures. False once a stream was cut after output was delivered.
	Retryable bool
	// RetryAfter is the wait the provider asked for (Retry-After or
	// retry-after-ms header); 0 when it did not say.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: %d %s", e.Provider, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}
