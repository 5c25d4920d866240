package memory_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

const day = 24 * time.Hour

// addAgents inserts bare agent rows (memories reference agents(id)).
func addAgents(t testing.TB, db *store.DB, ids ...string) {
	t.Helper()
	ctx := context.Background()
	now := store.FormatTime(time.Now())
	if _, err := db.ExecContext(ctx, `INSERT OR IGNORE INTO boxes (id, name, position, created_at) VALUES ('bx_1', 'Box', 0, ?)`, now); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, err := db.ExecContext(ctx, `INSERT INTO agents (id, name, handle, box_id, created_at, updated_at)
			VALUES (?, ?, ?, 'bx_1', ?, ?)`, id, id, id, now, now); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	db    *store.DB
	clock *memorytest.Clock
	svc   *memory.Service
}

func newFixture(t testing.TB, cfg memory.Config) *fixture {
	t.Helper()
	db := storetest.Open(t)
	addAgents(t, db, "ag_a", "ag_b")
	clock := &memorytest.Clock{}
	cfg.Now = clock.Now
	svc, err := memory.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{db, clock, svc}
}

func (f *fixture) remember(t testing.TB, agent, text string) memory.Memory {
	t.Helper()
	r, err := f.svc.Remember(context.Background(), agent, text, memory.Source{RunID: "run_1", Step: 3}, memory.RememberOptions{})
	if err != nil {
		t.Fatalf("remember %q: %v", text, err)
	}
	return r.Memory
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func texts(ss []memory.Scored) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Text
	}
	return out
}

func TestStrengthFormula(t *testing.T) {
	cfg := memory.Config{HalfLife: 14 * day, Floor: 0.05, Boost: 0.3}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		s0      float64
		recalls int
		after   time.Duration
		want    float64
	}{
		{"fresh", 1, 0, 0, 1},
		{"one half-life", 1, 0, 14 * day, 0.5},
		{"two half-lives", 1, 0, 28 * day, 0.25},
		{"one recall doubles the half-life", 1, 1, 28 * day, 0.5},
		{"three recalls", 0.8, 3, 56 * day, 0.4},
		{"clock behind the stored time", 0.7, 0, -day, 0.7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cfg.Strength(tt.s0, tt.recalls, t0, t0.Add(tt.after)); !near(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got, want := cfg.Lifetime(1, 0), time.Duration(math.Log2(20)*float64(14*day)); got != want {
		t.Errorf("lifetime of a fresh memory: got %v, want %v", got, want)
	}
}

func TestRecallReinforces(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	m := f.remember(t, "ag_a", "The invoice run happens on the first Monday")
	steps := []struct {
		name        string
		wait        time.Duration
		recall      bool
		wantBefore  float64 // strength read just before the recall
		wantAfter   float64
		wantRecalls int
	}{
		{"fades to half in 14 days", 14 * day, true, 0.5, 0.8, 1},
		{"second half-life is 28 days", 28 * day, true, 0.4, 0.7, 2},
		{"third is 42 days", 42 * day, false, 0.35, 0.35, 2},
		{"reinforcement is capped at 1", 0, true, 0.35, 0.65, 3},
		{"", 0, true, 0.65, 0.95, 4},
		{"", 0, true, 0.95, 1, 5},
	}
	for i, st := range steps {
		f.clock.Advance(st.wait)
		got, err := f.svc.Get(ctx, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !near(got.Strength, st.wantBefore) {
			t.Fatalf("step %d %s: strength before: got %v, want %v", i, st.name, got.Strength, st.wantBefore)
		}
		if st.recall {
			res, err := f.svc.Recall(ctx, "ag_a", "when is the invoice run?", 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].ID != m.ID {
				t.Fatalf("step %d: recall got %v, want the invoice memory", i, texts(res))
			}
		}
		got, _ = f.svc.Get(ctx, m.ID)
		if !near(got.Strength, st.wantAfter) || got.Recalls != st.wantRecalls {
			t.Fatalf("step %d %s: got strength %v recalls %d, want %v and %d", i, st.name, got.Strength, got.Recalls, st.wantAfter, st.wantRecalls)
		}
	}
	// List never reinforces.
	if _, err := f.svc.List(ctx, "ag_a", memory.ListOptions{Query: "invoice"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.svc.Get(ctx, m.ID); got.Recalls != 5 {
		t.Errorf("after List: got %d recalls, want 5", got.Recalls)
	}
}

func TestRetirement(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	old := f.remember(t, "ag_a", "The office wifi password is on the fridge")
	f.clock.Advance(40 * day)
	kept := f.remember(t, "ag_a", "The office plants need water on Fridays")
	f.clock.Advance(21 * day) // old: 61 days ≈ 4.36 half-lives → 0.049 < 0.05; kept: 0.35

	res, err := f.svc.Recall(ctx, "ag_a", "office", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != kept.ID {
		t.Fatalf("recall after fading: got %v, want only the plants", texts(res))
	}
	got, _ := f.svc.Get(ctx, old.ID)
	if got.State != memory.Retired {
		t.Errorf("faded memory before Sweep reads as %q, want retired", got.State)
	}
	n, err := f.svc.Sweep(ctx)
	if err != nil || n != 1 {
		t.Fatalf("sweep: got %d, %v; want 1 retired", n, err)
	}
	if n, _ := f.svc.Sweep(ctx); n != 0 {
		t.Errorf("second sweep retired %d, want 0", n)
	}
	active, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{})
	all, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{IncludeRetired: true})
	if len(active) != 1 || len(all) != 2 {
		t.Fatalf("list: got %d active and %d in all, want 1 and 2", len(active), len(all))
	}
	var state memory.State
	if err := f.db.QueryRow(`SELECT state FROM memories WHERE id = ?`, old.ID).Scan(&state); err != nil || state != memory.Retired {
		t.Errorf("stored state: got %q (%v), want retired", state, err)
	}
	// A person editing a retired memory brings it back.
	if _, err := f.svc.Update(ctx, old.ID, "The office wifi password is taped under the router"); err != nil {
		t.Fatal(err)
	}
	res, _ = f.svc.Recall(ctx, "ag_a", "wifi password", 5)
	if len(res) != 1 || res[0].ID != old.ID || !near(res[0].Strength, 1) {
		t.Errorf("recall after edit: got %v, want the edited memory at full strength", texts(res))
	}
}

func TestSupersedeExplicit(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	old := f.remember(t, "ag_a", "Send the weekly report to Dana")
	r, err := f.svc.Remember(ctx, "ag_a", "Send the weekly summary to Priya, not Dana", memory.Source{}, memory.RememberOptions{Supersedes: old.ID})
	if err != nil {
		t.Fatal(err)
	}
	if r.Superseded == nil || r.Superseded.ID != old.ID || r.Reason != "explicit" || r.Memory.Supersedes != old.ID {
		t.Fatalf("got %+v, want old superseded explicitly", r)
	}
	if r.Memory.Source.String() != "you" {
		t.Errorf("source: got %q, want you", r.Memory.Source)
	}
	res, _ := f.svc.Recall(ctx, "ag_a", "who gets the weekly report", 5)
	if len(res) != 1 || res[0].ID != r.Memory.ID {
		t.Fatalf("recall: got %v, want only the correction", texts(res))
	}
	got, _ := f.svc.Get(ctx, old.ID)
	if got.State != memory.Superseded || got.SupersededBy != r.Memory.ID {
		t.Errorf("old: got state %q by %q, want superseded by %q", got.State, got.SupersededBy, r.Memory.ID)
	}

	errs := []struct {
		name  string
		agent string
		id    string
		want  error
	}{
		{"already superseded", "ag_a", old.ID, fault.ErrConflict},
		{"another agent's memory", "ag_b", r.Memory.ID, fault.ErrNotFound},
		{"unknown id", "ag_a", "mem_nope", fault.ErrNotFound},
	}
	for _, e := range errs {
		t.Run(e.name, func(t *testing.T) {
			_, err := f.svc.Remember(ctx, e.agent, "Some new fact", memory.Source{}, memory.RememberOptions{Supersedes: e.id})
			if !errors.Is(err, e.want) {
				t.Errorf("got %v, want %v", err, e.want)
			}
		})
	}
}

// A close memory is named, not replaced; the agent's confirmation (the
// same text again with Supersedes) links the two without a second copy.
func TestCloseMemoryNamedThenConfirmed(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	old := f.remember(t, "ag_a", "The staging deploy happens every Friday at 5pm")
	other := f.remember(t, "ag_a", "The production deploy needs approval from Sam")
	r, err := f.svc.Remember(ctx, "ag_a", "The staging deploy happens every Thursday at 5pm", memory.Source{RunID: "run_9", Step: 2}, memory.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Superseded != nil || r.Candidate == nil || r.Candidate.ID != old.ID || !strings.Contains(r.Reason, "near-duplicate") {
		t.Fatalf("got superseded %+v candidate %+v reason %q, want the Friday memory named and kept", r.Superseded, r.Candidate, r.Reason)
	}
	if got, _ := f.svc.Get(ctx, old.ID); got.State != memory.Active {
		t.Fatalf("the close memory is %q without anyone's word, want active", got.State)
	}
	c, err := f.svc.Remember(ctx, "ag_a", "The staging deploy happens every Thursday at 5pm", memory.Source{}, memory.RememberOptions{Supersedes: old.ID})
	if err != nil {
		t.Fatal(err)
	}
	if c.Memory.ID != r.Memory.ID || c.Superseded == nil || c.Superseded.ID != old.ID || c.Reason != "explicit" {
		t.Fatalf("confirming: got %+v, want the Thursday memory to replace the Friday one", c)
	}
	if all, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{IncludeRetired: true}); len(all) != 3 {
		t.Fatalf("after confirming: %d memories, want 3 (nothing stored twice): %v", len(all), all)
	}
	res, _ := f.svc.Recall(ctx, "ag_a", "when is the staging deploy", 5)
	for _, s := range res {
		if s.ID == old.ID {
			t.Fatalf("recall returned the superseded memory: %v", texts(res))
		}
	}
	if len(res) == 0 || res[0].ID != r.Memory.ID {
		t.Fatalf("recall: got %v, want the Thursday correction first", texts(res))
	}
	if got, _ := f.svc.Get(ctx, other.ID); got.State != memory.Active {
		t.Errorf("unrelated memory: got %q, want active", got.State)
	}
	// Other agents' memories are never superseded.
	rb, _ := f.svc.Remember(ctx, "ag_b", "The staging deploy happens every Friday at 5pm", memory.Source{}, memory.RememberOptions{})
	if rb.Superseded != nil || rb.Candidate != nil {
		t.Errorf("agent b: superseded %v, candidate %v", rb.Superseded, rb.Candidate)
	}
	// The same words again reinforce instead of duplicating.
	f.clock.Advance(14 * day)
	again, err := f.svc.Remember(ctx, "ag_a", "the staging deploy happens every thursday at 5pm!", memory.Source{}, memory.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Recalled once above: half-life 28 days, 0.707 + 0.3 is capped at 1.
	if !again.Existing || again.Memory.ID != r.Memory.ID || again.Memory.Recalls != 2 || !near(again.Memory.Strength, 1) {
		t.Errorf("repeat: got %+v, want the existing memory reinforced (2 recalls, strength 1)", again)
	}
}

func TestKeywordRanking(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	for _, s := range []string{
		"Dana prefers invoices as PDF",
		"Invoices for ACME go to billing@acme.test, Dana in copy",
		"The ACME invoices are due net 30; ACME pays late",
		"Lunch is at noon",
	} {
		f.remember(t, "ag_a", s)
	}
	f.remember(t, "ag_b", "ACME invoices ACME invoices ACME")
	res, err := f.svc.Recall(ctx, "ag_a", "ACME invoices?", 10)
	if err != nil {
		t.Fatal(err)
	}
	got := texts(res)
	want := []string{
		"The ACME invoices are due net 30; ACME pays late",
		"Invoices for ACME go to billing@acme.test, Dana in copy",
		"Dana prefers invoices as PDF",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !near(res[0].Keyword, 1) || res[2].Keyword >= res[1].Keyword || res[0].Meaning != 0 {
		t.Errorf("scores: got %+v", res)
	}
	for _, s := range res {
		if !near(s.Score, 0.8*s.Keyword+0.2*s.Strength) {
			t.Errorf("%q: score %v is not 0.8·kw + 0.2·strength", s.Text, s.Score)
		}
	}
	// Syntax in the query is just words.
	for _, q := range []string{`"AND (`, `NEAR(acme`, `acme*`, `-`, `text:acme`, ``} {
		if _, err := f.svc.Recall(ctx, "ag_a", q, 3); err != nil {
			t.Errorf("recall %q: %v", q, err)
		}
	}
}

func TestListAndForget(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	a := f.remember(t, "ag_a", "First fact about cats")
	f.clock.Advance(time.Minute)
	b := f.remember(t, "ag_a", "Second fact about dogs")
	got, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{})
	if len(got) != 2 || got[0].ID != b.ID || got[0].Source != (memory.Source{RunID: "run_1", Step: 3}) {
		t.Fatalf("list: got %+v, want newest first with its source", got)
	}
	if got, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{Query: "cats"}); len(got) != 1 || got[0].ID != a.ID {
		t.Errorf("list cats: got %+v", got)
	}
	if err := f.svc.Forget(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Get(ctx, a.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("get forgotten: got %v, want not found", err)
	}
	if res, _ := f.svc.Recall(ctx, "ag_a", "cats", 5); len(res) != 0 {
		t.Errorf("recall forgotten: got %v", texts(res))
	}
	for _, bad := range []string{"", "   ", strings.Repeat("x", memory.MaxTextLen+1)} {
		if _, err := f.svc.Remember(ctx, "ag_a", bad, memory.Source{}, memory.RememberOptions{}); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("remember %d bytes: got %v, want invalid", len(bad), err)
		}
	}
	if _, err := f.svc.Remember(ctx, "ag_nope", "x", memory.Source{}, memory.RememberOptions{}); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("remember for unknown agent: got %v, want not found", err)
	}
}

func TestAgentDeletionCascades(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, memory.Config{})
	f.remember(t, "ag_a", "Fact one about tigers")
	f.remember(t, "ag_b", "Fact two about tigers")
	if _, err := f.db.ExecContext(ctx, `DELETE FROM agents WHERE id = 'ag_a'`); err != nil {
		t.Fatal(err)
	}
	var n int
	f.db.QueryRow(`SELECT count(*) FROM memories_fts WHERE memories_fts MATCH 'tigers'`).Scan(&n)
	if n != 1 {
		t.Errorf("FTS rows after cascade: got %d, want 1", n)
	}
	if _, err := f.db.ExecContext(ctx, `INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("FTS index out of sync: %v", err)
	}
	if res, _ := f.svc.Recall(ctx, "ag_b", "tigers", 5); len(res) != 1 {
		t.Errorf("agent b recall: got %v", texts(res))
	}
}

func TestMatchQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"the and of", ""},
		{`"AND (`, ""},
		{"ACME invoices?", `"acme" OR "invoices"`},
		{`text:acme NEAR(x) y*`, `"text" OR "acme" OR "near" OR "x" OR "y"`},
		{"Zürich café, Zürich", `"zürich" OR "café"`},
	}
	for _, tt := range tests {
		if got := memory.MatchQuery(tt.in); got != tt.want {
			t.Errorf("MatchQuery(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzMatchQuery runs every sanitised query through real FTS5: no input may
// produce a syntax error.
func FuzzMatchQuery(f *testing.F) {
	for _, s := range []string{`"AND (`, `a OR b`, `NEAR(a b, 3)`, `col:x`, `^x`, `x*`, `'`, "\x00", `{a b}`, "ⅷ ǅ ß"} {
		f.Add(s)
	}
	db := storetest.Open(f)
	addAgents(f, db, "ag_a")
	svc, err := memory.New(db, memory.Config{})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := svc.Remember(context.Background(), "ag_a", "a fact about near and or things", memory.Source{}, memory.RememberOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		m := memory.MatchQuery(q)
		if m == "" {
			return
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?`, m).Scan(&n); err != nil {
			t.Fatalf("MatchQuery(%q) = %q: %v", q, m, err)
		}
	})
}

func TestVectorStoreDir(t *testing.T) {
	// The persistent vector store lives where configured.
	dir := filepath.Join(t.TempDir(), "vectors")
	srv := memorytest.NewEmbedServer(t, 64)
	f := newFixture(t, memory.Config{VectorDir: dir, Embedder: memory.NewOpenAI(memory.OpenAIConfig{BaseURL: srv.URL(), Model: "fake"})})
	f.remember(t, "ag_a", "Vectors are stored on disk")
	// One collection folder: its metadata file and one document.
	if matches, _ := filepath.Glob(filepath.Join(dir, "*", "*.gob")); len(matches) != 2 {
		t.Errorf("got %d vector files, want 2", len(matches))
	}
}
