package search

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Limits of a query typed by a person or passed by a client.
const (
	MaxQueryLen   = 500 // bytes
	maxQueryTerms = 16
)

// Query is a search typed by a person, made safe for FTS5.
type Query struct {
	// Match is the FTS5 expression: every word and "quoted phrase" must
	// appear (a word ending in * also as the start of a longer one), none
	// of the -excluded ones.
	Match string
	// Terms are the words and phrases to find, lowercased, for highlighting.
	Terms []string
}

// Parse turns what a person typed into an FTS5 expression. Every term is
// quoted, so FTS5's operators and column filters (AND, NEAR, col:, ^, …)
// are plain words here and no input reaches SQLite as a syntax error:
//
//	deploy failed      both words
//	deploy*            deploy, deployment, deploying…
//	"rate limit"       the phrase
//	invoice -draft     invoice but not draft
//
// Words match whole unless they end in *: FTS5 reads a prefix's every
// matching document before the first (100 ms for a common prefix in
// 100,000 runs), a whole word's newest first as it goes.
func Parse(text string) (Query, error) {
	if len(text) > MaxQueryLen {
		return Query{}, fault.Invalid("the search is %d characters long; keep it under %d", len(text), MaxQueryLen)
	}
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, " "))
	var pos, neg []string
	var terms []string
	for _, t := range split(text) {
		if !searchable(t.text) {
			continue
		}
		if len(pos)+len(neg) == maxQueryTerms {
			break
		}
		prefix := !t.phrase && strings.HasSuffix(t.text, "*")
		if prefix {
			t.text = strings.TrimRight(t.text, "*")
			if !searchable(t.text) {
				continue
			}
		}
		q := `"` + strings.ReplaceAll(t.text, `"`, `""`) + `"`
		if prefix {
			q += "*"
		}
		if t.exclude {
			neg = append(neg, q)
			continue
		}
		pos = append(pos, q)
		terms = append(terms, strings.ToLower(t.text))
	}
	if len(pos) == 0 {
		if len(neg) > 0 {
			return Query{}, fault.Invalid("say a word to find besides the ones to leave out (-word)")
		}
		return Query{}, fault.Invalid("type a word to search for")
	}
	match := strings.Join(pos, " AND ")
	for _, n := range neg {
		match += " NOT " + n
	}
	return Query{Match: match, Terms: terms}, nil
}

type term struct {
	text    string
	phrase  bool
	exclude bool
}

// split cuts text into words and "quoted phrases"; a leading - excludes
// one. An unclosed quote runs to the end.
func split(text string) []term {
	var out []term
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			i += size
			continue
		}
		exclude := false
		if r == '-' && i+1 < len(text) && text[i+1] != ' ' {
			exclude = true
			i++
		}
		if i < len(text) && text[i] == '"' {
			end := strings.IndexByte(text[i+1:], '"')
			if end < 0 {
				out = append(out, term{text[i+1:], true, exclude})
				break
			}
			out = append(out, term{text[i+1 : i+1+end], true, exclude})
			i += end + 2
			continue
		}
		end := strings.IndexFunc(text[i:], unicode.IsSpace)
		if end < 0 {
			end = len(text) - i
		}
		w := strings.Trim(text[i:i+end], `"`)
		out = append(out, term{w, false, exclude})
		i += end
	}
	return out
}

// searchable says whether s holds a letter or digit: the tokenizer keeps
// nothing else, and a term of separators only would match nothing.
func searchable(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			return true
		}
	}
	return false
}
