package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAIConfig configures NewOpenAI. Any server speaking OpenAI's Chat
// Completions wire format works: Ollama (http://host:11434/v1, any key),
// OpenRouter, LM Studio, vLLM.
type OpenAIConfig struct {
	Name       string // provider id reported by Name(); default "openai"
	APIKey     string
	BaseURL    string       // default https://api.openai.com/v1
	HTTPClient *http.Client // default: the SDK's client
}

type openAIProvider struct {
	name   string
	client openai.Client
}

// NewOpenAI returns a Provider on OpenAI's Chat Completions API. The SDK's
// own retries are off: WithRetry owns retrying.
func NewOpenAI(cfg OpenAIConfig) Provider {
	name := cfg.Name
	if name == "" {
		name = "openai"
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1/"
	}
	key := cfg.APIKey
	if key == "" {
		// Local servers ignore the key, but the SDK would otherwise fall
		// back to OPENAI_API_KEY from the environment.
		key = "none"
	}
	// Explicit options override the OPENAI_BASE_URL / OPENAI_API_KEY the SDK
	// reads from the environment; the organization and project it may pick
	// up from there are dropped.
	opts := []option.RequestOption{
		option.WithAPIKey(key),
		option.WithBaseURL(base),
		option.WithHeaderDel("OpenAI-Organization"),
		option.WithHeaderDel("OpenAI-Project"),
		option.WithMaxRetries(0),
		option.WithMiddleware(tagBodyErrors),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &openAIProvider{name: name, client: openai.NewClient(opts...)}
}

func (p *openAIProvider) Name() string { return p.name }

func (p *openAIProvider) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	// The raw response lets errors with a body the SDK cannot parse (a
	// proxy's HTML page) still report their status.
	var raw *http.Response
	if onDelta == nil {
		c, err := p.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&raw))
		if err != nil {
			return Response{}, p.error(ctx, err, raw)
		}
		if len(c.Choices) == 0 {
			return Response{}, &Error{Provider: p.name, Message: "unreadable answer from the provider: no choices in the response"}
		}
		ch := c.Choices[0]
		return openAIResponse(c.Model, ch.Message.Content, ch.Message.ToolCalls, ch.FinishReason, c.Usage), nil
	}

	params.StreamOptions.IncludeUsage = openai.Bool(true)
	stream := p.client.Chat.Completions.NewStreaming(ctx, params, option.WithResponseInto(&raw))
	defer stream.Close()
	var (
		acc       openai.ChatCompletionAccumulator
		usage     openai.CompletionUsage
		delivered bool
		finished  bool
	)
	for stream.Next() {
		chunk := stream.Current()
		if chunk.JSON.Usage.Valid() {
			// The accumulator keeps only some usage fields; the final usage
			// chunk has them all.
			usage = chunk.Usage
		}
		if !acc.AddChunk(chunk) {
			return Response{}, p.streamError(ctx, errors.New("inconsistent stream chunk"), delivered, raw)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" {
				delivered = true
				onDelta(Delta{Text: ch.Delta.Content})
			}
			if ch.FinishReason != "" {
				finished = true
			}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.streamError(ctx, err, delivered, raw)
	}
	if !finished || len(acc.Choices) == 0 {
		return Response{}, p.streamError(ctx, errStreamEnded, delivered, raw)
	}
	ch := acc.Choices[0]
	return openAIResponse(acc.Model, ch.Message.Content, ch.Message.ToolCalls, ch.FinishReason, usage), nil
}

// error maps an SDK error to *Error (or the context's error).
func (p *openAIProvider) error(ctx context.Context, err error, raw *http.Response) error {
	var ae *openai.Error
	if errors.As(err, &ae) {
		var h http.Header
		if ae.Response != nil {
			h = ae.Response.Header
		}
		e := statusError(p.name, ae.StatusCode, h, ae.RawJSON())
		if ae.Message != "" {
			e.Message = ae.Message
		}
		return e
	}
	if raw != nil && raw.StatusCode >= 400 && ctx.Err() == nil {
		// The SDK could not parse the error body; it put the body back.
		var body []byte
		if raw.Body != nil {
			body, _ = io.ReadAll(io.LimitReader(raw.Body, 64<<10))
		}
		return statusError(p.name, raw.StatusCode, raw.Header, string(body))
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) && ctx.Err() == nil {
		// An error event inside a 200 stream: the server failed midway.
		return &Error{Provider: p.name, Message: errorMessage(string(se.Event.Data)), Retryable: true}
	}
	if errors.Is(err, errStreamEnded) {
		return &Error{Provider: p.name, Message: err.Error(), Retryable: true}
	}
	return transportError(ctx, p.name, err)
}

func (p *openAIProvider) streamError(ctx context.Context, err error, delivered bool, raw *http.Response) error {
	if delivered && ctx.Err() == nil {
		return cutError(p.name, err)
	}
	return p.error(ctx, err, raw)
}

func (p *openAIProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	if req.MaxTokens > 0 {
		// OpenAI's reasoning models accept only max_completion_tokens;
		// compatible servers (Ollama, vLLM, LM Studio) know max_tokens.
		if p.name == "openai" {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		fn := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			fn.Description = openai.String(t.Description)
		}
		schema := shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
			schema = nil
			if err := json.Unmarshal(t.InputSchema, &schema); err != nil || schema == nil {
				return params, &Error{Provider: p.name, Message: "tool " + t.Name + ": input schema is not a JSON object"}
			}
		}
		fn.Parameters = schema
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(fn))
	}
	// Tool messages take only text: the images of a turn's tool results
	// follow its last tool message (they must all follow the assistant's
	// calls directly) as one user message.
	var images []openai.ChatCompletionContentPartUnionParam
	for _, m := range req.Messages {
		msgs, imgs := openAIMessages(m)
		images = append(images, imgs...)
		for _, msg := range msgs {
			if msg.OfTool == nil && len(images) > 0 {
				params.Messages = append(params.Messages, openai.UserMessage(images))
				images = nil
			}
			params.Messages = append(params.Messages, msg)
		}
	}
	if len(images) > 0 {
		params.Messages = append(params.Messages, openai.UserMessage(images))
	}
	return params, nil
}

// openAIMessages turns one Message into Chat Completions messages: each tool
// result becomes its own "tool" message (they must follow the assistant's
// tool calls directly), any text and images a user message after them.
// toolImages are the tool results' images, each call's under a line naming
// it, for the caller to place after the turn's last tool message.
func openAIMessages(m Message) (out []openai.ChatCompletionMessageParamUnion, toolImages []openai.ChatCompletionContentPartUnionParam) {
	var (
		text  strings.Builder
		parts []openai.ChatCompletionContentPartUnionParam // text and images in order, once there is an image
		calls []openai.ChatCompletionMessageToolCallUnionParam
	)
	for _, part := range m.Parts {
		switch part.Type {
		case PartText:
			text.WriteString(part.Text)
		case PartImage:
			if text.Len() > 0 {
				parts = append(parts, openai.TextContentPart(text.String()))
				text.Reset()
			}
			parts = append(parts, openAIImages(part.Images)...)
		case PartToolUse:
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: part.ToolCallID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      part.ToolName,
						Arguments: argumentsText(part.Input),
					},
				},
			})
		case PartToolResult:
			content := part.Output
			if part.IsError { // the wire format has no error flag: say it in the text
				content = "Error: " + content
			}
			out = append(out, openai.ToolMessage(content, part.ToolCallID))
			if len(part.Images) > 0 {
				toolImages = append(toolImages, openai.TextContentPart("Images returned by tool call "+part.ToolCallID+":"))
				toolImages = append(toolImages, openAIImages(part.Images)...)
			}
		}
	}
	if m.Role == RoleAssistant {
		if text.Len() == 0 && len(calls) == 0 {
			return out, toolImages
		}
		var a openai.ChatCompletionAssistantMessageParam
		if text.Len() > 0 {
			a.Content.OfString = openai.String(text.String())
		}
		a.ToolCalls = calls
		return append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a}), toolImages
	}
	switch {
	case len(parts) > 0:
		if text.Len() > 0 {
			parts = append(parts, openai.TextContentPart(text.String()))
		}
		out = append(out, openai.UserMessage(parts))
	case text.Len() > 0:
		out = append(out, openai.UserMessage(text.String()))
	}
	return out, toolImages
}

// openAIImages are images as image_url content parts holding data: URLs,
// which OpenAI and the compatible servers (Ollama included) accept.
func openAIImages(imgs []Image) []openai.ChatCompletionContentPartUnionParam {
	var out []openai.ChatCompletionContentPartUnionParam
	for _, img := range imgs {
		url := "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
		out = append(out, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: url}))
	}
	return out
}

// argumentsText is a tool call's arguments as the wire wants them: JSON text.
// Input kept as a JSON string (arguments that were not JSON, see toolArgs)
// goes back as the model wrote it.
func argumentsText(in json.RawMessage) string {
	in = json.RawMessage(strings.TrimSpace(string(in)))
	if len(in) == 0 {
		return "{}"
	}
	if in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s
		}
	}
	return string(in)
}

func openAIResponse(model, content string, calls []openai.ChatCompletionMessageToolCallUnion, finish string, u openai.CompletionUsage) Response {
	r := Response{Model: model, StopReason: openAIStop(finish)}
	if content != "" {
		r.Parts = append(r.Parts, Part{Type: PartText, Text: content})
	}
	for _, c := range calls {
		r.Parts = append(r.Parts, Part{Type: PartToolUse, ToolCallID: c.ID, ToolName: c.Function.Name, Input: toolArgs(c.Function.Arguments)})
	}
	if len(calls) > 0 {
		// Some compatible servers (older Ollama) say "stop" after tool calls.
		r.StopReason = StopToolUse
	}
	cached := int(u.PromptTokensDetails.CachedTokens)
	written := int(u.PromptTokensDetails.CacheWriteTokens)
	r.Usage = Usage{
		InputTokens:      max(int(u.PromptTokens)-cached-written, 0),
		OutputTokens:     int(u.CompletionTokens),
		CacheReadTokens:  cached,
		CacheWriteTokens: written,
	}
	return r
}

// openAIStop normalises a finish_reason; others (content_filter, …) pass
// through unchanged.
func openAIStop(reason string) string {
	switch reason {
	case "stop", "":
		return StopEnd
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	}
	return reason
}
