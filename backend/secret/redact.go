package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/url"
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
}

// maxHead bounds the part of a pattern kept in the automaton; the rest is
// compared after the head matched. It keeps a 64 KiB value (and its fifteen
// forms) from growing the automaton by a million nodes.
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
	for _, name := range names {
		for _, f := range forms(values[name]) {
			f = stripBreaks(f)
			if f == "" || seen[f] {
				continue
			}
			seen[f] = true
			head := min(len(f), maxHead)
			heads = append(heads, f[:head])
			r.pats = append(r.pats, pattern{n: len(f), head: head, rest: f[head:], name: name, next: -1})
		}
	}
	r.build(heads)
	return r
}

// forms lists what v may look like in a tool's output (duplicates included).
func forms(v string) []string {
	b := []byte(v)
	fs := []string{
		v,
		base64.StdEncoding.EncodeToString(b),
		base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b),
		base64.RawURLEncoding.EncodeToString(b),
		url.QueryEscape(v),
		url.PathEscape(v),
		jsonString(v, true),
		jsonString(v, false),
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for offset := range 3 {
			// Cut from a short value, a few characters would match
			// everywhere in base64 text.
			if f := base64Inner(b, offset, enc); len(f) >= minMaskable {
				fs = append(fs, f)
			}
		}
	}
	return fs
}

// base64Inner is the part of the base64 encoding of v that stays the same
// wherever v sits in a longer stream whose bytes before v number offset
// (mod 3): the characters that mix in bits of neighbouring bytes are left out.
func base64Inner(v []byte, offset int, enc *base64.Encoding) string {
	s := enc.EncodeToString(append(make([]byte, offset, offset+len(v)), v...))
	s = s[[]int{0, 2, 3}[offset]:]
	if (offset+len(v))%3 != 0 && s != "" {
		s = s[:len(s)-1]
	}
	return s
}

// jsonString is v as encoding/json writes it inside a string, without quotes.
func jsonString(v string, escapeHTML bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	enc.Encode(v) // a string always encodes
	s := strings.TrimSuffix(buf.String(), "\n")
	return s[1 : len(s)-1]
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
	if r == nil || len(r.pats) == 0 {
		return s
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
	if spans == nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		b.WriteString("[redacted:")
		b.WriteString(r.pats[sp.pat].name)
		b.WriteString("]")
		prev = sp.end
	}
	b.WriteString(s[prev:])
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
