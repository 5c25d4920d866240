package memory

import (
	"errors"
	"math"
	"runtime"
	"sort"
	"sync"
)

// flat is an exhaustive cosine index over one collection's vectors, kept
// beside chromem (which persists them): normalised vectors in one contiguous
// slice, scanned in parallel with a private top-n per worker. chromem's own
// scan walks a map of pointers through a channel and locks a shared heap per
// document, which at 100k vectors costs several times the arithmetic.
type flat struct {
	dims int
	ids  []string
	data []float32 // len(ids)·dims
	pos  map[string]int
}

func newFlat() *flat { return &flat{pos: map[string]int{}} }

func normalised(v []float32) []float32 {
	var s float32
	for _, x := range v {
		s += x * x
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	n := float32(math.Sqrt(float64(s)))
	for i, x := range v {
		out[i] = x / n
	}
	return out
}

// put stores (or replaces) id's vector.
func (f *flat) put(id string, v []float32) error {
	if f.dims == 0 {
		f.dims = len(v)
	}
	if len(v) != f.dims {
		return errors.New("vectors must have the same length")
	}
	v = normalised(v)
	if i, ok := f.pos[id]; ok {
		copy(f.data[i*f.dims:], v)
		return nil
	}
	f.pos[id] = len(f.ids)
	f.ids = append(f.ids, id)
	f.data = append(f.data, v...)
	return nil
}

// del removes id's vector (swapping the last one into its place).
func (f *flat) del(id string) {
	i, ok := f.pos[id]
	if !ok {
		return
	}
	last := len(f.ids) - 1
	if i != last {
		f.ids[i] = f.ids[last]
		f.pos[f.ids[i]] = i
		copy(f.data[i*f.dims:(i+1)*f.dims], f.data[last*f.dims:])
	}
	f.ids = f.ids[:last]
	f.data = f.data[:last*f.dims]
	delete(f.pos, id)
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// topN keeps the n best hits seen, worst first.
type topN struct {
	n    int
	hits []flatHit
}

type flatHit struct {
	i   int
	sim float32
}

func (t *topN) add(i int, sim float32) {
	if len(t.hits) == t.n {
		if sim <= t.hits[0].sim {
			return
		}
		copy(t.hits, t.hits[1:])
		t.hits = t.hits[:len(t.hits)-1]
	}
	// insertion into ascending order (n is small)
	j := sort.Search(len(t.hits), func(k int) bool { return t.hits[k].sim >= sim })
	t.hits = append(t.hits, flatHit{})
	copy(t.hits[j+1:], t.hits[j:])
	t.hits[j] = flatHit{i, sim}
}

// query returns up to n ids nearest to q by cosine, best first.
func (f *flat) query(q []float32, n int) ([]vectorHit, error) {
	count := len(f.ids)
	n = min(n, count)
	if n <= 0 {
		return nil, nil
	}
	if len(q) != f.dims {
		return nil, errors.New("vectors must have the same length")
	}
	q = normalised(q)
	workers := min(runtime.GOMAXPROCS(0), max(1, count/4096))
	tops := make([]topN, workers)
	var wg sync.WaitGroup
	per := (count + workers - 1) / workers
	for w := range workers {
		lo, hi := w*per, min(count, (w+1)*per)
		tops[w] = topN{n: n, hits: make([]flatHit, 0, n+1)}
		wg.Add(1)
		go func(t *topN) {
			defer wg.Done()
			d := f.dims
			for i := lo; i < hi; i++ {
				t.add(i, dot(q, f.data[i*d:(i+1)*d]))
			}
		}(&tops[w])
	}
	wg.Wait()
	var all []flatHit
	for _, t := range tops {
		all = append(all, t.hits...)
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].sim != all[b].sim {
			return all[a].sim > all[b].sim
		}
		return all[a].i < all[b].i
	})
	all = all[:min(n, len(all))]
	out := make([]vectorHit, len(all))
	for i, h := range all {
		out[i] = vectorHit{f.ids[h.i], float64(h.sim)}
	}
	return out, nil
}
