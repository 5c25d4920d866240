package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The Chat Completions wire format (POST …/chat/completions), only the
// fields this package sends and reads. The field order of the request types
// is the order the bytes go out in (testdata/request_openai.golden.json).

type chatRequest struct {
	Messages []chatMessage `json:"messages"`
	Model    string        `json:"model"`
	// OpenAI's reasoning models accept only max_completion_tokens;
	// compatible servers (Ollama, vLLM, LM Studio) know max_tokens.
	MaxCompletionTokens int                `json:"max_completion_tokens,omitempty"`
	MaxTokens           int                `json:"max_tokens,omitempty"`
	StreamOptions       *chatStreamOptions `json:"stream_options,omitempty"`
	Tools               []chatTool         `json:"tools,omitempty"`
	Stream              bool               `json:"stream,omitempty"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Content    any            `json:"content,omitempty"` // string or []chatPart; nil for an assistant message of only tool calls
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Role       string         `json:"role"` // system, user, assistant, tool
}

// chatPart is a text or image_url content part of a user message.
type chatPart struct {
	ImageURL *chatImageURL `json:"image_url,omitempty"`
	Text     string        `json:"text,omitempty"`
	Type     string        `json:"type"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatTool struct {
	Function chatFunction `json:"function"`
	Type     string       `json:"type"` // function
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"` // a map, so the keys go out sorted
}

// chatToolCall is a tool call in an assistant message, sent back in later
// requests and read from a whole (not streamed) answer.
type chatToolCall struct {
	ID       string           `json:"id"`
	Function chatFunctionCall `json:"function"`
	Type     string           `json:"type"` // function
}

type chatFunctionCall struct {
	Arguments string `json:"arguments"` // JSON text
	Name      string `json:"name"`
}

// chatCompletion is a whole answer (chat.completion).
type chatCompletion struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   string         `json:"content"`
			ToolCalls []chatToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage chatUsage `json:"usage"`
}

type chatUsage struct {
	PromptTokens        int               `json:"prompt_tokens"` // cached and cache-written tokens included
	CompletionTokens    int               `json:"completion_tokens"`
	PromptTokensDetails chatPromptDetails `json:"prompt_tokens_details"`
}

type chatPromptDetails struct {
	CachedTokens     int `json:"cached_tokens"`
	CacheWriteTokens int `json:"cache_write_tokens"`
}

// chatChunk is one event of a streamed answer (chat.completion.chunk).
type chatChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	// Usage comes in the last chunk, after the one with the finish_reason,
	// when the request asked for stream_options.include_usage.
	Usage *chatUsage `json:"usage"`
	// Error set means the server failed midway through a 200 stream.
	Error json.RawMessage `json:"error"`
}

// chatStreamResult is a streamed answer put back together.
type chatStreamResult struct {
	Model    string
	Content  string
	Calls    []chatToolCall
	Finish   string
	Usage    chatUsage
	Finished bool // a finish_reason arrived
}

// Bounds on what a stream may make this side hold, so that a broken or
// hostile server cannot make it allocate without end.
const (
	maxStreamLine  = 32 << 20 // one SSE line (an event's JSON)
	maxStreamCalls = 128      // tool calls in one answer
)

// errInconsistentChunk is a chunk that cannot belong to the answer being
// streamed: another completion's id, or a tool call index out of range.
var errInconsistentChunk = errors.New("inconsistent stream chunk")

// streamEventError is an error event inside a 200 stream: the server failed
// after it had started answering. Message is what the server said.
type streamEventError struct{ Message string }

func (e *streamEventError) Error() string {
	return "the provider reported an error mid-stream: " + e.Message
}

// readChatStream reads a Chat Completions event stream (text/event-stream
// of chat.completion.chunk events, ending with data: [DONE]) and puts the
// answer of choice 0 back together: its text, passed to onDelta piece by
// piece as it arrives, its tool calls assembled from their deltas by
// index, the finish_reason and the usage. It stops at [DONE] or the end of
// r; a stream that ends without a finish_reason is reported through
// Finished, not as an error. Errors are r's own, *streamEventError,
// errInconsistentChunk, or a chunk that is not JSON.
func readChatStream(r io.Reader, onDelta func(string)) (chatStreamResult, error) {
	var (
		res   chatStreamResult
		id    string
		text  bytes.Buffer
		calls []chatToolCall
	)
	handle := func(event string, data []byte) (done bool, err error) {
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			return true, nil
		}
		var c chatChunk
		if err := json.Unmarshal(data, &c); err != nil {
			if event == "error" {
				return true, &streamEventError{Message: errorMessage(string(data))}
			}
			return true, fmt.Errorf("decode stream chunk: %w", err)
		}
		if c.Error != nil || event == "error" {
			return true, &streamEventError{Message: errorMessage(string(data))}
		}
		if c.ID != "" {
			if id != "" && c.ID != id {
				return true, errInconsistentChunk
			}
			id = c.ID
		}
		if res.Model == "" {
			res.Model = c.Model
		}
		if c.Usage != nil {
			res.Usage = *c.Usage
		}
		for _, ch := range c.Choices {
			if ch.Index != 0 {
				continue // only one choice is asked for
			}
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				onDelta(ch.Delta.Content)
			}
			for _, d := range ch.Delta.ToolCalls {
				if d.Index < 0 || d.Index >= maxStreamCalls {
					return true, errInconsistentChunk
				}
				for len(calls) <= d.Index {
					calls = append(calls, chatToolCall{Type: "function"})
				}
				tc := &calls[d.Index]
				if d.ID != "" {
					tc.ID = d.ID
				}
				// The name and the arguments come in pieces, as text does.
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
			if ch.FinishReason != "" {
				res.Finish, res.Finished = ch.FinishReason, true
			}
		}
		return false, nil
	}

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxStreamLine)
	var (
		event string
		data  []byte
	)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 { // a blank line ends an event
			if len(data) > 0 {
				done, err := handle(event, bytes.TrimSuffix(data, []byte("\n")))
				if err != nil {
					return res, err
				}
				if done {
					break
				}
			}
			event, data = "", data[:0]
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			data = append(data, value...)
			data = append(data, '\n')
		}
		// "" is a comment (": keep-alive"); id and retry do not matter here.
	}
	if err := sc.Err(); err != nil {
		return res, err
	}
	res.Content = text.String()
	// A call that got an index but never a name is a gap some servers leave.
	for _, c := range calls {
		if c.Function.Name != "" || c.ID != "" {
			res.Calls = append(res.Calls, c)
		}
	}
	return res, nil
}
