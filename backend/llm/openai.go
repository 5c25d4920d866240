package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// OpenAIConfig configures NewOpenAI. Any server speaking OpenAI's Chat
// Completions wire format works: Ollama (http://host:11434/v1, any key),
// OpenRouter, LM Studio, vLLM.
type OpenAIConfig struct {
	Name    string // provider id reported by Name(); default "openai"
	APIKey  string // sent as a bearer token; empty sends none (local servers)
	BaseURL string // default https://api.openai.com/v1
	// HTTPClient defaults to http.DefaultTransport's settings, waiting at
	// most 10 minutes for a response's headers.
	HTTPClient *http.Client
}

type openAIProvider struct {
	name   string
	key    string
	url    string // …/chat/completions
	urlErr error  // a BaseURL that is not a URL, reported by Chat
	http   *http.Client
}

// NewOpenAI returns a Provider on OpenAI's Chat Completions API, spoken
// directly (wire.go) rather than through the openai-go SDK, whose thousands
// of generated types for the whole OpenAI API made up more than a third of
// the desktop binary. It does not retry: WithRetry owns retrying. The
// SDK's environment variables (OPENAI_BASE_URL, OPENAI_API_KEY,
// OPENAI_ORG_ID) mean nothing here: configuration comes only through cfg.
func NewOpenAI(cfg OpenAIConfig) Provider {
	p := &openAIProvider{name: cfg.Name, key: cfg.APIKey, http: cfg.HTTPClient}
	if p.name == "" {
		p.name = ProviderOpenAI
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.openai.com/v1"
	}
	u, err := url.Parse(base)
	if err == nil && (u.Scheme == "" || u.Host == "") {
		err = errors.New("not an absolute URL")
	}
	if err != nil {
		p.urlErr = &Error{Provider: p.name, Message: "base URL " + base + " is not usable: " + err.Error()}
	} else {
		// JoinPath keeps a query (Azure's api-version) where it belongs.
		p.url = u.JoinPath("chat/completions").String()
	}
	if p.http == nil {
		p.http = defaultOpenAIClient
	}
	return p
}

// defaultOpenAIClient waits for a response's headers as long as the SDK did
// (a slow model may think for minutes before its first byte) but not forever.
var defaultOpenAIClient = func() *http.Client {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return &http.Client{}
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = 10 * time.Minute
	return &http.Client{Transport: t}
}()

func (p *openAIProvider) Name() string { return p.name }

func (p *openAIProvider) Chat(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	if p.urlErr != nil {
		return Response{}, p.urlErr
	}
	body, err := p.body(req, onDelta != nil)
	if err != nil {
		return Response{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, transportError(ctx, p.name, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	if onDelta != nil {
		hr.Header.Set("Accept", "text/event-stream")
	}
	if p.key != "" {
		hr.Header.Set("Authorization", "Bearer "+p.key)
	}
	res, err := p.http.Do(hr)
	if err != nil {
		return Response{}, transportError(ctx, p.name, err)
	}
	defer res.Body.Close()
	// Read errors are the network's (retryable), unlike an answer that
	// arrived whole but is not JSON.
	rb := &taggedBody{res.Body}
	if res.StatusCode >= 400 {
		b, _ := io.ReadAll(io.LimitReader(rb, 64<<10))
		if ctx.Err() != nil {
			return Response{}, transportError(ctx, p.name, ctx.Err())
		}
		return Response{}, statusError(p.name, res.StatusCode, res.Header, string(b))
	}

	if onDelta == nil {
		b, err := io.ReadAll(rb)
		if err != nil {
			return Response{}, transportError(ctx, p.name, err)
		}
		var c chatCompletion
		if err := json.Unmarshal(b, &c); err != nil {
			return Response{}, transportError(ctx, p.name, err)
		}
		if len(c.Choices) == 0 {
			return Response{}, &Error{Provider: p.name, Message: "unreadable answer from the provider: no choices in the response"}
		}
		ch := c.Choices[0]
		return openAIResponse(c.Model, ch.Message.Content, ch.Message.ToolCalls, ch.FinishReason, c.Usage), nil
	}

	delivered := false
	s, err := readChatStream(rb, func(text string) {
		delivered = true
		onDelta(Delta{Text: text})
	})
	if err == nil && !s.Finished {
		err = errStreamEnded
	}
	if err != nil {
		if delivered && ctx.Err() == nil {
			return Response{}, cutError(p.name, err)
		}
		return Response{}, p.streamError(ctx, err)
	}
	return openAIResponse(s.Model, s.Content, s.Calls, s.Finish, s.Usage), nil
}

// streamError maps a failed stream that delivered nothing yet: the server's
// error event and a stream that stopped short are worth another try.
func (p *openAIProvider) streamError(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		var se *streamEventError
		if errors.As(err, &se) {
			msg := se.Message
			if msg == "" {
				msg = se.Error()
			}
			return &Error{Provider: p.name, Message: msg, Retryable: true}
		}
		if errors.Is(err, errStreamEnded) {
			return &Error{Provider: p.name, Message: err.Error(), Retryable: true}
		}
	}
	return transportError(ctx, p.name, err)
}

// body is req as a Chat Completions request body.
func (p *openAIProvider) body(req Request, stream bool) ([]byte, error) {
	cr, err := p.request(req)
	if err != nil {
		return nil, err
	}
	if stream {
		cr.Stream = true
		cr.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as the SDK sent it: "<" stays "<"
	if err := enc.Encode(cr); err != nil {
		return nil, &Error{Provider: p.name, Message: "encode the request: " + err.Error()}
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func (p *openAIProvider) request(req Request) (chatRequest, error) {
	cr := chatRequest{Model: req.Model, Messages: []chatMessage{}}
	if req.MaxTokens > 0 {
		if p.name == ProviderOpenAI {
			cr.MaxCompletionTokens = req.MaxTokens
		} else {
			cr.MaxTokens = req.MaxTokens
		}
	}
	if req.System != "" {
		cr.Messages = append(cr.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, t := range req.Tools {
		schema := map[string]any{"type": "object", "properties": map[string]any{}}
		if len(strings.TrimSpace(string(t.InputSchema))) > 0 {
			schema = nil
			// UseNumber: a number in the schema goes out as it was written.
			dec := json.NewDecoder(bytes.NewReader(t.InputSchema))
			dec.UseNumber()
			if err := dec.Decode(&schema); err != nil || schema == nil {
				return cr, &Error{Provider: p.name, Message: "tool " + t.Name + ": input schema is not a JSON object"}
			}
		}
		cr.Tools = append(cr.Tools, chatTool{Type: "function",
			Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
	}
	// Tool messages take only text: the images of a turn's tool results
	// follow its last tool message (they must all follow the assistant's
	// calls directly) as one user message.
	var images []chatPart
	for _, m := range req.Messages {
		msgs, imgs := openAIMessages(m)
		images = append(images, imgs...)
		for _, msg := range msgs {
			if msg.Role != "tool" && len(images) > 0 {
				cr.Messages = append(cr.Messages, chatMessage{Role: "user", Content: images})
				images = nil
			}
			cr.Messages = append(cr.Messages, msg)
		}
	}
	if len(images) > 0 {
		cr.Messages = append(cr.Messages, chatMessage{Role: "user", Content: images})
	}
	return cr, nil
}

// openAIMessages turns one Message into Chat Completions messages: each tool
// result becomes its own "tool" message (they must follow the assistant's
// tool calls directly), any text and images a user message after them.
// toolImages are the tool results' images, each call's under a line naming
// it, for the caller to place after the turn's last tool message.
func openAIMessages(m Message) (out []chatMessage, toolImages []chatPart) {
	var (
		text  strings.Builder
		parts []chatPart // text and images in order, once there is an image
		calls []chatToolCall
	)
	for _, part := range m.Parts {
		switch part.Type {
		case PartText:
			text.WriteString(part.Text)
		case PartImage:
			if text.Len() > 0 {
				parts = append(parts, textPart(text.String()))
				text.Reset()
			}
			parts = append(parts, openAIImages(part.Images)...)
		case PartToolUse:
			calls = append(calls, chatToolCall{ID: part.ToolCallID, Type: "function",
				Function: chatFunctionCall{Name: part.ToolName, Arguments: argumentsText(part.Input)}})
		case PartToolResult:
			content := part.Output
			if part.IsError { // the wire format has no error flag: say it in the text
				content = "Error: " + content
			}
			out = append(out, chatMessage{Role: "tool", Content: content, ToolCallID: part.ToolCallID})
			if len(part.Images) > 0 {
				toolImages = append(toolImages, textPart("Images returned by tool call "+part.ToolCallID+":"))
				toolImages = append(toolImages, openAIImages(part.Images)...)
			}
		}
	}
	if m.Role == RoleAssistant {
		if text.Len() == 0 && len(calls) == 0 {
			return out, toolImages
		}
		a := chatMessage{Role: "assistant", ToolCalls: calls}
		if text.Len() > 0 {
			a.Content = text.String()
		}
		return append(out, a), toolImages
	}
	switch {
	case len(parts) > 0:
		if text.Len() > 0 {
			parts = append(parts, textPart(text.String()))
		}
		out = append(out, chatMessage{Role: "user", Content: parts})
	case text.Len() > 0:
		out = append(out, chatMessage{Role: "user", Content: text.String()})
	}
	return out, toolImages
}

func textPart(s string) chatPart { return chatPart{Type: "text", Text: s} }

// openAIImages are images as image_url content parts holding data: URLs,
// which OpenAI and the compatible servers (Ollama included) accept.
func openAIImages(imgs []Image) []chatPart {
	var out []chatPart
	for _, img := range imgs {
		url := "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)
		out = append(out, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}})
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

func openAIResponse(model, content string, calls []chatToolCall, finish string, u chatUsage) Response {
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
	cached := u.PromptTokensDetails.CachedTokens
	written := u.PromptTokensDetails.CacheWriteTokens
	r.Usage = Usage{
		InputTokens:      max(u.PromptTokens-cached-written, 0),
		OutputTokens:     u.CompletionTokens,
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
