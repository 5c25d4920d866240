// Package trigger owns an agent's webhook triggers: a URL /hooks/{token}
// that starts a run in the trigger's own session, with the caller's payload
// handed to the agent beside the trigger's instruction.
//
// The token is the credential: "rrh_" and 52 base32 characters (256 random
// bits). Only its SHA-256 is stored; Create and Rotate return it once, and
// logs and lists show its first 10 characters (TokenPrefix), never the token
// or the URL. Rotate ends the old token at once, or after a grace period.
//
// The intake (Handler, mounted by the caller at /hooks/) answers:
//
//	202 {"run_id", "delivery_id"}  the run is durably queued (not finished)
//	200 {…, "duplicate": true}      a webhook-id / Idempotency-Key seen in the last 24 h: no second run
//	404 unknown or rotated-out token    405 method not allowed (Allow lists them)
//	413 body over 1 MiB                 401 Standard Webhooks signature missing, wrong or outside ±5 min
//	429 over the trigger's rate limit (Retry-After)    503 trigger paused
//
// Each call that reaches a trigger is recorded as a delivery (rejections
// too, 429s at most once a minute), shown in the Automations tab.
//
// A call's delivery row and its run are written in one transaction
// (Runs.StartManyTx), shared with the calls that arrive while the previous
// commit is under way (group.go): the intake costs a fraction of an fsync a
// call, and a 202 always means both are on disk. The calls of a busy
// trigger find it in a cache of lookups (cache.go), checked against the
// trigger's row inside that transaction.
//
// Queuing a run goes through the Runs interface, so the package does not
// depend on package run. The wiring adapts *run.Service as package
// schedule's doc shows, with run.SourceTrigger as the session kind and
// source, and StartManyTx over run's StartManyTx. Secrets is the workspace's variables (*secret.Variables has
// the Lookup method). The service API maps onto the MCP tools
// (list_triggers → List, upsert_trigger → Create or Update, test_trigger →
// Test, rotate_trigger_token → Rotate, delete_trigger → Delete). The
// service does not know the local port: the URL shown once after Create or
// Rotate is http://127.0.0.1:<port>/hooks/<token>; a server with several
// workspaces asks each one's Owns which of them a token belongs to. Serve
// settles deliveries left without a run and prunes old ones; run it beside
// the app.
package trigger

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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

// PathPrefix is where the local server takes trigger calls:
// PathPrefix + token is a trigger's path.
const PathPrefix = "/hooks/"

// tokenPrefix starts every token, so a leaked one is recognisable.
const tokenPrefix = "rrh_"

// shownPrefix is how many characters of a token are kept to recognise it.
const shownPrefix = len(tokenPrefix) + 6

// Limits on what a trigger holds.
const (
	MaxNameLen        = 80
	MaxInstructionLen = 16 << 10
	DefaultRateLimit  = 60      // calls per minute
	MaxRateLimit      = 1000000 // calls per minute: a busy shop's webhooks, with room
	MaxGrace          = 7 * 24 * time.Hour
)

// methods a trigger may accept.
var knownMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// Trigger is one webhook trigger of an agent.
type Trigger struct {
	ID          string   `json:"id"`
	AgentID     string   `json:"agent_id"`
	SessionID   string   `json:"session_id"`
	Name        string   `json:"name"`
	Instruction string   `json:"instruction"`
	Methods     []string `json:"methods"`
	// TokenPrefix is the current token's first characters ("rrh_ab12cd").
	TokenPrefix string `json:"token_prefix"`
	// SigningSecretVar names the variable holding the Standard Webhooks
	// secret ("whsec_…" or raw); "" accepts unsigned calls.
	SigningSecretVar string `json:"signing_secret_var"`
	Enabled          bool   `json:"enabled"`
	RateLimit        int    `json:"rate_limit"` // calls per minute
	// OldTokenExpiresAt is set while a rotated-out token still works.
	OldTokenExpiresAt *time.Time `json:"old_token_expires_at"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	RotatedAt         *time.Time `json:"rotated_at"`
}

// NewTrigger is what it takes to create a trigger. Methods nil means POST;
// RateLimit 0 means 60 a minute; Enabled nil means enabled.
type NewTrigger struct {
	AgentID          string   `json:"agent_id"`
	Name             string   `json:"name"`
	Instruction      string   `json:"instruction"`
	Methods          []string `json:"methods"`
	SigningSecretVar string   `json:"signing_secret_var"`
	Enabled          *bool    `json:"enabled"`
	RateLimit        int      `json:"rate_limit"`
}

// Update changes the fields that are not nil.
type Update struct {
	Name             *string   `json:"name"`
	Instruction      *string   `json:"instruction"`
	Methods          *[]string `json:"methods"`
	SigningSecretVar *string   `json:"signing_secret_var"`
	Enabled          *bool     `json:"enabled"`
	RateLimit        *int      `json:"rate_limit"`
}

// Runs queues the runs triggers start (schedule.Runs with StartManyTx for
// its StartTx: the calls that share a commit queue their runs together).
type Runs interface {
	// NewSession opens a trigger's own session with agentID.
	NewSession(ctx context.Context, agentID string) (sessionID string, err error)
	// StartManyTx durably queues a run for each of inputs, in order, in
	// sessionID inside tx, the caller's transaction, and returns their
	// ids without waiting for them. A fault error (wrong session or any
	// input) is returned before anything is written; any other error
	// fails tx.
	StartManyTx(ctx context.Context, tx *sql.Tx, agentID, sessionID, from string, inputs []string) (runIDs []string, err error)
	// Started hands a run StartManyTx queued to the workers, once its
	// transaction has committed.
	Started(agentID, sessionID, runID string)
	// Find returns the run of sessionID whose input contains marker (a
	// delivery id), or "": it settles a delivery recorded without its run.
	Find(ctx context.Context, sessionID, marker string) (runID string, err error)
}

// Secrets reads workspace variables (the signing secrets).
type Secrets interface {
	Lookup(name string) (value string, ok bool)
}

// Deps is what the service is wired with.
type Deps struct {
	DB        *store.DB
	Workspace string
	Runs      Runs
	Secrets   Secrets      // nil: no variables, so no signed triggers
	Bus       *event.Bus   // nil: no change events
	Logger    *slog.Logger // nil: discard
}

// Config tunes the service. Zero values take the defaults.
type Config struct {
	Now     func() time.Time // default time.Now
	MaxBody int64            // bytes of a call's body (default 1 MiB)
	// IdempotencyWindow is how long a webhook-id / Idempotency-Key is
	// remembered (default 24 h).
	IdempotencyWindow time.Duration
	// SignatureTolerance is how far a signed call's timestamp may be from
	// now (default 5 min).
	SignatureTolerance time.Duration
	// ClaimTimeout is how long a recorded delivery may wait for its run id
	// before it is settled as interrupted (default 2 min).
	ClaimTimeout time.Duration
	// Retention is how long deliveries are kept (default 30 days).
	Retention time.Duration
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 1 << 20
	}
	if c.IdempotencyWindow <= 0 {
		c.IdempotencyWindow = 24 * time.Hour
	}
	if c.SignatureTolerance <= 0 {
		c.SignatureTolerance = 5 * time.Minute
	}
	if c.ClaimTimeout <= 0 {
		c.ClaimTimeout = 2 * time.Minute
	}
	if c.Retention <= 0 {
		c.Retention = 30 * 24 * time.Hour
	}
	return c
}

// Service manages the triggers of one workspace and takes their calls.
type Service struct {
	db        *store.DB
	workspace string
	runs      Runs
	secrets   Secrets
	bus       *event.Bus
	log       *slog.Logger
	cfg       Config

	limits limiter
	found  cache                      // recent lookups of tokens (cache.go)
	writes group                      // shared commits of the intake's writes
	stmts  func() (statements, error) // prepared on first use
	mux    *http.ServeMux

	mu sync.Mutex
	// inflight holds the deliveries left without a run that this process
	// is settling, closed when done: a repeated key waits for it instead
	// of starting a second run.
	inflight map[string]chan struct{}
}

// NewService returns the trigger service.
func NewService(d Deps, cfg Config) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Service{db: d.DB, workspace: d.Workspace, runs: d.Runs, secrets: d.Secrets, bus: d.Bus, log: log,
		cfg: cfg.withDefaults(), limits: limiter{buckets: map[string]*bucket{}},
		stmts: sync.OnceValues(func() (statements, error) { return prepare(d.DB) }),
		mux:   http.NewServeMux(), inflight: map[string]chan struct{}{}}
	s.writes = group{db: d.DB, accept: s.acceptAll}
	s.mux.HandleFunc(PathPrefix+"{token}", s.Intake)
	return s
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

func (s *Service) publish(kind string, t Trigger) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: t.ID, Agent: t.AgentID, Session: t.SessionID})
	}
}

// hash is how a token is stored and looked up.
func hash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newToken returns a fresh token: 256 random bits.
func newToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return tokenPrefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// Shown is what logs may print of a presented token: its first characters.
func Shown(token string) string {
	if len(token) > shownPrefix {
		return token[:shownPrefix] + "…"
	}
	return token
}

// columns reads a trigger, with the expiry of a rotated-out token that
// still works.
const columns = `t.id, t.agent_id, t.session_id, t.name, t.instruction, t.methods, t.token_prefix, t.signing_secret_var,
	t.enabled, t.rate_limit, t.created_at, t.updated_at, t.rotated_at,
	(SELECT max(expires_at) FROM trigger_tokens k WHERE k.trigger_id = t.id AND k.expires_at > ?)`

// scan reads a row of columns, and of extra columns after them into extra.
func scan(row store.Scanner, extra ...any) (Trigger, error) {
	var t Trigger
	var methods, created, updated string
	var rotated, oldExpires sql.NullString
	err := row.Scan(append([]any{&t.ID, &t.AgentID, &t.SessionID, &t.Name, &t.Instruction, &methods, &t.TokenPrefix, &t.SigningSecretVar,
		&t.Enabled, &t.RateLimit, &created, &updated, &rotated, &oldExpires}, extra...)...)
	if err != nil {
		return Trigger{}, err
	}
	if err := json.Unmarshal([]byte(methods), &t.Methods); err != nil {
		return Trigger{}, fmt.Errorf("read methods of trigger %s: %w", t.ID, err)
	}
	t.CreatedAt, t.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	t.RotatedAt, t.OldTokenExpiresAt = optTime(rotated), optTime(oldExpires)
	return t, nil
}

func optTime(v sql.NullString) *time.Time {
	if !v.Valid {
		return nil
	}
	t := store.ParseTime(v.String)
	return &t
}

// Get returns one trigger.
func (s *Service) Get(ctx context.Context, id string) (Trigger, error) {
	t, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM triggers t WHERE t.id = ?`, store.FormatTime(s.now()), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Trigger{}, fault.NotFound("no trigger with id %q", id)
	}
	if err != nil {
		return Trigger{}, fmt.Errorf("get trigger %q: %w", id, err)
	}
	return t, nil
}

// List returns an agent's triggers, oldest first; agentID "" lists all.
func (s *Service) List(ctx context.Context, agentID string) ([]Trigger, error) {
	q, args := `SELECT `+columns+` FROM triggers t`, []any{store.FormatTime(s.now())}
	if agentID != "" {
		q, args = q+` WHERE t.agent_id = ?`, append(args, agentID)
	}
	list, err := store.Query(ctx, s.db, func(r store.Scanner) (Trigger, error) { return scan(r) }, q+` ORDER BY t.created_at, t.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list triggers: %w", err)
	}
	return list, nil
}

// check validates t in place (trimmed, methods upper-cased, defaults set).
func (s *Service) check(t *Trigger) error {
	t.Name = strings.TrimSpace(t.Name)
	t.Instruction = strings.TrimSpace(t.Instruction)
	switch {
	case t.Name == "":
		return fault.Invalid(`a trigger needs a name, e.g. "New Stripe payment"`)
	case utf8.RuneCountInString(t.Name) > MaxNameLen:
		return fault.Invalid("the name is too long; keep it to %d characters", MaxNameLen)
	case strings.IndexFunc(t.Name, unicode.IsControl) >= 0:
		return fault.Invalid("the name contains a control character; use plain text")
	case t.Instruction == "":
		return fault.Invalid(`a trigger needs an instruction: what the agent does with a call, e.g. "Add the new customer to the CRM"`)
	case len(t.Instruction) > MaxInstructionLen:
		return fault.Invalid("the instruction is too long; keep it under %d KiB", MaxInstructionLen>>10)
	}
	if len(t.Methods) == 0 {
		t.Methods = []string{"POST"}
	}
	var methods []string
	for _, m := range t.Methods {
		m = strings.ToUpper(strings.TrimSpace(m))
		if !slices.Contains(knownMethods, m) {
			return fault.Invalid("method %q is not one a trigger accepts; use some of %s", m, strings.Join(knownMethods, ", "))
		}
		if !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	t.Methods = methods
	switch {
	case t.RateLimit == 0:
		t.RateLimit = DefaultRateLimit
	case t.RateLimit < 0 || t.RateLimit > MaxRateLimit:
		return fault.Invalid("rate_limit is calls per minute, between 1 and %d", MaxRateLimit)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(t.SigningSecretVar), "${"), "}")
	t.SigningSecretVar = v
	if v == "" {
		return nil
	}
	if !validVarName(v) {
		return fault.Invalid("signing_secret_var %q is not a variable name: capital letters, digits and _, starting with a letter", v)
	}
	if s.secrets == nil {
		return fault.Invalid("this workspace has no variables to hold a signing secret")
	}
	if _, ok := s.secrets.Lookup(v); !ok {
		return fault.Invalid("variable %s is not set; add the signing secret (whsec_…) in Variables first", v)
	}
	return nil
}

// validVarName is the workspace's rule for variable names: ^[A-Z][A-Z0-9_]{0,63}$.
func validVarName(name string) bool {
	if name == "" || len(name) > 64 || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	return strings.IndexFunc(name, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') }) < 0
}

// Create adds a trigger to an agent, with its own session, and returns its
// token: the only time it is available.
func (s *Service) Create(ctx context.Context, in NewTrigger) (string, Trigger, error) {
	now := s.now()
	t := Trigger{ID: store.NewID("trg"), AgentID: strings.TrimSpace(in.AgentID), Name: in.Name, Instruction: in.Instruction,
		Methods: in.Methods, SigningSecretVar: in.SigningSecretVar, Enabled: in.Enabled == nil || *in.Enabled,
		RateLimit: in.RateLimit, CreatedAt: now, UpdatedAt: now}
	if t.AgentID == "" {
		return "", Trigger{}, fault.Invalid("a trigger belongs to an agent; give its agent_id")
	}
	if err := s.check(&t); err != nil {
		return "", Trigger{}, err
	}
	var builtin string
	if err := s.db.QueryRowContext(ctx, `SELECT builtin FROM agents WHERE id = ?`, t.AgentID).Scan(&builtin); err == nil && builtin != "" {
		return "", Trigger{}, fault.Invalid("the built-in @%s takes no webhooks: a call from outside would drive an agent that manages the workspace. Put the trigger on a coworker", builtin)
	}
	var err error
	// The session comes first: the trigger row names it. A failed insert
	// leaves an empty session behind, which is harmless.
	if t.SessionID, err = s.runs.NewSession(ctx, t.AgentID); err != nil {
		return "", Trigger{}, fmt.Errorf("open the trigger's session: %w", err)
	}
	token := newToken()
	t.TokenPrefix = token[:shownPrefix]
	methods, _ := json.Marshal(t.Methods)
	ts := store.FormatTime(now)
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO triggers (id, agent_id, session_id, name, instruction, methods, token_prefix,
			signing_secret_var, enabled, rate_limit, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.AgentID, t.SessionID, t.Name, t.Instruction, string(methods), t.TokenPrefix, t.SigningSecretVar,
			t.Enabled, t.RateLimit, ts, ts); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO trigger_tokens (hash, trigger_id, prefix, created_at) VALUES (?, ?, ?, ?)`,
			hash(token), t.ID, t.TokenPrefix, ts)
		return err
	})
	if err != nil {
		return "", Trigger{}, fmt.Errorf("create trigger: %w", err)
	}
	s.log.Info("trigger created", "trigger", t.ID, "token", t.TokenPrefix)
	s.publish("trigger.created", t)
	return token, t, nil
}

// Update changes a trigger's settings; its token stays.
func (s *Service) Update(ctx context.Context, id string, u Update) (Trigger, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return Trigger{}, err
	}
	set(&t.Name, u.Name)
	set(&t.Instruction, u.Instruction)
	set(&t.Methods, u.Methods)
	set(&t.SigningSecretVar, u.SigningSecretVar)
	set(&t.Enabled, u.Enabled)
	set(&t.RateLimit, u.RateLimit)
	if err := s.check(&t); err != nil {
		return Trigger{}, err
	}
	t.UpdatedAt = s.now()
	methods, _ := json.Marshal(t.Methods)
	res, err := s.db.ExecContext(ctx, `UPDATE triggers SET name = ?, instruction = ?, methods = ?, signing_secret_var = ?, enabled = ?,
		rate_limit = ?, updated_at = ? WHERE id = ?`, t.Name, t.Instruction, string(methods), t.SigningSecretVar, t.Enabled,
		t.RateLimit, store.FormatTime(t.UpdatedAt), id)
	if err != nil {
		return Trigger{}, fmt.Errorf("update trigger %q: %w", id, err)
	}
	s.found.clear()
	if n, _ := res.RowsAffected(); n == 0 {
		return Trigger{}, fault.NotFound("no trigger with id %q", id)
	}
	s.publish("trigger.updated", t)
	return t, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// SetEnabled pauses or resumes a trigger. A paused trigger answers 503.
func (s *Service) SetEnabled(ctx context.Context, id string, enabled bool) (Trigger, error) {
	return s.Update(ctx, id, Update{Enabled: &enabled})
}

// Delete removes a trigger, its tokens and deliveries. Its session and runs
// stay.
func (s *Service) Delete(ctx context.Context, id string) error {
	t, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM triggers WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete trigger %q: %w", id, err)
	}
	s.found.clear()
	s.log.Info("trigger deleted", "trigger", id, "token", t.TokenPrefix)
	s.publish("trigger.deleted", t)
	return nil
}

// Rotate gives a trigger a new token and returns it (the only time it is
// available). The old token stops working at once when grace is 0, else
// when grace has passed (at most 7 days); tokens rotated out before keep
// their own end.
func (s *Service) Rotate(ctx context.Context, id string, grace time.Duration) (string, Trigger, error) {
	if grace < 0 || grace > MaxGrace {
		return "", Trigger{}, fault.Invalid("the grace period is between 0 (the old URL stops at once) and %s", MaxGrace)
	}
	now := s.now()
	token := newToken()
	prefix := token[:shownPrefix]
	ts := store.FormatTime(now)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE triggers SET token_prefix = ?, rotated_at = ?, updated_at = ? WHERE id = ?`, prefix, ts, ts, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fault.NotFound("no trigger with id %q", id)
		}
		if grace == 0 {
			_, err = tx.ExecContext(ctx, `DELETE FROM trigger_tokens WHERE trigger_id = ? AND expires_at IS NULL`, id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE trigger_tokens SET expires_at = ? WHERE trigger_id = ? AND expires_at IS NULL`,
				store.FormatTime(now.Add(grace)), id)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO trigger_tokens (hash, trigger_id, prefix, created_at) VALUES (?, ?, ?, ?)`,
			hash(token), id, prefix, ts)
		return err
	})
	if err != nil {
		return "", Trigger{}, fmt.Errorf("rotate the token of trigger %q: %w", id, err)
	}
	s.found.clear()
	t, err := s.Get(ctx, id)
	if err != nil {
		return "", Trigger{}, err
	}
	s.log.Info("trigger token rotated", "trigger", id, "token", prefix, "grace", grace)
	s.publish("trigger.updated", t)
	return token, t, nil
}

// lookup finds the trigger a presented token opens, if it is live.
func (s *Service) lookup(ctx context.Context, token string, now time.Time) (Trigger, bool, error) {
	if !strings.HasPrefix(token, tokenPrefix) || len(token) > 200 {
		return Trigger{}, false, nil
	}
	t, ok, err := s.lookupHash(ctx, hash(token), now)
	if err != nil {
		return Trigger{}, false, fmt.Errorf("look up trigger token %s: %w", Shown(token), err)
	}
	return t, ok, nil
}

// lookupHash finds the trigger whose live token has SHA-256 h (hex): in
// the cache while it is fresh, else in the database.
func (s *Service) lookupHash(ctx context.Context, h string, now time.Time) (Trigger, bool, error) {
	t, ok, gen := s.found.get(h, now)
	if ok {
		return t, true, nil
	}
	st, err := s.stmts()
	if err != nil {
		return Trigger{}, false, err
	}
	ts := store.FormatTime(now)
	var expires sql.NullString
	t, err = scan(st.lookup.QueryRowContext(ctx, ts, h, ts), &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Trigger{}, false, nil
	}
	if err != nil {
		return Trigger{}, false, err
	}
	s.found.put(h, t, optTime(expires), now, gen)
	return t, true, nil
}

// Owns reports whether token opens a live trigger of this workspace. A
// server with several workspaces asks each in turn which one's Handler
// takes a call; the lookup is cached, so the Handler finds it again at no
// cost.
func (s *Service) Owns(ctx context.Context, token string) (bool, error) {
	_, ok, err := s.lookup(ctx, token, s.now())
	return ok, err
}

// SharedWith lists the triggers of s that a live token of other's triggers
// also opens. A workspace restored beside its original holds the same
// tokens (only their hashes are stored), so each webhook would reach
// whichever workspace was asked first; the copy rotates those.
func (s *Service) SharedWith(ctx context.Context, other *Service) ([]string, error) {
	now := store.FormatTime(s.now())
	const live = `SELECT hash, trigger_id FROM trigger_tokens WHERE expires_at IS NULL OR expires_at > ?`
	scan := func(sc store.Scanner) ([2]string, error) {
		var v [2]string
		err := sc.Scan(&v[0], &v[1])
		return v, err
	}
	theirs, err := store.Query(ctx, other.db, scan, live, now)
	if err != nil {
		return nil, fmt.Errorf("read trigger tokens: %w", err)
	}
	mine, err := store.Query(ctx, s.db, scan, live, now)
	if err != nil {
		return nil, fmt.Errorf("read trigger tokens: %w", err)
	}
	held := map[string]bool{}
	for _, v := range theirs {
		held[v[0]] = true
	}
	var shared []string
	for _, v := range mine {
		if held[v[0]] && !slices.Contains(shared, v[1]) {
			shared = append(shared, v[1])
		}
	}
	return shared, nil
}

// CountByAgent returns how many triggers each agent has (agents without any
// are left out).
func (s *Service) CountByAgent(ctx context.Context) (map[string]int, error) {
	return s.countByAgent(ctx, `SELECT agent_id, count(*) FROM triggers GROUP BY agent_id`)
}

// PausedByAgent returns how many of each agent's triggers are paused (agents
// without a paused one are left out): the board draws those badges muted.
func (s *Service) PausedByAgent(ctx context.Context) (map[string]int, error) {
	return s.countByAgent(ctx, `SELECT agent_id, count(*) FROM triggers WHERE enabled = 0 GROUP BY agent_id`)
}

func (s *Service) countByAgent(ctx context.Context, query string) (map[string]int, error) {
	out := map[string]int{}
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("count triggers: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var agent string
		var n int
		if err := rows.Scan(&agent, &n); err != nil {
			return nil, fmt.Errorf("count triggers: %w", err)
		}
		out[agent] = n
	}
	return out, rows.Err()
}
