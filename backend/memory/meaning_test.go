package memory_test

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
)

func embedder(srv *memorytest.EmbedServer, model string) memory.Embedder {
	return memory.NewOpenAI(memory.OpenAIConfig{BaseURL: srv.URL(), APIKey: "k-test", Model: model})
}

func TestMeaningRecall(t *testing.T) {
	ctx := context.Background()
	srv := memorytest.NewEmbedServer(t, 64)
	srv.Synonym("car", "automobile")
	f := newFixture(t, memory.Config{Embedder: embedder(srv, "fake-64")})
	car := f.remember(t, "ag_a", "My automobile is a blue Volvo")
	f.remember(t, "ag_a", "Roses grow by the fence")

	res, err := f.svc.Recall(ctx, "ag_a", "what colour is the car", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].ID != car.ID || res[0].Keyword != 0 || res[0].Meaning < 0.25 {
		t.Fatalf("got %+v, want the automobile found by meaning alone", res)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if last.Model != "fake-64" || last.Authorization != "Bearer k-test" || last.Input[0] != "what colour is the car" {
		t.Errorf("last embeddings request: got %+v", last)
	}
}

func TestHybridRanking(t *testing.T) {
	ctx := context.Background()
	srv := memorytest.NewEmbedServer(t, 64)
	f := newFixture(t, memory.Config{Embedder: embedder(srv, "fake-64")})
	for _, s := range []string{
		"Deploys to production need a green build",
		"Production deploys happen on Tuesday mornings after standup",
		"The build server is in the basement",
		"Tuesday standup moved to 10am",
	} {
		f.remember(t, "ag_a", s)
	}
	res, err := f.svc.Recall(ctx, "ag_a", "production deploys Tuesday", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 3 || res[0].Text != "Production deploys happen on Tuesday mornings after standup" {
		t.Fatalf("got %q, want the memory matching every word first", texts(res))
	}
	if !sort.SliceIsSorted(res, func(i, j int) bool { return res[i].Score > res[j].Score }) {
		t.Errorf("not sorted by score: %+v", res)
	}
	for _, s := range res {
		if want := 0.5*s.Meaning + 0.3*s.Keyword + 0.2*s.Strength; !near(s.Score, want) {
			t.Errorf("%q: score %v, want 0.5·%v + 0.3·%v + 0.2·%v", s.Text, s.Score, s.Meaning, s.Keyword, s.Strength)
		}
		if s.Meaning == 0 {
			t.Errorf("%q: no meaning score in hybrid mode", s.Text)
		}
	}
}

// A memory close in meaning is named as the candidate, and replaced only
// on the agent's word.
func TestCloseByMeaning(t *testing.T) {
	ctx := context.Background()
	srv := memorytest.NewEmbedServer(t, 64)
	srv.Synonym("car", "automobile")
	f := newFixture(t, memory.Config{Embedder: embedder(srv, "fake-64")})
	old := f.remember(t, "ag_a", "The car is red")
	r, err := f.svc.Remember(ctx, "ag_a", "The automobile is red", memory.Source{}, memory.RememberOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Superseded != nil || r.Candidate == nil || r.Candidate.ID != old.ID || !strings.Contains(r.Reason, "meaning") {
		t.Fatalf("got %+v, want the car memory named by meaning and kept", r)
	}
	if _, err := f.svc.Remember(ctx, "ag_a", "The automobile is red", memory.Source{}, memory.RememberOptions{Supersedes: old.ID}); err != nil {
		t.Fatal(err)
	}
	res, _ := f.svc.Recall(ctx, "ag_a", "red automobile", 5)
	if len(res) != 1 || res[0].ID != r.Memory.ID {
		t.Errorf("recall: got %v, want only the new one", texts(res))
	}
}

func TestEmbeddingFailureFallsBackToKeywords(t *testing.T) {
	ctx := context.Background()
	srv := memorytest.NewEmbedServer(t, 64)
	f := newFixture(t, memory.Config{Embedder: embedder(srv, "fake-64")})
	srv.FailNext(1)
	m := f.remember(t, "ag_a", "The printer is on floor two")
	if n, _ := f.svc.Stale(ctx); n != 1 {
		t.Errorf("stale after a failed embedding: got %d, want 1", n)
	}
	srv.FailNext(1)
	res, err := f.svc.Recall(ctx, "ag_a", "printer floor", 5)
	if err != nil || len(res) != 1 || res[0].ID != m.ID || res[0].Meaning != 0 {
		t.Fatalf("recall with the endpoint down: got %+v, %v; want a keyword hit", res, err)
	}
	if err := f.svc.Reembed(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, _ = f.svc.Recall(ctx, "ag_a", "printer floor", 5)
	if len(res) != 1 || res[0].Meaning == 0 {
		t.Errorf("after Reembed: got %+v, want a meaning score", res)
	}
}

func TestReembedOnModelChange(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "vectors")
	srv := memorytest.NewEmbedServer(t, 64)
	f := newFixture(t, memory.Config{Embedder: embedder(srv, "model-a"), VectorDir: dir})
	for _, s := range []string{"Alpha likes tea", "Bravo likes coffee", "Charlie likes water"} {
		f.remember(t, "ag_a", s)
	}

	// Reopening with the same model finds the persisted vectors.
	same, err := memory.New(f.db, memory.Config{Now: f.clock.Now, Embedder: embedder(srv, "model-a"), VectorDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := same.Stale(ctx); n != 0 {
		t.Errorf("stale with the same model: got %d, want 0", n)
	}
	if res, _ := same.Recall(ctx, "ag_a", "tea", 1); len(res) != 1 || res[0].Meaning == 0 {
		t.Errorf("recall after reopen: got %+v, want a meaning score from the persisted vectors", res)
	}

	changed, err := memory.New(f.db, memory.Config{Now: f.clock.Now, Embedder: embedder(srv, "model-b"), VectorDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := changed.Stale(ctx); n != 3 {
		t.Fatalf("stale after the model changed: got %d, want 3", n)
	}
	if res, _ := changed.Recall(ctx, "ag_a", "coffee", 1); len(res) != 1 || res[0].Meaning != 0 {
		t.Errorf("before Reembed: got %+v, want keyword-only (no vectors of model-b)", res)
	}
	var calls [][2]int
	if err := changed.Reembed(ctx, func(done, total int) { calls = append(calls, [2]int{done, total}) }); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 || calls[0] != [2]int{3, 3} {
		t.Errorf("progress: got %v, want [[3 3]]", calls)
	}
	if n, _ := changed.Stale(ctx); n != 0 {
		t.Errorf("stale after Reembed: got %d", n)
	}
	if res, _ := changed.Recall(ctx, "ag_a", "coffee", 1); len(res) != 1 || res[0].Meaning == 0 {
		t.Errorf("after Reembed: got %+v, want a meaning score", res)
	}
	if dirs, _ := filepath.Glob(filepath.Join(dir, "*")); len(dirs) != 1 {
		t.Errorf("vector collections after Reembed: got %d, want 1 (model-a dropped)", len(dirs))
	}
}

func TestOpenAIEmbedderErrors(t *testing.T) {
	srv := memorytest.NewEmbedServer(t, 8)
	srv.FailNext(1)
	_, err := embedder(srv, "m").Embed(context.Background(), []string{"x"})
	if err == nil || !strings.Contains(err.Error(), "500") || !strings.Contains(err.Error(), "scripted failure") {
		t.Errorf("got %v, want the status and the endpoint's message", err)
	}
	bad := memory.NewOpenAI(memory.OpenAIConfig{BaseURL: srv.URL() + "/nope", Model: "m"})
	if _, err := bad.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("wrong path: got %v, want a 404 error", err)
	}
	vs, err := embedder(srv, "m").Embed(context.Background(), []string{"a b", "c"})
	if err != nil || len(vs) != 2 || len(vs[0]) != 8 {
		t.Errorf("got %d vectors (%v), want 2 of 8 dims", len(vs), err)
	}
}
