package memory

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// The retrieval benchmark: a few hundred synthetic facts about people (a
// phone, an email, a birthday, an office, a manager each) with distractors
// that share most of their words (a fax, a home phone, a namesake), and
// questions asked literally and in paraphrase ("How do I call …?"). It
// reports recall@5 — how often the fact a question is about is among the
// five memories returned — for keywords only, meaning only (the fake
// embedder, which knows the paraphrases' synonyms, as a real model would)
// and the hybrid ranking Match uses with an embedder.

// synonyms are what the fake model knows: a paraphrase's word embeds like
// the fact's.
var synonyms = map[string]string{
	"call": "phone", "telephone": "phone", "ring": "phone",
	"write": "email", "mail": "email",
	"born":  "birthday",
	"works": "office", "sits": "office",
	"boss": "manager", "reports": "manager",
}

// synonymEmbedder is the fake model in process, with synonyms.
type synonymEmbedder struct{ dims int }

func (e synonymEmbedder) Model() string { return fmt.Sprintf("synonyms-%d", e.dims) }
func (e synonymEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = memorytest.Vector(withSynonyms(t), e.dims)
	}
	return out, nil
}

func withSynonyms(s string) string {
	ws := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range ws {
		if to, ok := synonyms[w]; ok {
			ws[i] = to
		}
	}
	return strings.Join(ws, " ")
}

type question struct{ text, fact string }

// corpus makes the facts (the first ones the targets, then distractors)
// and the questions.
func corpus() (facts []string, qs []question) {
	first := []string{"Ana", "Ben", "Chloe", "Dario", "Elif", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira", "Luca"}
	last := []string{"Lopez", "Novak", "Okafor", "Petrov", "Quinn"}
	cities := []string{"Berlin", "Lisbon", "Oslo", "Porto", "Riga", "Turin", "Lyon", "Ghent"}
	months := []string{"January", "March", "May", "July", "September", "November"}
	i := 0
	for _, f := range first {
		for _, l := range last {
			name := f + " " + l
			phone := fmt.Sprintf("555-%04d", 1000+i*7)
			email := strings.ToLower(f) + "." + strings.ToLower(l) + "@acme.test"
			city := cities[i%len(cities)]
			boss := first[(i+3)%len(first)] + " " + last[(i+1)%len(last)]
			day := fmt.Sprintf("%s %d", months[i%len(months)], 1+i%28)
			add := func(fact string, asks ...string) {
				facts = append(facts, fact)
				for _, a := range asks {
					qs = append(qs, question{a, fact})
				}
			}
			add(name+"'s phone number is "+phone, "What is "+name+"'s phone number?", "How do I call "+name+"?")
			add(name+"'s email address is "+email, "What is "+name+"'s email address?", "Where do I write to "+name+"?")
			add(name+"'s birthday is on "+day, "When is "+name+"'s birthday?", "When was "+name+" born?")
			add(name+" has an office in "+city, "Which office is "+name+" in?", "Where does "+name+" work?")
			add(name+"'s manager is "+boss, "Who is "+name+"'s manager?", "Who is the boss of "+name+"?")
			// Distractors: the same words around another value.
			facts = append(facts, name+"'s fax number is "+fmt.Sprintf("555-%04d", 9000+i),
				name+"'s home phone number is unlisted",
				"The "+city+" office has a new manager")
			i++
		}
	}
	return facts, qs
}

func qualityService(b *testing.B, emb Embedder, facts []string) (*Service, map[string]string) {
	s := benchService(b, emb)
	ctx := context.Background()
	ids := map[string]string{}
	now := store.FormatTime(s.cfg.Now())
	model := s.modelName()
	var idList []string
	for _, f := range facts {
		id := store.NewID("mem")
		if _, err := s.db.ExecContext(ctx, `INSERT INTO memories (id, agent_id, text, strength, reinforced_at, embed_model, created_at, updated_at)
			VALUES (?, 'ag_a', ?, 1, ?, ?, ?, ?)`, id, f, now, model, now, now); err != nil {
			b.Fatal(err)
		}
		ids[f] = id
		idList = append(idList, id)
	}
	if s.vec != nil {
		vecs, _ := s.cfg.Embedder.Embed(ctx, facts)
		if err := s.vec.add(ctx, "ag_a", model, idList, vecs); err != nil {
			b.Fatal(err)
		}
	}
	return s, ids
}

func BenchmarkRecallQuality(b *testing.B) {
	facts, qs := corpus()
	const k = 5
	emb := synonymEmbedder{dims: 256}
	report := func(b *testing.B, hit func(q question) bool) {
		var found int
		for range b.N {
			found = 0
			for _, q := range qs {
				if hit(q) {
					found++
				}
			}
		}
		b.ReportMetric(float64(found)/float64(len(qs)), "recall@5")
		b.ReportMetric(float64(len(facts)), "facts")
		b.ReportMetric(float64(len(qs)), "questions")
	}
	inTop := func(s *Service, ids map[string]string) func(q question) bool {
		return func(q question) bool {
			got, err := s.Match(context.Background(), "ag_a", q.text, k)
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range got {
				if m.ID == ids[q.fact] {
					return true
				}
			}
			return false
		}
	}
	b.Run("keyword", func(b *testing.B) {
		s, ids := qualityService(b, nil, facts)
		report(b, inTop(s, ids))
	})
	b.Run("vector", func(b *testing.B) {
		vecs, _ := emb.Embed(context.Background(), facts)
		report(b, func(q question) bool {
			qv, _ := emb.Embed(context.Background(), []string{q.text})
			type scored struct {
				fact string
				cos  float64
			}
			all := make([]scored, len(facts))
			for i, v := range vecs {
				all[i] = scored{facts[i], cosine(qv[0], v)}
			}
			sort.SliceStable(all, func(i, j int) bool { return all[i].cos > all[j].cos })
			for _, s := range all[:k] {
				if s.fact == q.fact {
					return true
				}
			}
			return false
		})
	})
	b.Run("hybrid", func(b *testing.B) {
		s, ids := qualityService(b, emb, facts)
		report(b, inTop(s, ids))
	})
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
