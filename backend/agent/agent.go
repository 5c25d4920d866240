// Package agent owns the agents (coworkers) of a workspace: their identity,
// handle, soul with its history, model, capabilities, the box they sit on, and
// their private folder and database on disk.
package agent

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Limits on what an agent's fields may hold.
const (
	MaxNameLen  = 80
	MaxSoulLen  = 64 << 10 // bytes of markdown
	MaxModelLen = 200
)

// Agent is one coworker.
type Agent struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Handle       string   `json:"handle"`
	BoxID        string   `json:"box_id"`
	Soul         string   `json:"soul"`
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`
	Capabilities []string `json:"capabilities"`
	AskFirst     AskFirst `json:"ask_first"`
	// Network says whether the agent's commands and its apps' stdio
	// servers may use the network (on by default; off, the sandbox
	// refuses their TCP connections).
	Network bool `json:"network"`
	// Builtin names the built-in agent this is (BuiltinRerun…), "" for the
	// person's own agents. A built-in agent cannot be deleted, renamed or
	// moved; its soul and model can be changed.
	Builtin   string    `json:"builtin"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SoulVersion is one saved version of an agent's soul.
type SoulVersion struct {
	Version int    `json:"version"`
	Body    string `json:"body"`
	// Author is who wrote it: SoulByPerson, SoulByAgent, SoulByAPI, or ""
	// (the soul the agent was created with, or a version older than authors).
	Author    string    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// Who wrote a soul version.
const (
	SoulByPerson = "person"
	SoulByAgent  = "agent"
	SoulByAPI    = "api"
)

// NewAgent is what it takes to create an agent. Handle is derived from Name
// when empty; Capabilities nil means the defaults.
type NewAgent struct {
	Name         string   `json:"name"`
	BoxID        string   `json:"box_id"`
	Handle       string   `json:"handle"`
	Soul         string   `json:"soul"`
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`
	Capabilities []string `json:"capabilities"`
	// AskFirst changes the named families' switches from the defaults.
	AskFirst map[string]bool `json:"ask_first"`
}

// Update changes the fields that are not nil. The handle is not among them: it
// never changes.
type Update struct {
	Name         *string   `json:"name"`
	Soul         *string   `json:"soul"`
	Provider     *string   `json:"provider"`
	Model        *string   `json:"model"`
	Capabilities *[]string `json:"capabilities"`
	BoxID        *string   `json:"box_id"`
	// AskFirst changes the named families' switches; the others keep theirs.
	AskFirst map[string]bool `json:"ask_first"`
	// Network switches the network of the agent's commands on or off.
	Network *bool `json:"network"`
	// SoulAuthor is who wrote a new Soul (SoulBy…); "" means SoulByPerson,
	// the app's own edits. Never read from a request body.
	SoulAuthor string `json:"-"`
}

// Service reads and changes the agents of one workspace.
type Service struct {
	db        *store.DB
	dir       string // the workspace's agents/ folder
	workspace string
	bus       *event.Bus
}

// NewService returns the agent service of the workspace whose database is db
// and whose agents' private folders live under dir.
func NewService(db *store.DB, dir, workspaceID string, bus *event.Bus) *Service {
	return &Service{db: db, dir: dir, workspace: workspaceID, bus: bus}
}

func (s *Service) publish(kind, id string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: id})
	}
}

// Dir is the agent's private folder (files/, skills/, agent.db, …).
func (s *Service) Dir(id string) string { return filepath.Join(s.dir, id) }

func cleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fault.Invalid("an agent needs a name")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", fault.Invalid("agent name is %d characters; keep it to %d", utf8.RuneCountInString(name), MaxNameLen)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", fault.Invalid("agent name contains a control character; use plain text")
	}
	return name, nil
}

func checkSoul(soul string) error {
	if len(soul) > MaxSoulLen {
		return fault.Invalid("soul is %d bytes; keep it under %d", len(soul), MaxSoulLen)
	}
	if !utf8.ValidString(soul) {
		return fault.Invalid("soul is not valid UTF-8 text")
	}
	return nil
}

func checkModel(provider, model string) error {
	if len(provider) > MaxModelLen || len(model) > MaxModelLen {
		return fault.Invalid("provider and model are limited to %d characters", MaxModelLen)
	}
	if strings.IndexFunc(provider+model, unicode.IsControl) >= 0 {
		return fault.Invalid("provider and model must be plain text")
	}
	return nil
}

const agentColumns = `a.id, a.name, a.handle, a.box_id, a.provider, a.model, a.capabilities, a.network, a.builtin, a.created_at, a.updated_at`

// selectAgent reads agentColumns, the ask-first policy and the soul.
const selectAgent = `SELECT ` + agentColumns + `, a.ask_first,
	coalesce((SELECT body FROM souls WHERE agent_id = a.id ORDER BY version DESC LIMIT 1), '')
	FROM agents a`

func scan(row store.Scanner) (Agent, error) { return scanAgent(row, true) }

// scanAgent reads a row of agentColumns, followed by the ask-first policy
// and the soul when full.
func scanAgent(row store.Scanner, full bool) (Agent, error) {
	var a Agent
	var caps, askFirst, created, updated string
	dest := []any{&a.ID, &a.Name, &a.Handle, &a.BoxID, &a.Provider, &a.Model, &caps, &a.Network, &a.Builtin, &created, &updated, &askFirst, &a.Soul}
	if !full {
		dest = dest[:len(dest)-2]
	}
	if err := row.Scan(dest...); err != nil {
		return a, err
	}
	c, err := capabilitiesMemo.get(caps, func(s string) (out []string, err error) {
		return out, json.Unmarshal([]byte(s), &out)
	})
	if err != nil {
		return a, fmt.Errorf("agent %s capabilities: %w", a.ID, err)
	}
	a.Capabilities = slices.Clone(c)
	a.CreatedAt, a.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	if !full {
		return a, nil
	}
	p, err := askFirstMemo.get(askFirst, func(s string) (AskFirst, error) {
		if s == "" {
			return DefaultAskFirst(), nil
		}
		var saved map[string]bool
		if err := json.Unmarshal([]byte(s), &saved); err != nil {
			return nil, err
		}
		return AskFirst(saved).merge(nil)
	})
	if err != nil {
		return a, fmt.Errorf("agent %s ask-first policy: %w", a.ID, err)
	}
	a.AskFirst = maps.Clone(p)
	return a, nil
}

// memo keeps what the JSON columns decode to, by their text: most agents
// share their capabilities and ask-first policy, so a list of agents would
// decode the same few texts again on every row. Callers get the shared
// value and copy it before handing it out.
type memo[T any] struct {
	mu   sync.Mutex
	seen map[string]T
}

var (
	capabilitiesMemo memo[[]string]
	askFirstMemo     memo[AskFirst]
)

func (m *memo[T]) get(text string, decode func(string) (T, error)) (T, error) {
	m.mu.Lock()
	v, ok := m.seen[text]
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := decode(text)
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	if m.seen == nil || len(m.seen) >= 256 { // a bound, not a cache policy: texts are few
		m.seen = map[string]T{}
	}
	m.seen[text] = v
	m.mu.Unlock()
	return v, nil
}

// List returns every agent, oldest first.
func (s *Service) List(ctx context.Context) ([]Agent, error) {
	agents, err := store.QueryPrepared(ctx, s.db, scan, selectAgent+` ORDER BY a.created_at, a.id`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return agents, nil
}

// Roster returns every agent as List does, but without its soul and
// ask-first policy (Soul is "", AskFirst nil): for lists that show
// neither, which are the costly part to read.
func (s *Service) Roster(ctx context.Context) ([]Agent, error) {
	agents, err := store.QueryPrepared(ctx, s.db, func(row store.Scanner) (Agent, error) { return scanAgent(row, false) },
		`SELECT `+agentColumns+` FROM agents a ORDER BY a.created_at, a.id`)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return agents, nil
}

// queryRow is QueryRowContext on query prepared once.
func (s *Service) queryRow(ctx context.Context, query string, args ...any) store.Scanner {
	st, err := s.db.Prepared(query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// Get returns one agent by id.
func (s *Service) Get(ctx context.Context, id string) (Agent, error) {
	a, err := scan(s.queryRow(ctx, selectAgent+` WHERE a.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fault.NotFound("no agent with id %q", id)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("get agent %q: %w", id, err)
	}
	return a, nil
}

// ByHandle returns one agent by its handle (with or without the leading '@').
func (s *Service) ByHandle(ctx context.Context, handle string) (Agent, error) {
	handle = strings.TrimPrefix(handle, "@")
	a, err := scan(s.queryRow(ctx, selectAgent+` WHERE a.handle = ?`, handle))
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fault.NotFound("no agent with handle @%s", handle)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("get agent @%s: %w", handle, err)
	}
	return a, nil
}

// SuggestHandle returns the handle a new agent called name would get: derived
// from the name, with a numeric suffix when that one is taken.
func (s *Service) SuggestHandle(ctx context.Context, name string) (string, error) {
	base := DeriveHandle(name)
	h := base
	for n := 2; ; n++ {
		var taken int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE handle = ?`, h).Scan(&taken); err != nil {
			return "", fmt.Errorf("suggest handle: %w", err)
		}
		if taken == 0 {
			return h, nil
		}
		h = withSuffix(base, n)
	}
}

func boxExists(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, id string) error {
	var system bool
	err := q.QueryRowContext(ctx, `SELECT system FROM boxes WHERE id = ?`, id).Scan(&system)
	if errors.Is(err, sql.ErrNoRows) {
		return fault.NotFound("no box with id %q; pick one of the workspace's boxes", id)
	}
	if err != nil {
		return err
	}
	if system {
		return fault.Invalid("the system box holds only Rerun's built-in agents; pick one of the workspace's boxes")
	}
	return nil
}

// Create adds an agent on a box, with its private folder and database.
func (s *Service) Create(ctx context.Context, in NewAgent) (Agent, error) {
	name, err := cleanName(in.Name)
	if err != nil {
		return Agent{}, err
	}
	if err := checkSoul(in.Soul); err != nil {
		return Agent{}, err
	}
	if err := checkModel(in.Provider, in.Model); err != nil {
		return Agent{}, err
	}
	caps := DefaultCapabilities()
	if in.Capabilities != nil {
		if caps, err = normalizeCapabilities(in.Capabilities); err != nil {
			return Agent{}, err
		}
	}
	askFirst, err := DefaultAskFirst().merge(in.AskFirst)
	if err != nil {
		return Agent{}, err
	}
	explicit := in.Handle != ""
	handle := strings.TrimPrefix(in.Handle, "@")
	if explicit {
		if err := ValidateHandle(handle); err != nil {
			return Agent{}, err
		}
	} else if handle, err = s.SuggestHandle(ctx, name); err != nil {
		return Agent{}, err
	}
	now := time.Now().UTC()
	a := Agent{
		ID: store.NewID("ag"), Name: name, Handle: handle, BoxID: in.BoxID, Soul: in.Soul,
		Provider: strings.TrimSpace(in.Provider), Model: strings.TrimSpace(in.Model),
		Capabilities: caps, AskFirst: askFirst, Network: true, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.makeDir(ctx, a.ID); err != nil {
		return Agent{}, err
	}
	capsJSON, _ := json.Marshal(a.Capabilities)
	askJSON, _ := json.Marshal(a.AskFirst)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if err := boxExists(ctx, tx, a.BoxID); err != nil {
			return err
		}
		var taken int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM agents WHERE handle = ?`, a.Handle).Scan(&taken); err != nil {
			return err
		}
		if taken > 0 {
			return fault.Conflict("handle @%s is already taken in this workspace; choose another", a.Handle)
		}
		ts := store.FormatTime(now)
		if _, err := tx.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, provider, model, capabilities, ask_first, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.ID, a.Name, a.Handle, a.BoxID, a.Provider, a.Model, string(capsJSON), string(askJSON), ts, ts); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO souls (agent_id, version, body, created_at) VALUES (?, 1, ?, ?)`, a.ID, a.Soul, ts)
		return err
	})
	if err != nil {
		os.RemoveAll(s.Dir(a.ID))
		return Agent{}, fmt.Errorf("create agent %q: %w", name, err)
	}
	s.publish("agent.created", a.ID)
	return a, nil
}

// makeDir lays out a new agent's private folder: files/, skills/ and an empty
// agent.db (its own database).
func (s *Service) makeDir(ctx context.Context, id string) error {
	dir := s.Dir(id)
	for _, sub := range []string{"files", "skills"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return fmt.Errorf("create agent folder: %w", err)
		}
	}
	db, err := store.Open(ctx, filepath.Join(dir, "agent.db"), nil)
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("create agent database: %w", err)
	}
	return db.Close()
}

// Update changes the given fields. A new soul is stored as a new version; the
// old ones are kept. Moving to another box changes nothing else.
func (s *Service) Update(ctx context.Context, id string, u Update) (Agent, error) {
	if u.Name != nil {
		name, err := cleanName(*u.Name)
		if err != nil {
			return Agent{}, err
		}
		u.Name = &name
	}
	if u.Soul != nil {
		if err := checkSoul(*u.Soul); err != nil {
			return Agent{}, err
		}
	}
	var capsJSON []byte
	if u.Capabilities != nil {
		caps, err := normalizeCapabilities(*u.Capabilities)
		if err != nil {
			return Agent{}, err
		}
		capsJSON, _ = json.Marshal(caps)
	}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := scan(tx.QueryRowContext(ctx, selectAgent+` WHERE a.id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fault.NotFound("no agent with id %q", id)
		}
		if err != nil {
			return err
		}
		if err := checkBuiltinUpdate(cur, u); err != nil {
			return err
		}
		provider, model := cur.Provider, cur.Model
		if u.Provider != nil {
			provider = strings.TrimSpace(*u.Provider)
		}
		if u.Model != nil {
			model = strings.TrimSpace(*u.Model)
		}
		if err := checkModel(provider, model); err != nil {
			return err
		}
		now := store.FormatTime(time.Now())
		set := []string{"provider = ?", "model = ?", "updated_at = ?"}
		args := []any{provider, model, now}
		if u.Name != nil {
			set, args = append(set, "name = ?"), append(args, *u.Name)
		}
		if capsJSON != nil {
			set, args = append(set, "capabilities = ?"), append(args, string(capsJSON))
		}
		if u.AskFirst != nil {
			policy, err := cur.AskFirst.merge(u.AskFirst)
			if err != nil {
				return err
			}
			b, _ := json.Marshal(policy)
			set, args = append(set, "ask_first = ?"), append(args, string(b))
		}
		if u.Network != nil {
			set, args = append(set, "network = ?"), append(args, *u.Network)
		}
		if u.BoxID != nil && *u.BoxID != cur.BoxID {
			if err := boxExists(ctx, tx, *u.BoxID); err != nil {
				return err
			}
			set, args = append(set, "box_id = ?"), append(args, *u.BoxID)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE agents SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
			return err
		}
		if u.Soul != nil && *u.Soul != cur.Soul {
			author := u.SoulAuthor
			if author == "" {
				author = SoulByPerson
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO souls (agent_id, version, body, author, created_at)
				SELECT ?, coalesce(max(version), 0) + 1, ?, ?, ? FROM souls WHERE agent_id = ?`, id, *u.Soul, author, now, id)
			return err
		}
		return nil
	})
	if err != nil {
		return Agent{}, fmt.Errorf("update agent %q: %w", id, err)
	}
	s.publish("agent.updated", id)
	return s.Get(ctx, id)
}

// Souls returns every version of the agent's soul, newest first.
func (s *Service) Souls(ctx context.Context, id string) ([]SoulVersion, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	souls, err := store.Query(ctx, s.db, func(row store.Scanner) (SoulVersion, error) {
		var v SoulVersion
		var created string
		err := row.Scan(&v.Version, &v.Body, &v.Author, &created)
		v.CreatedAt = store.ParseTime(created)
		return v, err
	}, `SELECT version, body, author, created_at FROM souls WHERE agent_id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("list souls of %q: %w", id, err)
	}
	return souls, nil
}

// Delete removes the agent, its soul history, and its private folder and
// database.
func (s *Service) Delete(ctx context.Context, id string) error {
	if a, err := s.Get(ctx, id); err == nil && a.Builtin != "" {
		return errBuiltin(a, "deleted")
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM agents WHERE id = ? AND builtin = ''`, id)
	if err != nil {
		return fmt.Errorf("delete agent %q: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.NotFound("no agent with id %q", id)
	}
	// The row is gone first: a folder left behind by a failed removal is
	// harmless, an agent row without its folder is not.
	if err := os.RemoveAll(s.Dir(id)); err != nil {
		return fmt.Errorf("delete agent %q folder: %w", id, err)
	}
	s.publish("agent.deleted", id)
	return nil
}
