package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// defaultMaxTokens is sent when Request.MaxTokens is 0 and the API requires a
// value (Anthropic's max_tokens is mandatory).
const defaultMaxTokens = 4096

// AnthropicConfig configures NewAnthropic. Nothing is read from the
// environment: an empty BaseURL means the public API.
type AnthropicConfig struct {
	APIKey     string
	BaseURL    string       // default https://api.anthropic.com
	HTTPClient *http.Client // default: the SDK's client
}

type anthropicProvider struct {
	client anthropic.Client
}

// NewAnthropic returns the Provider for Anthropic's Messages API. The SDK's
// own retries are off: WithRetry owns retrying.
func NewAnthropic(cfg AnthropicConfig) Provider {
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.anthropic.com/"
	}
	opts := []option.RequestOption{
		// Without this the SDK reads ANTHROPIC_* variables and profile files
		// itself; configuration comes from the caller only.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(cfg.APIKey),
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithMiddleware(tagBodyErrors),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...)}
}

func (p *anthropicProvider) Name() string { return "anthropic" }

func (p *anthropicProvider) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params, err := anthropicParams(req)
	if err != nil {
		return Response{}, err
	}
	if onDelta == nil {
		// The SDK refuses a non-streaming call whose max_tokens may take
		// over 10 minutes unless the timeout is explicit; give it the time
		// it would have estimated.
		timeout := min(max(time.Duration(float64(time.Hour)*float64(params.MaxTokens)/128000), 10*time.Minute), time.Hour)
		msg, err := p.client.Messages.New(ctx, params, option.WithRequestTimeout(timeout))
		if err != nil {
			return Response{}, p.error(ctx, err)
		}
		return anthropicResponse(msg), nil
	}

	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var (
		msg       anthropic.Message
		delivered bool
		complete  bool
	)
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return Response{}, p.streamError(ctx, err, delivered)
		}
		switch ev.Type {
		case "content_block_delta":
			if ev.Delta.Type == "text_delta" && ev.Delta.Text != "" {
				delivered = true
				onDelta(Delta{Text: ev.Delta.Text})
			}
		case "message_stop":
			complete = true
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.streamError(ctx, err, delivered)
	}
	if !complete {
		return Response{}, p.streamError(ctx, errStreamEnded, delivered)
	}
	return anthropicResponse(&msg), nil
}

// error maps an SDK error to *Error (or the context's error).
func (p *anthropicProvider) error(ctx context.Context, err error) error {
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		status := ae.StatusCode
		if status < 400 {
			// An error event inside a 200 stream: judge it by its type.
			status = anthropicErrorStatus(string(ae.Type()))
		}
		return statusError(p.Name(), status, h, ae.RawJSON())
	}
	if errors.Is(err, errStreamEnded) {
		return &Error{Provider: p.Name(), Message: err.Error(), Retryable: true}
	}
	return transportError(ctx, p.Name(), err)
}

func (p *anthropicProvider) streamError(ctx context.Context, err error, delivered bool) error {
	if delivered && ctx.Err() == nil {
		return cutError(p.Name(), err)
	}
	return p.error(ctx, err)
}

// anthropicErrorStatus gives the HTTP status an error type stands for, for
// errors that arrive as stream events.
func anthropicErrorStatus(typ string) int {
	switch typ {
	case "overloaded_error":
		return 529
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "api_error":
		return http.StatusInternalServerError
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusInternalServerError
}

func anthropicParams(req Request) (anthropic.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = defaultMaxTokens
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model),
		MaxTokens: int64(maxTokens),
	}
	if req.System != "" {
		params.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	for _, t := range req.Tools {
		schema, err := anthropicSchema(t)
		if err != nil {
			return params, err
		}
		tool := anthropic.ToolParam{Name: t.Name, InputSchema: schema}
		if t.Description != "" {
			tool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: &tool})
	}
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		for _, part := range m.Parts {
			switch part.Type {
			case PartText:
				// The API rejects empty text blocks.
				if part.Text != "" {
					blocks = append(blocks, anthropic.NewTextBlock(part.Text))
				}
			case PartToolUse:
				blocks = append(blocks, anthropic.NewToolUseBlock(part.ToolCallID, objectInput(part.Input), part.ToolName))
			case PartToolResult:
				res := anthropic.ToolResultBlockParam{ToolUseID: part.ToolCallID}
				if part.Output != "" {
					res.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: part.Output}}}
				}
				for _, img := range part.Images {
					res.Content = append(res.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: anthropicImage(img)})
				}
				if part.IsError {
					res.IsError = anthropic.Bool(true)
				}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &res})
			case PartImage:
				for _, img := range part.Images {
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfImage: anthropicImage(img)})
				}
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if m.Role == RoleAssistant {
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	return params, nil
}

// anthropicImage is img as an inline (base64) image block.
func anthropicImage(img Image) *anthropic.ImageBlockParam {
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{
		MediaType: anthropic.Base64ImageSourceMediaType(img.MediaType),
		Data:      base64.StdEncoding.EncodeToString(img.Data),
	}}}
}

// objectInput is a tool_use input as the API accepts it: a JSON object.
func objectInput(raw json.RawMessage) json.RawMessage {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		return t
	}
	return json.RawMessage("{}")
}

// anthropicSchema splits a JSON Schema object into the SDK's fields; keys
// other than type, properties and required travel as extra fields.
func anthropicSchema(t ToolSpec) (anthropic.ToolInputSchemaParam, error) {
	var s anthropic.ToolInputSchemaParam
	if len(bytes.TrimSpace(t.InputSchema)) == 0 {
		s.Properties = map[string]any{}
		return s, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.InputSchema, &m); err != nil {
		return s, &Error{Provider: "anthropic", Message: "tool " + t.Name + ": input schema is not a JSON object: " + err.Error()}
	}
	s.Properties = m["properties"]
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

func anthropicResponse(m *anthropic.Message) Response {
	r := Response{
		Model:      string(m.Model),
		StopReason: anthropicStop(string(m.StopReason)),
		Usage: Usage{
			InputTokens:      int(m.Usage.InputTokens),
			OutputTokens:     int(m.Usage.OutputTokens),
			CacheReadTokens:  int(m.Usage.CacheReadInputTokens),
			CacheWriteTokens: int(m.Usage.CacheCreationInputTokens),
		},
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			r.Parts = append(r.Parts, Part{Type: PartText, Text: b.Text})
		case "tool_use":
			r.Parts = append(r.Parts, Part{Type: PartToolUse, ToolCallID: b.ID, ToolName: b.Name, Input: toolArgs(string(b.Input))})
		}
	}
	return r
}

// anthropicStop normalises a stop reason; reasons with no common meaning
// (refusal, pause_turn, …) pass through unchanged.
func anthropicStop(reason string) string {
	switch reason {
	case "end_turn", "stop_sequence", "":
		return StopEnd
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopMaxTokens
	}
	return reason
}
