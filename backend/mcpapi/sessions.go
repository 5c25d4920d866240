package mcpapi

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
)

// sessions is the endpoint's mcp-go SessionIdManager: it mints the ids of
// the sessions clients open with initialize, remembers which API key opened
// each, and forgets one on DELETE. A request without a session id is valid:
// it is served on its own (a bare curl POST).
type sessions struct {
	mu   sync.Mutex
	live map[string]owner // session id → who opened it ("" key: not yet bound)
}

type owner struct{ key, workspace string }

func newSessions() *sessions { return &sessions{live: map[string]owner{}} }

func (s *sessions) Generate() string {
	var b [16]byte
	rand.Read(b[:])
	id := "mcp-session-" + hex.EncodeToString(b[:])
	s.mu.Lock()
	s.live[id] = owner{}
	s.mu.Unlock()
	return id
}

func (s *sessions) Validate(id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; !ok {
		return false, errors.New("unknown session")
	}
	return false, nil
}

func (s *sessions) Terminate(id string) (bool, error) {
	s.mu.Lock()
	delete(s.live, id)
	s.mu.Unlock()
	return false, nil
}

// bind makes session id the key's, once initialize has minted it.
func (s *sessions) bind(id, key, workspace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.live[id]; ok && o.key == "" {
		s.live[id] = owner{key, workspace}
	}
}

// owns reports whether session id is live and was opened with key.
func (s *sessions) owns(id, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.live[id]
	return ok && o.key == key
}

// ofKey lists the live sessions opened with key.
func (s *sessions) ofKey(key string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, o := range s.live {
		if o.key == key {
			ids = append(ids, id)
		}
	}
	return ids
}
