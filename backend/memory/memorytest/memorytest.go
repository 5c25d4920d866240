// Package memorytest holds the fakes for testing code that uses memories: a
// clock that moves only when told, and a fake embeddings server speaking the
// real OpenAI embeddings wire format (POST /v1/embeddings) with deterministic
// bag-of-words vectors, so texts sharing words are near in meaning.
//
//	srv := memorytest.NewEmbedServer(t, 64)
//	emb := memory.NewOpenAI(memory.OpenAIConfig{BaseURL: srv.URL(), Model: "fake-64"})
package memorytest

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"
)

// Clock is a fake clock; its zero value starts at 2026-01-01 UTC.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock set to t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now is the clock's time; pass c.Now as a Config's Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	now := c.Now()
	c.mu.Lock()
	c.now = now.Add(d)
	c.mu.Unlock()
}

// fillers carry no meaning for the fake model.
var fillers = map[string]bool{"a": true, "an": true, "the": true, "is": true, "are": true, "of": true,
	"to": true, "in": true, "on": true, "at": true, "by": true, "for": true, "and": true, "or": true, "what": true}

// Vector is the fake model's embedding of text: each word (lowercased letters
// and digits, except a few fillers such as "the") hashed into one of dims
// buckets, counted, then normalised. Texts with no word get a fixed unit
// vector.
func Vector(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if fillers[w] {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)]++
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1
		return v
	}
	n := float32(math.Sqrt(norm))
	for i := range v {
		v[i] /= n
	}
	return v
}

// EmbedServer is the fake embeddings endpoint.
type EmbedServer struct {
	srv  *httptest.Server
	dims int

	mu       sync.Mutex
	requests []EmbedRequest
	failNext int
	synonyms map[string]string
}

// Synonym makes the server embed word exactly like as, so a test can show
// recall by meaning finding what shares no keyword.
func (e *EmbedServer) Synonym(word, as string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.synonyms == nil {
		e.synonyms = map[string]string{}
	}
	e.synonyms[strings.ToLower(word)] = strings.ToLower(as)
}

// EmbedRequest is what one call sent.
type EmbedRequest struct {
	Model         string
	Input         []string
	Authorization string
}

// NewEmbedServer starts a fake endpoint answering vectors of dims dimensions;
// it stops at the test's cleanup.
func NewEmbedServer(t testing.TB, dims int) *EmbedServer {
	e := &EmbedServer{dims: dims}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

// URL is the base URL to configure, ending in /v1.
func (e *EmbedServer) URL() string { return e.srv.URL + "/v1" }

// Requests returns the calls received so far.
func (e *EmbedServer) Requests() []EmbedRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]EmbedRequest(nil), e.requests...)
}

// FailNext makes the next n calls answer 500 in OpenAI's error format.
func (e *EmbedServer) FailNext(n int) {
	e.mu.Lock()
	e.failNext = n
	e.mu.Unlock()
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": msg, "type": "invalid_request_error", "param": nil, "code": nil,
	}})
}

func (e *EmbedServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		writeError(w, http.StatusNotFound, fmt.Sprintf("fake: no route %s %s", r.Method, r.URL.Path))
		return
	}
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"` // a string or an array of strings
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "fake: body is not JSON: "+err.Error())
		return
	}
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, x := range in {
			s, ok := x.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, "fake: input must be strings")
				return
			}
			inputs = append(inputs, s)
		}
	default:
		writeError(w, http.StatusBadRequest, "fake: input is required")
		return
	}
	e.mu.Lock()
	e.requests = append(e.requests, EmbedRequest{req.Model, inputs, r.Header.Get("Authorization")})
	syn := e.synonyms
	fail := e.failNext > 0
	if fail {
		e.failNext--
	}
	e.mu.Unlock()
	if fail {
		writeError(w, http.StatusInternalServerError, "fake: scripted failure")
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "you must provide a model parameter")
		return
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	data := make([]item, len(inputs))
	tokens := 0
	for i, s := range inputs {
		data[i] = item{"embedding", i, Vector(replaceWords(s, syn), e.dims)}
		tokens += len(strings.Fields(s))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data":   data,
		"model":  req.Model,
		"usage":  map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

func replaceWords(s string, syn map[string]string) string {
	if len(syn) == 0 {
		return s
	}
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i, w := range ws {
		if to, ok := syn[w]; ok {
			ws[i] = to
		}
	}
	return strings.Join(ws, " ")
}
