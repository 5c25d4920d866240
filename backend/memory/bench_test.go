package memory

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// localEmbedder is the fake model in process, so benchmarks time the store,
// not HTTP.
type localEmbedder struct{ dims int }

func (e localEmbedder) Model() string { return fmt.Sprintf("local-%d", e.dims) }
func (e localEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = memorytest.Vector(t, e.dims)
	}
	return out, nil
}

var vocab = func() []string {
	r := rand.New(rand.NewPCG(1, 2))
	const letters = "abcdefghijklmnopqrstuvwxyz"
	out := make([]string, 5000)
	for i := range out {
		b := make([]byte, 4+r.IntN(6))
		for j := range b {
			b[j] = letters[r.IntN(len(letters))]
		}
		out[i] = string(b)
	}
	return out
}()

// sentence draws words with a skewed distribution, like real text.
func sentence(r *rand.Rand) string {
	n := 8 + r.IntN(8)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = vocab[int(float64(len(vocab))*r.Float64()*r.Float64())]
	}
	return strings.Join(ws, " ")
}

// sizes are the numbers of memories benchmarks run at: keyword recall's
// goal is at 100,000 (make bench); the vector benchmarks add it with
// RERUN_BENCH_BIG=1 (a 384-dim vector each is 150 MB).
func sizes(big bool) []int {
	s := []int{1_000, 10_000}
	if big || os.Getenv("RERUN_BENCH_BIG") == "1" {
		s = append(s, 100_000)
	}
	return s
}

// populate bulk-inserts n memories for agent ag_a (and their vectors when the
// service has an embedder) without going through Remember.
func populate(b *testing.B, s *Service, n int) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	now := store.FormatTime(s.cfg.Now())
	model := s.modelName()
	ids := make([]string, n)
	texts := make([]string, n)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		for i := range n {
			ids[i], texts[i] = store.NewID("mem"), sentence(r)
			if _, err := tx.ExecContext(ctx, `INSERT INTO memories (id, agent_id, text, strength, reinforced_at, embed_model, created_at, updated_at)
				VALUES (?, 'ag_a', ?, ?, ?, ?, ?, ?)`, ids[i], texts[i], 0.2+0.8*r.Float64(), now, model, now, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if s.vec != nil {
		vecs, _ := s.cfg.Embedder.Embed(ctx, texts)
		if err := s.vec.add(ctx, "ag_a", model, ids, vecs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchService(b *testing.B, emb Embedder) *Service {
	db := storetest.Open(b)
	now := store.FormatTime(time.Now())
	db.Exec(`INSERT INTO boxes (id, name, position, created_at) VALUES ('bx', 'B', 0, ?)`, now)
	if _, err := db.Exec(`INSERT INTO agents (id, name, handle, box_id, created_at, updated_at) VALUES ('ag_a', 'A', 'a', 'bx', ?, ?)`, now, now); err != nil {
		b.Fatal(err)
	}
	s, err := New(db, Config{Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// reportLatency adds p50 and p95 in milliseconds.
func reportLatency(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(d[len(d)*95/100].Microseconds())/1000, "p95-ms")
}

func benchRecall(b *testing.B, emb Embedder) {
	for _, n := range sizes(emb == nil) {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchService(b, emb)
			populate(b, s, n)
			r := rand.New(rand.NewPCG(5, 6))
			ctx := context.Background()
			var lat []time.Duration
			for b.Loop() {
				q := sentence(r)[:30]
				start := time.Now()
				if _, err := s.Recall(ctx, "ag_a", q, 5); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkRecallKeyword: Recall (FTS5 BM25 + strength + reinforcing the 5
// returned, one write transaction) with keywords only.
func BenchmarkRecallKeyword(b *testing.B) { benchRecall(b, nil) }

// BenchmarkRecallHybrid: Recall with 384-dim vectors (query embedding in
// process, chromem linear scan, FTS5, blend, reinforcement).
func BenchmarkRecallHybrid(b *testing.B) { benchRecall(b, localEmbedder{384}) }

// BenchmarkVectorQuery: the chromem nearest-neighbour query alone, 384 dims.
func BenchmarkVectorQuery(b *testing.B) {
	for _, n := range sizes(false) {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			s := benchService(b, localEmbedder{384})
			populate(b, s, n)
			r := rand.New(rand.NewPCG(7, 8))
			ctx := context.Background()
			var lat []time.Duration
			for b.Loop() {
				v := memorytest.Vector(sentence(r), 384)
				start := time.Now()
				if _, err := s.vec.query(ctx, "ag_a", "local-384", v, 20); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			reportLatency(b, lat)
		})
	}
}

// BenchmarkRemember: one Remember each (near-duplicate check, insert with
// FTS, one fsynced transaction), keywords only and with 384-dim vectors.
func BenchmarkRemember(b *testing.B) {
	for _, c := range []struct {
		name string
		emb  Embedder
	}{{"keyword", nil}, {"vector384", localEmbedder{384}}} {
		b.Run(c.name, func(b *testing.B) {
			s := benchService(b, c.emb)
			populate(b, s, 1000)
			r := rand.New(rand.NewPCG(9, 10))
			ctx := context.Background()
			start := time.Now()
			n := 0
			for b.Loop() {
				if _, err := s.Remember(ctx, "ag_a", sentence(r), Source{}, RememberOptions{}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), "remembers/s")
		})
	}
}
