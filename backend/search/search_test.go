package search_test

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/search"
	"github.com/rerun-build/rerun-desktop/backend/search/searchtest"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

var day0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

func seed(t *testing.T, db *store.DB) {
	searchtest.Agent(t, db, "ag_a")
	searchtest.Agent(t, db, "ag_b")
	searchtest.Write(t, db,
		searchtest.Run{ID: "run_1", AgentID: "ag_a", Source: "chat", Status: "done", At: day0, Steps: []searchtest.Step{
			searchtest.Input("Send the invoice to Globex"),
			searchtest.Call("c1", "read_file", map[string]string{"path": "invoice/globex.pdf"}),
			searchtest.Result("c1", "read_file", "Invoice 2291: 1,200 EUR, due December"),
			searchtest.Model("Sent the invoice."),
		}},
		searchtest.Run{ID: "run_2", AgentID: "ag_b", Source: "schedule", Status: "failed", At: day0.AddDate(0, 0, 1), Steps: []searchtest.Step{
			searchtest.Input("Check the deployment"),
			{Kind: "error", Data: map[string]string{"message": "deployment timed out after 30 s"}},
		}},
		searchtest.Run{ID: "run_3", AgentID: "ag_a", Source: "trigger", Status: "paused", At: day0.AddDate(0, 0, 2), Steps: []searchtest.Step{
			searchtest.Input("A draft invoice arrived"),
			{Kind: "pause", Data: map[string]string{"pause_id": "pa_1"}},
		}},
	)
	searchtest.Notification(t, db, "nt_1", "ag_b", "", "Deployment is stuck", "Globex cannot log in", day0.AddDate(0, 0, 3))
}

type hit struct {
	run  string
	seq  int
	kind string
}

func hits(t *testing.T, s *search.Service, o search.Options) []hit {
	t.Helper()
	res, err := s.Search(context.Background(), o)
	if err != nil {
		t.Fatalf("Search(%+v): %v", o, err)
	}
	out := []hit{}
	for _, h := range res.Hits {
		id := h.RunID
		if h.NotificationID != "" {
			id = h.NotificationID
		}
		out = append(out, hit{id, h.Seq, h.Kind})
	}
	return out
}

func equal(a, b []hit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSearchFilters(t *testing.T) {
	db := storetest.Open(t)
	seed(t, db)
	s := search.New(db, nil)
	for _, tc := range []struct {
		name string
		o    search.Options
		want []hit
	}{
		{"word over inputs, calls, results and messages", search.Options{Query: "invoice"},
			[]hit{{"run_3", 1, "input"}, {"run_1", 4, "model"}, {"run_1", 3, "tool_result"}, {"run_1", 2, "tool_call"}, {"run_1", 1, "input"}}},
		{"notifications too", search.Options{Query: "globex"},
			[]hit{{"nt_1", 0, "notification"}, {"run_1", 2, "tool_call"}, {"run_1", 1, "input"}}},
		{"prefix", search.Options{Query: "deploym*"},
			[]hit{{"nt_1", 0, "notification"}, {"run_2", 2, "error"}, {"run_2", 1, "input"}}},
		{"agent", search.Options{Query: "globex", AgentID: "ag_b"}, []hit{{"nt_1", 0, "notification"}}},
		{"source", search.Options{Query: "invoice", Source: "trigger"}, []hit{{"run_3", 1, "input"}}},
		{"status", search.Options{Query: "deployment", Status: "failed"}, []hit{{"run_2", 2, "error"}, {"run_2", 1, "input"}}},
		{"since", search.Options{Query: "invoice", Since: day0.AddDate(0, 0, 1)}, []hit{{"run_3", 1, "input"}}},
		{"until", search.Options{Query: "deployment", Until: day0.AddDate(0, 0, 2)}, []hit{{"run_2", 2, "error"}, {"run_2", 1, "input"}}},
		{"phrase", search.Options{Query: `"draft invoice"`}, []hit{{"run_3", 1, "input"}}},
		{"excluded word", search.Options{Query: "invoice -draft -sent"},
			[]hit{{"run_1", 3, "tool_result"}, {"run_1", 2, "tool_call"}, {"run_1", 1, "input"}}},
		{"all words", search.Options{Query: "invoice december"}, []hit{{"run_1", 3, "tool_result"}}},
		{"whole words", search.Options{Query: "deploym"}, []hit{}},
		{"phrases are whole words", search.Options{Query: `"deploym"`}, []hit{}},
		{"nothing", search.Options{Query: "kangaroo"}, []hit{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hits(t, s, tc.o); !equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSearchPagesAndSnippets(t *testing.T) {
	db := storetest.Open(t)
	seed(t, db)
	s := search.New(db, nil)
	ctx := context.Background()
	first, err := s.Search(ctx, search.Options{Query: "invoice", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Hits) != 2 || !first.More {
		t.Fatalf("first page = %d hits, more %v; want 2, true", len(first.Hits), first.More)
	}
	rest, err := s.Search(ctx, search.Options{Query: "invoice", Limit: 10, Before: first.Hits[1].N})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest.Hits) != 3 || rest.More {
		t.Fatalf("second page = %d hits, more %v; want 3, false", len(rest.Hits), rest.More)
	}
	if got := rest.Hits[0].Snippet; got != "read_file Invoice 2291: 1,200 EUR, due December" {
		t.Errorf("snippet = %q", got)
	}
	if got := first.Terms; len(got) != 1 || got[0] != "invoice" {
		t.Errorf("terms = %v, want [invoice]", got)
	}
	long := strings.Repeat("word ", 200) + "needle " + strings.Repeat("more ", 200)
	sn := search.Snippet(long, []string{"needle"})
	if !strings.Contains(sn, "needle") || !strings.HasPrefix(sn, "…") || !strings.HasSuffix(sn, "…") || len(sn) > 260 {
		t.Errorf("Snippet of a long text = %q", sn)
	}
}

type masker struct{ value string }

func (m masker) Redact(s string) string { return strings.ReplaceAll(s, m.value, "[redacted:TOKEN]") }

func TestSearchMasksSnippets(t *testing.T) {
	// A value stored before it became a variable is masked in what search
	// shows.
	db := storetest.Open(t)
	searchtest.Agent(t, db, "ag_a")
	searchtest.Write(t, db, searchtest.Run{ID: "run_1", AgentID: "ag_a", Source: "chat", Status: "done", At: day0,
		Steps: []searchtest.Step{searchtest.Input("deploy with hunter2secret please")}})
	res, err := search.New(db, masker{"hunter2secret"}).Search(context.Background(), search.Options{Query: "deploy"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || strings.Contains(res.Hits[0].Snippet, "hunter2") || !strings.Contains(res.Hits[0].Snippet, "[redacted:TOKEN]") {
		t.Errorf("hits = %+v", res.Hits)
	}
}

func TestSearchFollowsWrites(t *testing.T) {
	db := storetest.Open(t)
	seed(t, db)
	s := search.New(db, nil)
	ctx := context.Background()
	// A trimmed step is found by what it says now.
	if _, err := db.ExecContext(ctx, `UPDATE steps SET data = json_set(data, '$.output', 'cut short') WHERE run_id = 'run_1' AND seq = 3`); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, search.Options{Query: "december"}); len(got) != 0 {
		t.Errorf("after trim, december = %v, want none", got)
	}
	if got := hits(t, s, search.Options{Query: "short"}); !equal(got, []hit{{"run_1", 3, "tool_result"}}) {
		t.Errorf("after trim, short = %v", got)
	}
	// A deleted run takes its steps' entries along.
	if _, err := db.ExecContext(ctx, `DELETE FROM runs WHERE id = 'run_1'`); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, search.Options{Query: "invoice"}); !equal(got, []hit{{"run_3", 1, "input"}}) {
		t.Errorf("after delete, invoice = %v", got)
	}
	// So does a deleted agent, notifications included.
	if _, err := db.ExecContext(ctx, `DELETE FROM agents WHERE id = 'ag_b'`); err != nil {
		t.Fatal(err)
	}
	if got := hits(t, s, search.Options{Query: "deployment"}); len(got) != 0 {
		t.Errorf("after deleting the agent, deployment = %v", got)
	}
	var docs, fts int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM search_docs), (SELECT count(*) FROM search_fts)`).Scan(&docs, &fts); err != nil {
		t.Fatal(err)
	}
	if docs != 1 || fts != 1 {
		t.Errorf("left in the index: %d docs, %d fts rows; want 1, 1", docs, fts)
	}
}

func TestSearchBackfillsExistingRows(t *testing.T) {
	// Rows written before migration 0020 are found after it.
	path := filepath.Join(t.TempDir(), "workspace.db")
	ctx := context.Background()
	before := fstest.MapFS{}
	all := store.WorkspaceMigrations()
	entries, _ := fs.ReadDir(all, ".")
	for _, e := range entries {
		if e.Name() < "0020" {
			b, _ := fs.ReadFile(all, e.Name())
			before[e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	old, err := store.Open(ctx, path, before)
	if err != nil {
		t.Fatal(err)
	}
	seed(t, old)
	old.Close()
	db, err := store.Open(ctx, path, all)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := search.New(db, nil)
	if got := hits(t, s, search.Options{Query: "globex"}); !equal(got, []hit{{"nt_1", 0, "notification"}, {"run_1", 2, "tool_call"}, {"run_1", 1, "input"}}) {
		t.Errorf("globex after backfill = %v", got)
	}
	// And the triggers index what comes after.
	searchtest.Write(t, db, searchtest.Run{ID: "run_9", AgentID: "ag_a", Source: "api", Status: "done", At: day0.AddDate(0, 1, 0),
		Steps: []searchtest.Step{searchtest.Input("globex again")}})
	if got := hits(t, s, search.Options{Query: "globex", Limit: 1}); !equal(got, []hit{{"run_9", 1, "input"}}) {
		t.Errorf("newest globex = %v", got)
	}
}

func TestSearchRefusesBadOptions(t *testing.T) {
	db := storetest.Open(t)
	s := search.New(db, nil)
	for _, o := range []search.Options{
		{Query: ""}, {Query: "  -- !!"}, {Query: "-alone"}, {Query: strings.Repeat("a", search.MaxQueryLen+1)},
		{Query: "x", Source: "mail"}, {Query: "x", Status: "late"}, {Query: "x", Limit: 201},
	} {
		if _, err := s.Search(context.Background(), o); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("Search(%.40q, source %q, status %q, limit %d) = %v, want ErrInvalid", o.Query, o.Source, o.Status, o.Limit, err)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, match string }{
		{"deploy", `"deploy"`},
		{"deploy* failed", `"deploy"* AND "failed"`},
		{`"rate limit" hit`, `"rate limit" AND "hit"`},
		{`invoice -draft*`, `"invoice" NOT "draft"*`},
		{`NEAR(a b) OR col:x ^y x**`, `"NEAR(a" AND "b)" AND "OR" AND "col:x" AND "^y" AND "x"*`},
		{`say "hi`, `"say" AND "hi"`},
		{`a"b *`, `"a""b"`},
		{"tab\there", `"tab" AND "here"`},
	} {
		q, err := search.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if q.Match != tc.match {
			t.Errorf("Parse(%q) = %s, want %s", tc.in, q.Match, tc.match)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`"AND (`, `a OR b`, `NEAR(a b, 3)`, `col:x`, `^x`, `x*`, `'`, "\x00a", `{a b}`, "ⅷ ǅ ß", `-"x`, `""`, `- -a b`, "a\u0301"} {
		f.Add(s)
	}
	db := storetest.Open(f)
	searchtest.Agent(f, db, "ag_a")
	searchtest.Write(f, db, searchtest.Run{ID: "run_1", AgentID: "ag_a", Source: "chat", Status: "done", At: day0,
		Steps: []searchtest.Step{searchtest.Input("near and or things, col x")}})
	s := search.New(db, nil)
	f.Fuzz(func(t *testing.T, text string) {
		_, err := s.Search(context.Background(), search.Options{Query: text})
		if err != nil && !errors.Is(err, fault.ErrInvalid) {
			t.Fatalf("Search(%q): %v", text, err)
		}
	})
}
