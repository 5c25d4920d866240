package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// retryableStatus reports whether a provider answering with status may
// succeed on a later attempt: request timeout, conflict, rate limit and every
// server-side failure (Anthropic's 529 "overloaded" included).
func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// statusError builds the Error for an HTTP failure. body is the raw answer;
// the provider's own message is dug out of the usual error envelopes.
func statusError(provider string, status int, header http.Header, body string) *Error {
	msg := errorMessage(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &Error{
		Provider:   provider,
		Status:     status,
		Message:    msg,
		Retryable:  retryableStatus(status),
		RetryAfter: retryAfter(header),
	}
}

// errorMessage finds the human message in an error body:
// {"error":{"message":…}} (Anthropic, OpenAI), {"error":"…"} (Ollama and
// some proxies) or {"message":…}. A body that is not JSON is returned trimmed
// and shortened, since a proxy's HTML page still says more than nothing.
func errorMessage(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return ""
	}
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal([]byte(body), &env) != nil {
		return truncate(body, 300)
	}
	var inner struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(env.Error, &inner) == nil && inner.Message != "" {
		return inner.Message
	}
	var s string
	if json.Unmarshal(env.Error, &s) == nil && s != "" {
		return s
	}
	if env.Message != "" {
		return env.Message
	}
	return truncate(body, 300)
}

// retryAfter reads the wait a provider asked for: retry-after-ms (OpenAI),
// then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// transportError maps a failure that is not an HTTP status: the caller's
// context ending (returned as the context's error, so errors.Is works),
// timeouts and broken connections (retryable), and anything else — in
// practice an answer that could not be decoded (not retryable).
func transportError(ctx context.Context, provider string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &Error{Provider: provider, Message: "request timed out: " + err.Error(), Retryable: true}
	}
	var ue *url.Error
	var oe *net.OpError
	var re *bodyReadError
	if errors.As(err, &re) || errors.As(err, &ue) || errors.As(err, &oe) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return &Error{Provider: provider, Message: "connection failed: " + err.Error(), Retryable: true}
	}
	return &Error{Provider: provider, Message: "unreadable answer from the provider: " + err.Error()}
}

// tagBodyErrors is an SDK middleware marking errors that come from reading
// the response body off the network, so that a connection cut mid-answer
// (retryable) is told apart from a complete answer that is not valid JSON
// (not retryable) — both surface as "unexpected EOF" from the decoder. The
// OpenAI provider wraps its bodies in taggedBody itself.
func tagBodyErrors(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	res, err := next(req)
	if res != nil && res.Body != nil {
		res.Body = &taggedBody{res.Body}
	}
	return res, err
}

type taggedBody struct{ io.ReadCloser }

func (b *taggedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = &bodyReadError{err}
	}
	return n, err
}

// bodyReadError is a failure reading a response body off the network.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// cutError is a stream that failed after text reached the caller. Retrying
// would repeat that text, so the call fails for good.
func cutError(provider string, cause error) error {
	msg := "the stream was cut after output had started"
	if cause != nil {
		msg += ": " + cause.Error()
	}
	return &Error{Provider: provider, Message: msg}
}

// errStreamEnded stands for a stream that ended cleanly but without its final
// event, as when a proxy closes the connection between two events.
var errStreamEnded = errors.New("the stream ended before the answer was complete")

// toolArgs returns a model's tool arguments as JSON: empty arguments (some
// models send them for parameterless tools) become {}, and text that is not
// JSON is kept as a JSON string, so nothing is lost and the tool's input
// validation tells the model what went wrong.
func toolArgs(raw string) json.RawMessage {
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return json.RawMessage("{}")
	}
	if !json.Valid([]byte(raw)) {
		b, _ := json.Marshal(raw)
		return b
	}
	return json.RawMessage(raw)
}

// truncate shortens s to at most n bytes without splitting a character.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
