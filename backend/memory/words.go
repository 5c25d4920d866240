package memory

import (
	"strings"
	"unicode"
)

// maxQueryTerms bounds the FTS5 query: recall by a whole paragraph of run input
// should not turn into a hundred-term OR.
const maxQueryTerms = 24

// stopwords are dropped from queries and from near-duplicate comparison: they
// match almost every memory and say nothing about its subject.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from
		had has have he her him his how i if in into is it its me my no not of on or our she so
		than that the their them then there these they this to too us was we were what when where
		which who why will with would you your yours`) {
		m[w] = true
	}
	return m
}()

// words splits text into lowercase runs of letters and digits, without
// stopwords, in order of appearance, each once.
func words(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// MatchQuery turns free text into a safe FTS5 MATCH expression: each word
// (letters and digits only, so no FTS5 syntax survives) double-quoted, joined
// by OR so BM25 ranks memories sharing more of the words higher. It returns ""
// when the text has no searchable word.
func MatchQuery(text string) string {
	ws := words(text)
	if len(ws) > maxQueryTerms {
		ws = ws[:maxQueryTerms]
	}
	var b strings.Builder
	for i, w := range ws {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(w)
		b.WriteByte('"')
	}
	return b.String()
}

// jaccard is |A∩B| / |A∪B| over the words of a and b.
func jaccard(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 || len(wb) == 0 {
		return 0
	}
	set := make(map[string]bool, len(wa))
	for _, w := range wa {
		set[w] = true
	}
	inter := 0
	for _, w := range wb {
		if set[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

// sameText reports whether a and b say the same words in the same order,
// ignoring case, punctuation and spacing.
func sameText(a, b string) bool {
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}), " ")
	}
	return norm(a) == norm(b)
}
