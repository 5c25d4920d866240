// Package apikey owns the workspace's API keys: the credentials of the MCP
// endpoint. A key reaches exactly one workspace; only its SHA-256 is stored;
// it is shown once at creation. Keys are created and revoked on this computer
// only (the app and the `rerun key` command), never over the API.
package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// keyPrefix starts every key, so a leaked one is recognisable.
const keyPrefix = "rrk_"

// shownPrefix is how many characters of a key are kept to recognise it.
const shownPrefix = len(keyPrefix) + 6

// Key is a stored API key (never the key itself).
type Key struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"` // e.g. "rrk_ab12cd"
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	// ToolSet is which MCP tools the key's client is offered: ToolsFull
	// (the default) or ToolsCompact, for clients with small tool limits.
	ToolSet string `json:"tool_set"`
}

// The tool sets a key can offer.
const (
	ToolsFull    = "full"
	ToolsCompact = "compact"
)

// Service manages one workspace's keys.
type Service struct {
	db *store.DB

	mu       sync.Mutex
	touched  map[string]time.Time // last_used_at written at most once a minute per key
	watchers []func(Key)
	// live keeps the keys Authenticate found, by hash, so a client's every
	// call neither hashes against the stored keys nor reads their records.
	// Each answer from it still reads the key's row by id (revoked_at,
	// tool_set): a revoke, here or by `rerun key revoke` in another
	// process, refuses the very next call.
	live map[string]Key
}

// forget empties the Authenticate cache.
func (s *Service) forget() {
	s.mu.Lock()
	clear(s.live)
	s.mu.Unlock()
}

// NewService returns the key service of the workspace whose database is db.
func NewService(db *store.DB) *Service {
	return &Service{db: db, touched: map[string]time.Time{}, live: map[string]Key{}}
}

func hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func scan(row store.Scanner) (Key, error) {
	var k Key
	var created string
	var used, revoked sql.NullString
	err := row.Scan(&k.ID, &k.Name, &k.Prefix, &created, &used, &revoked, &k.ToolSet)
	k.CreatedAt = store.ParseTime(created)
	if used.Valid {
		t := store.ParseTime(used.String)
		k.LastUsedAt = &t
	}
	if revoked.Valid {
		t := store.ParseTime(revoked.String)
		k.RevokedAt = &t
	}
	return k, err
}

const columns = `id, name, prefix, created_at, last_used_at, revoked_at, tool_set`

// Create makes a key named name and returns it in full — the only time it is
// ever available — with its stored record.
func (s *Service) Create(ctx context.Context, name string) (string, Key, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", Key{}, fault.Invalid("an API key needs a name that says where it is used, e.g. \"Claude Code on my laptop\"")
	case utf8.RuneCountInString(name) > 80:
		return "", Key{}, fault.Invalid("key name is too long; keep it to 80 characters")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", Key{}, fault.Invalid("key name contains a control character; use plain text")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Key{}, err
	}
	plain := keyPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
	k := Key{ID: store.NewID("key"), Name: name, Prefix: plain[:shownPrefix], CreatedAt: time.Now().UTC(), ToolSet: ToolsFull}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO api_keys (id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)`,
		k.ID, k.Name, k.Prefix, hash(plain), store.FormatTime(k.CreatedAt)); err != nil {
		return "", Key{}, fmt.Errorf("create API key: %w", err)
	}
	return plain, k, nil
}

// List returns every key, newest first, revoked ones included.
func (s *Service) List(ctx context.Context) ([]Key, error) {
	keys, err := store.Query(ctx, s.db, scan, `SELECT `+columns+` FROM api_keys ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list API keys: %w", err)
	}
	return keys, nil
}

// Revoke stops a key from working, at once. The record stays, marked revoked.
func (s *Service) Revoke(ctx context.Context, id string) (Key, error) {
	defer s.forget() // besides, every cached answer reads the row again
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? OR prefix = ?`,
		store.FormatTime(time.Now()), id, id)
	if err != nil {
		return Key{}, fmt.Errorf("revoke API key: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Key{}, fault.NotFound("no API key %q; list them to see ids and prefixes", id)
	}
	k, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM api_keys WHERE id = ? OR prefix = ?`, id, id))
	return k, err
}

// SetToolSet changes which MCP tools key id (or its prefix) offers, and
// tells the watchers (the MCP endpoint tells the key's sessions).
func (s *Service) SetToolSet(ctx context.Context, id, set string) (Key, error) {
	if set != ToolsFull && set != ToolsCompact {
		return Key{}, fault.Invalid("tool_set is %q or %q, not %q", ToolsFull, ToolsCompact, set)
	}
	defer s.forget()
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET tool_set = ? WHERE (id = ? OR prefix = ?) AND revoked_at IS NULL`, set, id, id)
	if err != nil {
		return Key{}, fmt.Errorf("set the tool set of API key %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Key{}, fault.NotFound("no live API key %q; list them to see ids and prefixes", id)
	}
	k, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM api_keys WHERE id = ? OR prefix = ?`, id, id))
	if err != nil {
		return Key{}, fmt.Errorf("read API key %s: %w", id, err)
	}
	s.mu.Lock()
	watchers := slices.Clone(s.watchers)
	s.mu.Unlock()
	for _, f := range watchers {
		f(k)
	}
	return k, nil
}

// Watch calls f after each change of a key's tool set.
func (s *Service) Watch(f func(Key)) {
	s.mu.Lock()
	s.watchers = append(s.watchers, f)
	s.mu.Unlock()
}

// Authenticate reports which key plain is, if it is a live key of this
// workspace, and records its use.
func (s *Service) Authenticate(ctx context.Context, plain string) (Key, bool) {
	if len(plain) < shownPrefix || !strings.HasPrefix(plain, keyPrefix) {
		return Key{}, false
	}
	want := hash(plain)
	s.mu.Lock()
	k, ok := s.live[want]
	s.mu.Unlock()
	if ok {
		if !s.stillLive(ctx, &k) {
			s.mu.Lock()
			delete(s.live, want)
			s.mu.Unlock()
			return Key{}, false
		}
		s.touch(k.ID)
		return k, true
	}
	k, ok = s.lookup(ctx, plain[:shownPrefix], want)
	if !ok {
		return Key{}, false
	}
	s.mu.Lock()
	if len(s.live) >= 1000 {
		clear(s.live)
	}
	s.live[want] = k
	s.mu.Unlock()
	s.touch(k.ID)
	return k, true
}

// stillLive reads whether the cached key k is still not revoked, and its
// current tool set: one primary-key read of a prepared statement.
func (s *Service) stillLive(ctx context.Context, k *Key) bool {
	st, err := s.db.Prepared(`SELECT tool_set FROM api_keys WHERE id = ? AND revoked_at IS NULL`)
	if err != nil {
		return false
	}
	return st.QueryRowContext(ctx, k.ID).Scan(&k.ToolSet) == nil
}

// lookup finds the live key whose prefix is prefix and whose hash is want.
func (s *Service) lookup(ctx context.Context, prefix, want string) (Key, bool) {
	st, err := s.db.Prepared(`SELECT ` + columns + `, hash FROM api_keys WHERE prefix = ? AND revoked_at IS NULL`)
	if err != nil {
		return Key{}, false
	}
	rows, err := st.QueryContext(ctx, prefix)
	if err != nil {
		return Key{}, false
	}
	defer rows.Close()
	for rows.Next() {
		var k Key
		var created, stored string
		var used, revoked sql.NullString
		if err := rows.Scan(&k.ID, &k.Name, &k.Prefix, &created, &used, &revoked, &k.ToolSet, &stored); err != nil {
			return Key{}, false
		}
		if subtle.ConstantTimeCompare([]byte(stored), []byte(want)) == 1 {
			k.CreatedAt = store.ParseTime(created)
			return k, true
		}
	}
	return Key{}, false
}

// touch records a key's use, at most once a minute (not on every call).
func (s *Service) touch(id string) {
	now := time.Now()
	s.mu.Lock()
	last := s.touched[id]
	if now.Sub(last) < time.Minute {
		s.mu.Unlock()
		return
	}
	s.touched[id] = now
	s.mu.Unlock()
	// Best effort: a failed write only leaves the shown time a little old.
	s.db.Exec(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`, store.FormatTime(now), id)
}
