package secret

import (
	"slices"
	"strings"
)

// Redactor masks the values of variables in text as [redacted:NAME]. It is
// immutable and safe for concurrent use.
//
// Besides the raw value it finds the forms a value takes when a tool passes it
// on: base64 (standard and URL alphabets, padded or not, and at any offset of a
// longer encoded stream), URL query and path escaping, and JSON string
// escaping (with and without HTML escaping). Line breaks (\r and \n, and the
// \r and \n escapes that stand for them in JSON text) are skipped while
// matching, so a value wrapped by base64 or cut by fold is still found, also
// inside a JSON tool result; its mask then covers those breaks too. Where
// matches overlap they are masked as one, named after the longest.
//
// All forms of all values go into one Aho–Corasick automaton, so Redact reads
// the text once whatever the number of variables.
type Redactor struct {
	pats  []pattern
	root  [256]int32 // next node from the root, for every byte (0: stay at the root)
	first []int32    // node n's children are edges[first[n]:first[n+1]]
	edges []edge
	fail  []int32 // the node of the longest proper suffix that is in the trie
	term  []int32 // the first pattern whose head ends at node n, -1 for none
	out   []int32 // the deepest node on n's failure chain (n included) that ends a head, -1 for none

	longest int // see Longest
}

// maxHead bounds the part of a pattern kept in the automaton; the rest is
// compared after the head matched. It keeps a 64 KiB value (and its forty
// forms) from growing the automaton by a million nodes. The rarer forms get a
// quarter of it: 64 bytes of an encoded value are as unlikely in other text.
const maxHead = 256

type pattern struct {
	n    int    // length, line breaks excluded
	head int    // the first min(n, maxHead) bytes are in the automaton
	rest string // the bytes after the head
	name string
	next int32 // another pattern with the same head, -1 for none
}

type edge struct {
	c  byte
	to int32
}

// minMaskable is the shortest value, in bytes without line breaks, that can
// be masked without masking ordinary text along with it.
const minMaskable = 4

// NewRedactor returns a Redactor for values (name → value). Where several
// variables share a form, the first name in sorted order labels it.
func NewRedactor(values map[string]string) *Redactor {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names)
	r := &Redactor{}
	seen := map[string]bool{}
	var heads []string
	add := func(name, f string, limit int) {
		f = stripBreaks(f)
		if f == "" || seen[f] {
			return
		}
		seen[f] = true
		head := min(len(f), limit)
		heads = append(heads, f[:head])
		r.pats = append(r.pats, pattern{n: len(f), head: head, rest: f[head:], name: name, next: -1})
		r.longest = max(r.longest, len(f))
	}
	for _, name := range names {
		common, more := forms(values[name])
		for _, f := range common {
			add(name, f, maxHead)
		}
		for _, f := range more {
			add(name, f, maxHead/4)
		}
	}
	r.build(heads)
	return r
}

// Longest is the length of the longest form of any value, line breaks
// excluded: text cut further than that from a piece kept holds no part of a
// value that reaches into the piece.
func (r *Redactor) Longest() int {
	if r == nil {
		return 0
	}
	return r.longest
}

// breakLen is the length of the line break at s[i]: 1 for \r or \n, 2 for
// the escaped \n or \r that JSON output (a tool's result object) carries
// instead, 0 for none.
func breakLen(s string, i int) int {
	switch c := s[i]; {
	case c == '\n' || c == '\r':
		return 1
	case c == '\\' && i+1 < len(s) && (s[i+1] == 'n' || s[i+1] == 'r'):
		return 2
	}
	return 0
}

// inBreak reports whether s[i] belongs to a line break as breakLen reads
// them from the start. It needs no context: the byte before an escape's n or
// r is a backslash, which cannot end an earlier break.
func inBreak(s string, i int) bool {
	c := s[i]
	return breakLen(s, i) > 0 || (c == 'n' || c == 'r') && i > 0 && s[i-1] == '\\'
}

func hasBreaks(s string) bool {
	return strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0 ||
		strings.Contains(s, `\n`) || strings.Contains(s, `\r`)
}

// stripBreaks is s without its line breaks.
func stripBreaks(s string) string {
	if !hasBreaks(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if n := breakLen(s, i); n > 0 {
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// build makes the automaton of heads (pattern i's head is heads[i]).
func (r *Redactor) build(heads []string) {
	type trieEdge struct {
		from int32
		c    byte
		to   int32
	}
	child := map[uint64]int32{} // from<<8 | c → to
	var tedges []trieEdge
	r.term = []int32{-1}
	for id, s := range heads {
		cur := int32(0)
		for i := 0; i < len(s); i++ {
			k := uint64(cur)<<8 | uint64(s[i])
			next, ok := child[k]
			if !ok {
				next = int32(len(r.term))
				r.term = append(r.term, -1)
				child[k] = next
				tedges = append(tedges, trieEdge{cur, s[i], next})
			}
			cur = next
		}
		r.pats[id].next = r.term[cur]
		r.term[cur] = int32(id)
	}
	n := len(r.term)
	r.first = make([]int32, n+1)
	for _, e := range tedges {
		r.first[e.from+1]++
	}
	for i := 1; i <= n; i++ {
		r.first[i] += r.first[i-1]
	}
	r.edges = make([]edge, len(tedges))
	fill := slices.Clone(r.first[:n])
	for _, e := range tedges {
		r.edges[fill[e.from]] = edge{e.c, e.to}
		fill[e.from]++
	}

	r.fail = make([]int32, n)
	r.out = make([]int32, n)
	r.out[0] = -1
	queue := make([]int32, 0, n)
	for _, e := range r.edges[r.first[0]:r.first[1]] {
		r.root[e.c] = e.to
		queue = append(queue, e.to)
	}
	// Breadth first: a node's failure target is shallower, so it is done.
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if r.term[u] >= 0 {
			r.out[u] = u
		} else {
			r.out[u] = r.out[r.fail[u]]
		}
		for _, e := range r.edges[r.first[u]:r.first[u+1]] {
			if u != 0 {
				r.fail[e.to] = r.step(r.fail[u], e.c)
			}
			queue = append(queue, e.to)
		}
	}
}

// step is the node after reading c at node st.
func (r *Redactor) step(st int32, c byte) int32 {
	for st != 0 {
		for _, e := range r.edges[r.first[st]:r.first[st+1]] {
			if e.c == c {
				return e.to
			}
		}
		st = r.fail[st]
	}
	return r.root[c]
}

type span struct {
	start, end int
	pat        int32
}

// Redact returns s with every form of every value masked. Text without a
// match comes back as the same string.
func (r *Redactor) Redact(s string) string {
	spans := r.spans(s)
	if spans == nil {
		return s
	}
	return r.render(s, spans, 0, len(s))
}

// Find returns the name of the first value found in s.
func (r *Redactor) Find(s string) (name string, found bool) {
	if spans := r.spans(s); spans != nil {
		return r.pats[spans[0].pat].name, true
	}
	return "", false
}

// RedactRange returns s[lo:hi] with every form of every value masked, where
// the text around the range is read too: a value that only starts or ends
// inside the range is still found, and its mask stands for the part inside.
// It is how an output is masked before it is cut, so that the cut cannot
// leave half a value that no longer matches.
func (r *Redactor) RedactRange(s string, lo, hi int) string {
	lo, hi = max(0, min(lo, len(s))), max(0, min(hi, len(s)))
	if lo >= hi {
		return ""
	}
	spans := r.spans(s)
	if spans == nil {
		return s[lo:hi]
	}
	return r.render(s, spans, lo, hi)
}

// spans finds the matches in s, merged where they overlap, in order.
func (r *Redactor) spans(s string) []span {
	if r == nil || len(r.pats) == 0 {
		return nil
	}
	breaks := hasBreaks(s)
	var spans []span
	st := int32(0)
	for i := 0; i < len(s); i++ {
		if breaks {
			if n := breakLen(s, i); n > 0 {
				i += n - 1
				continue
			}
		}
		st = r.step(st, s[i])
		for t := r.out[st]; t >= 0; t = r.out[r.fail[t]] {
			for p := r.term[t]; p >= 0; p = r.pats[p].next {
				if end := r.rest(s, i+1, p, breaks); end >= 0 {
					spans = r.add(spans, span{r.start(s, i, p, breaks), end, p})
				}
			}
		}
	}
	return spans
}

// render writes s[lo:hi] with the spans replaced by their masks; a span that
// reaches into the range from outside is masked where it enters.
func (r *Redactor) render(s string, spans []span, lo, hi int) string {
	var b strings.Builder
	b.Grow(hi - lo)
	prev := lo
	for _, sp := range spans {
		if sp.end <= lo || sp.start >= hi {
			continue
		}
		b.WriteString(s[prev:max(prev, sp.start)])
		b.WriteString("[redacted:")
		b.WriteString(r.pats[sp.pat].name)
		b.WriteString("]")
		prev = min(sp.end, hi)
	}
	b.WriteString(s[prev:hi])
	return b.String()
}

// rest matches the bytes of pattern p after its head against s from i on and
// returns where the match ends, or -1.
func (r *Redactor) rest(s string, i int, p int32, breaks bool) int {
	rest := r.pats[p].rest
	for k := 0; k < len(rest); {
		if i >= len(s) {
			return -1
		}
		if breaks {
			if n := breakLen(s, i); n > 0 {
				i += n
				continue
			}
		}
		if s[i] != rest[k] {
			return -1
		}
		i++
		k++
	}
	return i
}

// start is where the head of pattern p, which ends at s[end], begins.
func (r *Redactor) start(s string, end int, p int32, breaks bool) int {
	n := r.pats[p].head
	if !breaks {
		return end + 1 - n
	}
	i := end
	for k := n - 1; k > 0; {
		i--
		if !inBreak(s, i) {
			k--
		}
	}
	return i
}

// add puts sp into spans (disjoint, in order), merging it with those it
// overlaps; the merged span is named after the longest pattern in it.
func (r *Redactor) add(spans []span, sp span) []span {
	// Every span in spans starts at or before sp's head ends, so sp overlaps
	// the last ones or none.
	for len(spans) > 0 && sp.start < spans[len(spans)-1].end {
		last := spans[len(spans)-1]
		sp.start, sp.end = min(sp.start, last.start), max(sp.end, last.end)
		if r.pats[last.pat].n >= r.pats[sp.pat].n {
			sp.pat = last.pat
		}
		spans = spans[:len(spans)-1]
	}
	return append(spans, sp)
}
