package mcpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
)

// A pre-encoded answer (readmodel.go) still cost two passes of
// encoding/json over its whole wire form on every call: encoding/json
// checks and compacts what a MarshalJSON returns, once when mcp-go encodes
// the tool result and again when it encodes the JSON-RPC envelope around
// it. For list_agents that was over 40% of the server's CPU under load.
//
// So over HTTP the result carries a short placeholder instead, a JSON
// string of this process's random nonce and a number, and the response
// writer puts the answer's wire form in its place as the encoded envelope
// goes out. mcp-go still does everything else (sessions, protocol
// versions, the envelope, event streams); only the bytes of the answer are
// not walked again. The nonce never leaves the process, so no text a
// client or an agent wrote can be taken for a placeholder.

// spliceNonce marks this process's placeholders.
var spliceNonce = func() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

type spliceKey struct{}

// splicer is one request's response writer: it replaces each placeholder
// its tool handlers held by the wire form it stands for.
type splicer struct {
	http.ResponseWriter
	mu   sync.Mutex
	held map[string][]byte // placeholder, quotes included → wire form
}

// withSplicer returns rw replacing placeholders, and ctx carrying it for
// the tool handlers. rw stays a Flusher when it was one: mcp-go streams an
// answer only where it can.
func withSplicer(ctx context.Context, rw http.ResponseWriter) (context.Context, http.ResponseWriter) {
	s := &splicer{ResponseWriter: rw}
	ctx = context.WithValue(ctx, spliceKey{}, s)
	if f, ok := rw.(http.Flusher); ok {
		return ctx, &flushingSplicer{s, f}
	}
	return ctx, s
}

type flushingSplicer struct {
	*splicer
	http.Flusher
}

// hold returns the placeholder to encode instead of wire, or wire itself
// when ctx has no splicer (a call in process).
func hold(ctx context.Context, wire []byte) []byte {
	s, _ := ctx.Value(spliceKey{}).(*splicer)
	if s == nil {
		return wire
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held == nil {
		s.held = map[string][]byte{}
	}
	ph := `"rerun-answer-` + spliceNonce + "-" + strconv.Itoa(len(s.held)) + `"`
	s.held[ph] = wire
	return []byte(ph)
}

// Write writes p with the placeholders in it replaced. encoding/json
// writes a whole envelope in one Write (and an event stream's message is
// one too), so a placeholder is never split between two.
func (s *splicer) Write(p []byte) (int, error) {
	s.mu.Lock()
	held := len(s.held)
	s.mu.Unlock()
	if held == 0 {
		return s.ResponseWriter.Write(p)
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.Index(rest, []byte(`"rerun-answer-`+spliceNonce+"-"))
		if i < 0 {
			break
		}
		end := bytes.IndexByte(rest[i+1:], '"')
		if end < 0 {
			break
		}
		ph := rest[i : i+end+2]
		s.mu.Lock()
		wire, ok := s.held[string(ph)]
		s.mu.Unlock()
		if !ok {
			break
		}
		if _, err := s.ResponseWriter.Write(rest[:i]); err != nil {
			return 0, err
		}
		if _, err := s.ResponseWriter.Write(wire); err != nil {
			return 0, err
		}
		rest = rest[i+len(ph):]
	}
	if _, err := s.ResponseWriter.Write(rest); err != nil {
		return 0, err
	}
	return len(p), nil
}
