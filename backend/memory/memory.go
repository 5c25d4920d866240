// Package memory owns agents' memories: short durable facts an agent (or a
// person) writes down, recalled later by keywords (SQLite FTS5, BM25) and, when
// an embedding endpoint is configured, by meaning (vectors in chromem-go).
//
// # Fading
//
// A memory stores a strength s0 measured at a moment t0 (its creation or its
// last recall) and its recall count n. Its strength at time t is
//
//	s(t) = s0 · 2^(−(t − t0) / h(n)),   h(n) = HalfLife · (1 + n)
//
// so an unused memory halves every HalfLife (default 14 days), and each recall
// makes the next half-life longer. A recall at t reinforces it:
//
//	s0 ← min(1, s(t) + Boost),  t0 ← t,  n ← n + 1   (Boost default 0.3)
//
// New memories start at s0 = 1. Once s(t) < Floor (default 0.05) the memory is
// retired: still stored and listed, never recalled. A fresh memory that is
// never recalled retires after log2(1/0.05) ≈ 4.3 half-lives, about 60 days;
// one recalled once at full strength lasts 4.3 · 28 ≈ 121 days more. Strength
// is always computed from the stored values and Config.Now; Sweep writes the
// retired state down. Editing a memory (Update) restores full strength.
//
// # Correcting
//
// A memory is replaced only when it is the same fact with a changed value,
// and only on someone's word: the agent's (RememberOptions.Supersedes, the
// remember tool's `replaces`) or the person's (Correct… in the Memory tab).
// Word overlap or meaning similarity alone never deletes a fact: "Ana's
// phone is 555-0101" and "Ana's fax is 555-0199" share most words. When
// the new text is close to an active memory of the same agent — its words
// overlap by Jaccard ≥ SupersedeJaccard (default 0.6, stopwords and
// punctuation ignored) or, with embeddings, its cosine similarity is ≥
// SupersedeCosine (default 0.9) — both are kept and Remembered.Candidate
// names the older one, so the agent can say it meant a correction by
// remembering again with Supersedes (which then links the two, storing
// nothing twice). A superseded memory is never recalled again; it records
// which memory replaced it. Remembering the same words again (ignoring case
// and punctuation) reinforces the existing memory instead.
//
// # Use
//
// Recall (the agent's recall tool) reinforces what it returns: the agent
// asked and reads it. The memories put in a run's prompt at its start
// (Match) are not reinforced for being shown; they are when the run cites
// their id, or the person marks one useful (Use).
//
// # Ranking
//
// Recall ranks active memories whose strength is above the floor. With BM25
// normalised per query (kw = bm25 / best bm25, so the best keyword match is 1),
// cosine similarity cos (negative counts as 0) and strength s:
//
//	keywords only: score = 0.8·kw + 0.2·s
//	with meaning:  score = 0.5·cos + 0.3·kw + 0.2·s
//
// A memory found only by meaning must have cos ≥ MinSimilarity (default 0.25).
// Vectors of another model than the current Embedder's are not used; Reembed
// replaces them.
package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// MaxTextLen is the longest memory, in bytes: a memory is a fact, not a file.
const MaxTextLen = 2000

// State is where a memory is in its life.
type State string

// The states of a memory.
const (
	Active     State = "active"     // recalled when relevant
	Retired    State = "retired"    // faded under the floor: kept, listed, not recalled
	Superseded State = "superseded" // replaced by a correction: kept, listed, not recalled
)

// Source says who wrote a memory: a step of a run, or a person (zero Source).
type Source struct {
	RunID string `json:"run_id,omitempty"`
	Step  int    `json:"step,omitempty"`
}

// String is "you" for a person, else "<run id>#<step>".
func (s Source) String() string {
	if s.RunID == "" {
		return "you"
	}
	return fmt.Sprintf("%s#%d", s.RunID, s.Step)
}

// Memory is one fact of one agent. Strength and State are as of the moment it
// was read (a memory faded under the floor reads as retired before Sweep).
type Memory struct {
	ID             string     `json:"id"`
	AgentID        string     `json:"agent_id"`
	Text           string     `json:"text"`
	Source         Source     `json:"source"`
	State          State      `json:"state"`
	Strength       float64    `json:"strength"`
	Recalls        int        `json:"recalls"`
	Supersedes     string     `json:"supersedes,omitempty"`
	SupersededBy   string     `json:"superseded_by,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	LastRecalledAt *time.Time `json:"last_recalled_at,omitempty"`

	stored       float64 // s0
	reinforcedAt time.Time
	embedModel   string
}

// Scored is a recalled memory with the parts of its score (see the package
// doc): Keyword is the normalised BM25, Meaning the cosine similarity.
type Scored struct {
	Memory
	Score   float64 `json:"score"`
	Keyword float64 `json:"keyword"`
	Meaning float64 `json:"meaning"`
}

// Remembered is what Remember did.
type Remembered struct {
	Memory Memory `json:"memory"`
	// Superseded is the older memory the new one replaced, if any.
	Superseded *Memory `json:"superseded,omitempty"`
	// Candidate is an active memory close to the new one that was kept:
	// if the new one corrects it, remember again with Supersedes = its id.
	Candidate *Memory `json:"candidate,omitempty"`
	// Reason says why it was superseded ("explicit") or why Candidate is
	// named (the similarity that made it close).
	Reason string `json:"reason,omitempty"`
	// Existing is true when the text was already remembered: Memory is the
	// existing memory, reinforced, and nothing new was stored.
	Existing bool `json:"existing,omitempty"`
}

// RememberOptions are Remember's optional inputs.
type RememberOptions struct {
	// Supersedes is the id of a memory of the same agent that the new one
	// corrects. Empty: nothing is replaced; a close memory is only named.
	Supersedes string
}

// ListOptions filter List.
type ListOptions struct {
	Query          string // keywords; "" lists newest first
	IncludeRetired bool   // also retired and superseded memories
	Limit          int    // default 100, at most 1000
}

// Config configures a Service. Zero fields take the documented defaults.
type Config struct {
	Now      func() time.Time // default time.Now
	HalfLife time.Duration    // default DefaultHalfLife (14 days)
	Floor    float64          // default DefaultFloor (0.05)
	Boost    float64          // default DefaultBoost (0.3)

	// Embedder, when set, turns on recall by meaning. Nil: keywords only.
	Embedder Embedder
	// VectorDir is the chromem-go persistent directory ("" = in memory).
	VectorDir string

	SupersedeJaccard float64 // default 0.6
	SupersedeCosine  float64 // default 0.9
	MinSimilarity    float64 // default 0.25

	Logger *slog.Logger // default slog.Default()
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.HalfLife <= 0 {
		c.HalfLife = DefaultHalfLife
	}
	if c.Floor <= 0 {
		c.Floor = DefaultFloor
	}
	if c.Boost <= 0 {
		c.Boost = DefaultBoost
	}
	if c.SupersedeJaccard <= 0 {
		c.SupersedeJaccard = 0.6
	}
	if c.SupersedeCosine <= 0 {
		c.SupersedeCosine = 0.9
	}
	if c.MinSimilarity <= 0 {
		c.MinSimilarity = 0.25
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Service reads and writes the memories of a workspace's agents.
type Service struct {
	db  *store.DB
	cfg Config
	vec *vectors // nil without an Embedder
}

// New returns the memory service over the workspace database. With an
// Embedder it opens the vector store under cfg.VectorDir.
func New(db *store.DB, cfg Config) (*Service, error) {
	s := &Service{db: db, cfg: cfg.withDefaults()}
	if s.cfg.Embedder != nil {
		v, err := openVectors(s.cfg.VectorDir)
		if err != nil {
			return nil, err
		}
		s.vec = v
		if err := v.index(context.Background(), func(agentID, model string) ([]string, error) {
			ids, err := store.Query(context.Background(), db, func(sc store.Scanner) (string, error) {
				var id string
				return id, sc.Scan(&id)
			}, `SELECT id FROM memories WHERE agent_id = ? AND embed_model = ?`, agentID, model)
			if err != nil {
				return nil, fmt.Errorf("index vectors: %w", err)
			}
			return ids, nil
		}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Config is the service's configuration with defaults filled in.
func (s *Service) Config() Config { return s.cfg }

const columns = `id, agent_id, text, source_run_id, source_step, state, supersedes, superseded_by,
	strength, recalls, reinforced_at, last_recalled_at, embed_model, created_at, updated_at`

func scanMemory(sc store.Scanner, extra ...any) (Memory, error) {
	var m Memory
	var reinforced, created, updated string
	var recalled sql.NullString
	dest := append([]any{&m.ID, &m.AgentID, &m.Text, &m.Source.RunID, &m.Source.Step, &m.State,
		&m.Supersedes, &m.SupersededBy, &m.stored, &m.Recalls, &reinforced, &recalled,
		&m.embedModel, &created, &updated}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return Memory{}, err
	}
	m.reinforcedAt = store.ParseTime(reinforced)
	m.CreatedAt = store.ParseTime(created)
	m.UpdatedAt = store.ParseTime(updated)
	if recalled.Valid {
		t := store.ParseTime(recalled.String)
		m.LastRecalledAt = &t
	}
	return m, nil
}

// at fills in the strength and effective state of m at now.
func (s *Service) at(m Memory, now time.Time) Memory {
	m.Strength = s.cfg.Strength(m.stored, m.Recalls, m.reinforcedAt, now)
	if m.State == Active && m.Strength < s.cfg.Floor {
		m.State = Retired
	}
	return m
}

func checkText(text string) (string, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return "", fault.Invalid("a memory needs some text")
	case len(text) > MaxTextLen:
		return "", fault.Invalid("a memory is at most %d bytes (got %d): keep one short fact per memory", MaxTextLen, len(text))
	}
	return text, nil
}

// Get returns one memory.
func (s *Service) Get(ctx context.Context, id string) (Memory, error) {
	m, err := scanMemory(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM memories WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Memory{}, fault.NotFound("no memory %q", id)
	}
	if err != nil {
		return Memory{}, fmt.Errorf("get memory %s: %w", id, err)
	}
	return s.at(m, s.cfg.Now()), nil
}

// Remember stores a new memory of the agent, written by src, superseding an
// older one when asked or when it corrects a near-duplicate (package doc).
func (s *Service) Remember(ctx context.Context, agentID, text string, src Source, opts RememberOptions) (Remembered, error) {
	text, err := checkText(text)
	if err != nil {
		return Remembered{}, err
	}
	var vec []float32
	if s.vec != nil {
		vs, err := s.cfg.Embedder.Embed(ctx, []string{text})
		if err != nil {
			// Keyword recall still works; Reembed catches up later.
			s.cfg.Logger.Warn("embed memory", "agent", agentID, "err", err)
		} else {
			vec = vs[0]
		}
	}

	now := s.cfg.Now()
	var old, candidate *Memory
	var reason string
	dup, same, why, err := s.nearDuplicate(ctx, agentID, text, vec, now)
	if err != nil {
		return Remembered{}, err
	}
	switch {
	case opts.Supersedes != "" && same && dup.ID != opts.Supersedes:
		// The agent confirms a correction it already wrote down (the
		// candidate named in the first answer): link the two.
		return s.supersedeWith(ctx, agentID, opts.Supersedes, *dup, now)
	case same:
		got, err := s.reinforce(ctx, []string{dup.ID}, now)
		if err != nil {
			return Remembered{}, err
		}
		return Remembered{Memory: got[0], Existing: true}, nil
	case opts.Supersedes != "":
		reason = "explicit"
	case dup != nil:
		candidate, reason = dup, why
	}

	m := Memory{
		ID: store.NewID("mem"), AgentID: agentID, Text: text, Source: src, State: Active,
		Strength: 1, stored: 1, CreatedAt: now, UpdatedAt: now, reinforcedAt: now,
	}
	if vec != nil {
		m.embedModel = s.cfg.Embedder.Model()
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if opts.Supersedes != "" {
			o, err := scanMemory(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM memories WHERE id = ?`, opts.Supersedes))
			if errors.Is(err, sql.ErrNoRows) || err == nil && o.AgentID != agentID {
				return fault.NotFound("no memory %q of this agent to supersede", opts.Supersedes)
			}
			if err != nil {
				return err
			}
			if o.State == Superseded {
				return fault.Conflict("memory %q was already superseded by %q; supersede that one instead", o.ID, o.SupersededBy)
			}
			old = &o
		}
		if old != nil {
			m.Supersedes = old.ID
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO memories (id, agent_id, text, source_run_id, source_step, state,
			supersedes, strength, recalls, reinforced_at, embed_model, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'active', ?, 1, 0, ?, ?, ?, ?)`,
			m.ID, agentID, text, src.RunID, src.Step, m.Supersedes, store.FormatTime(now), m.embedModel,
			store.FormatTime(now), store.FormatTime(now))
		if err != nil {
			if strings.Contains(err.Error(), "FOREIGN KEY") {
				return fault.NotFound("no agent %q", agentID)
			}
			return err
		}
		if old != nil {
			_, err = tx.ExecContext(ctx, `UPDATE memories SET state = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?`,
				m.ID, store.FormatTime(now), old.ID)
		}
		return err
	})
	if err != nil {
		return Remembered{}, fmt.Errorf("remember: %w", err)
	}
	out := Remembered{Memory: m}
	if candidate != nil {
		out.Candidate, out.Reason = candidate, reason
	}
	if old != nil {
		o := s.at(*old, now)
		o.State, o.SupersededBy = Superseded, m.ID
		out.Superseded, out.Reason = &o, reason
		if err := s.dropVectors(ctx, agentID, o.ID); err != nil {
			return out, err
		}
	}
	if vec != nil {
		if err := s.vec.add(ctx, agentID, m.embedModel, []string{m.ID}, [][]float32{vec}); err != nil {
			s.cfg.Logger.Warn("store memory vector", "memory", m.ID, "err", err)
			s.db.ExecContext(ctx, `UPDATE memories SET embed_model = '' WHERE id = ?`, m.ID)
		}
	}
	return out, nil
}

// supersedeWith marks the agent's memory oldID as superseded by the active
// memory m, which says the new text already.
func (s *Service) supersedeWith(ctx context.Context, agentID, oldID string, m Memory, now time.Time) (Remembered, error) {
	var o Memory
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		o, err = scanMemory(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM memories WHERE id = ?`, oldID))
		if errors.Is(err, sql.ErrNoRows) || err == nil && o.AgentID != agentID {
			return fault.NotFound("no memory %q of this agent to supersede", oldID)
		}
		if err != nil {
			return err
		}
		if o.State == Superseded {
			return fault.Conflict("memory %q was already superseded by %q; supersede that one instead", o.ID, o.SupersededBy)
		}
		t := store.FormatTime(now)
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET state = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?`, m.ID, t, o.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE memories SET supersedes = ?, updated_at = ? WHERE id = ?`, o.ID, t, m.ID)
		return err
	})
	if err != nil {
		return Remembered{}, fmt.Errorf("remember: %w", err)
	}
	if err := s.dropVectors(ctx, agentID, o.ID); err != nil {
		return Remembered{}, err
	}
	o = s.at(o, now)
	o.State, o.SupersededBy = Superseded, m.ID
	m.Supersedes = o.ID
	return Remembered{Memory: m, Superseded: &o, Reason: "explicit", Existing: true}, nil
}

// nearDuplicate finds the active memory of the agent closest to text, or
// one that says the very same thing (same = true).
func (s *Service) nearDuplicate(ctx context.Context, agentID, text string, vec []float32, now time.Time) (m *Memory, same bool, reason string, err error) {
	cands, err := s.keywordHits(ctx, agentID, MatchQuery(text), 10, false)
	if err != nil {
		return nil, false, "", err
	}
	cosines := map[string]float64{}
	if vec != nil {
		hits, err := s.vec.query(ctx, agentID, s.cfg.Embedder.Model(), vec, 3)
		if err != nil {
			s.cfg.Logger.Warn("query memory vectors", "agent", agentID, "err", err)
		}
		var missing []string
		have := map[string]bool{}
		for _, c := range cands {
			have[c.ID] = true
		}
		for _, h := range hits {
			cosines[h.id] = h.similarity
			if !have[h.id] {
				missing = append(missing, h.id)
			}
		}
		more, err := s.byIDs(ctx, missing)
		if err != nil {
			return nil, false, "", err
		}
		for _, m := range more {
			cands = append(cands, keywordHit{Memory: m})
		}
	}
	var best *Memory
	var bestScore float64
	for _, c := range cands {
		c := s.at(c.Memory, now)
		if c.State != Active {
			continue
		}
		if sameText(c.Text, text) {
			return &c, true, "", nil
		}
		j := jaccard(c.Text, text)
		cos, hasCos := cosines[c.ID]
		if c.embedModel != s.modelName() {
			hasCos = false
		}
		var score float64
		var why string
		switch {
		case hasCos && cos >= s.cfg.SupersedeCosine:
			score, why = 1+cos, fmt.Sprintf("near-duplicate: meaning similarity %.2f", cos)
		case j >= s.cfg.SupersedeJaccard:
			score, why = j, fmt.Sprintf("near-duplicate: %.0f%% of the words shared", j*100)
		default:
			continue
		}
		if score > bestScore {
			best, bestScore, reason = &c, score, why
		}
	}
	return best, false, reason, nil
}

func (s *Service) modelName() string {
	if s.cfg.Embedder == nil {
		return ""
	}
	return s.cfg.Embedder.Model()
}

// List returns the agent's memories without reinforcing them: matching Query
// best first, or newest first.
func (s *Service) List(ctx context.Context, agentID string, opts ListOptions) ([]Memory, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	now := s.cfg.Now()
	var ms []Memory
	if strings.TrimSpace(opts.Query) != "" {
		// Fetch extra: faded ones are filtered out below.
		hits, err := s.keywordHits(ctx, agentID, MatchQuery(opts.Query), limit*2, opts.IncludeRetired)
		if err != nil {
			return nil, err
		}
		for _, h := range hits {
			ms = append(ms, h.Memory)
		}
	} else {
		state := ` AND state = 'active'`
		if opts.IncludeRetired {
			state = ""
		}
		var err error
		ms, err = store.Query(ctx, s.db, func(sc store.Scanner) (Memory, error) { return scanMemory(sc) },
			`SELECT `+columns+` FROM memories WHERE agent_id = ?`+state+` ORDER BY created_at DESC, n DESC LIMIT ?`,
			agentID, limit*2)
		if err != nil {
			return nil, fmt.Errorf("list memories: %w", err)
		}
	}
	out := []Memory{}
	for _, m := range ms {
		m = s.at(m, now)
		if m.State != Active && !opts.IncludeRetired {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, m)
	}
	return out, nil
}

// Update replaces a memory's text (a person's edit or the agent's own) and
// restores its full strength; a retired memory becomes active again. A
// superseded memory cannot be edited: edit the one that replaced it.
func (s *Service) Update(ctx context.Context, id, text string) (Memory, error) {
	text, err := checkText(text)
	if err != nil {
		return Memory{}, err
	}
	m, err := s.Get(ctx, id)
	if err != nil {
		return Memory{}, err
	}
	if m.State == Superseded {
		return Memory{}, fault.Conflict("memory %q was superseded by %q; edit that one instead", id, m.SupersededBy)
	}
	var vec []float32
	model := ""
	if s.vec != nil {
		vs, err := s.cfg.Embedder.Embed(ctx, []string{text})
		if err != nil {
			s.cfg.Logger.Warn("embed memory", "memory", id, "err", err)
		} else {
			vec, model = vs[0], s.cfg.Embedder.Model()
		}
	}
	now := s.cfg.Now()
	t := store.FormatTime(now)
	_, err = s.db.ExecContext(ctx, `UPDATE memories SET text = ?, state = 'active', strength = 1, reinforced_at = ?,
		updated_at = ?, embed_model = ? WHERE id = ?`, text, t, t, model, id)
	if err != nil {
		return Memory{}, fmt.Errorf("update memory %s: %w", id, err)
	}
	if err := s.dropVectors(ctx, m.AgentID, id); err != nil {
		return Memory{}, err
	}
	if vec != nil {
		if err := s.vec.add(ctx, m.AgentID, model, []string{id}, [][]float32{vec}); err != nil {
			s.cfg.Logger.Warn("store memory vector", "memory", id, "err", err)
			s.db.ExecContext(ctx, `UPDATE memories SET embed_model = '' WHERE id = ?`, id)
		}
	}
	return s.Get(ctx, id)
}

// Forget deletes a memory for good. A memory it had superseded stays
// superseded.
func (s *Service) Forget(ctx context.Context, id string) error {
	m, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM memories WHERE id = ?`, id); err != nil {
		return fmt.Errorf("forget memory %s: %w", id, err)
	}
	return s.dropVectors(ctx, m.AgentID, id)
}

// ForgetAgent deletes every memory of an agent and its vectors. Deleting the
// agent row removes the memories by cascade; call this too, for the vectors.
func (s *Service) ForgetAgent(ctx context.Context, agentID string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM memories WHERE agent_id = ?`, agentID); err != nil {
		return fmt.Errorf("forget memories of %s: %w", agentID, err)
	}
	if s.vec == nil {
		return nil
	}
	return s.vec.dropCollections(agentID, "")
}

func (s *Service) dropVectors(ctx context.Context, agentID string, ids ...string) error {
	if s.vec == nil {
		return nil
	}
	return s.vec.remove(ctx, agentID, ids...)
}

// Sweep marks as retired every active memory whose strength has fallen under
// the floor, and returns how many. Recall already ignores them; Sweep makes
// the state visible to plain queries and frees their vectors.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	now := s.cfg.Now()
	type faded struct{ id, agent string }
	var gone []faded
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, agent_id, strength, recalls, reinforced_at FROM memories WHERE state = 'active'`)
		if err != nil {
			return err
		}
		for rows.Next() {
			var f faded
			var s0 float64
			var n int
			var at string
			if err := rows.Scan(&f.id, &f.agent, &s0, &n, &at); err != nil {
				rows.Close()
				return err
			}
			if s.cfg.Strength(s0, n, store.ParseTime(at), now) < s.cfg.Floor {
				gone = append(gone, f)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		t := store.FormatTime(now)
		for _, f := range gone {
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET state = 'retired', updated_at = ? WHERE id = ?`, t, f.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep memories: %w", err)
	}
	for _, f := range gone {
		if err := s.dropVectors(ctx, f.agent, f.id); err != nil {
			return len(gone), err
		}
	}
	return len(gone), nil
}
