package secret

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Resolve replaces every ${NAME} in text with lookup(NAME). $${NAME} is the
// escape for a literal ${NAME}; $NAME and a lone $ stay as they are, so shell
// text passes through. It substitutes all references or none: a malformed
// reference, or any name lookup does not know, is an fault.Invalid error that
// says where and what to write instead (the unknown names all in one error).
// lookup is called only for names written in text.
func Resolve(text string, lookup func(name string) (string, bool)) (string, error) {
	return Expand(text, lookup, nil)
}

// Expand is Resolve where what replaces each reference is put(name, value,
// at), at being the index in text where the reference starts: a shell
// command quotes the value for where it stands. An error from put is
// returned as it is. put nil writes the value as it is.
func Expand(text string, lookup func(name string) (string, bool), put func(name, value string, at int) (string, error)) (string, error) {
	if strings.IndexByte(text, '$') < 0 {
		return text, nil
	}
	var b strings.Builder
	type found struct {
		value string
		ok    bool
	}
	var seen map[string]found // each name is looked up once
	var unknown []string
	i := 0
	for {
		j := strings.IndexByte(text[i:], '$')
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		j += i
		b.WriteString(text[i:j])
		switch {
		case strings.HasPrefix(text[j:], "$${"):
			b.WriteString("${")
			i = j + 3
		case strings.HasPrefix(text[j:], "${"):
			name, end, err := reference(text, j)
			if err != nil {
				return "", err
			}
			f, looked := seen[name]
			if !looked {
				f.value, f.ok = lookup(name)
				if !f.ok {
					unknown = append(unknown, name)
				}
				if seen == nil {
					seen = map[string]found{}
				}
				seen[name] = f
			}
			if put != nil && f.ok {
				v, err := put(name, f.value, j)
				if err != nil {
					return "", err
				}
				b.WriteString(v)
			} else {
				b.WriteString(f.value)
			}
			i = end
		default:
			b.WriteByte('$')
			i = j + 1
		}
	}
	if len(unknown) > 0 {
		s, them := "", "it"
		if len(unknown) > 1 {
			s, them = "s", "them"
		}
		return "", fault.Invalid("no workspace variable%s named %s; add %s in Settings → Variables (names are case-sensitive), or write $${%s} for a literal ${%s}",
			s, strings.Join(unknown, ", "), them, unknown[0], unknown[0])
	}
	return b.String(), nil
}

// reference reads the ${NAME} starting at text[start] and returns NAME and the
// index after the closing brace.
func reference(text string, start int) (name string, end int, err error) {
	i := start + 2
	for i < len(text) && isNameByte(text[i], i == start+2) {
		i++
	}
	if i < len(text) && text[i] == '}' && i > start+2 {
		return text[start+2 : i], i + 1, nil
	}
	line, col := position(text, start)
	close := strings.IndexByte(text[start:], '}')
	if close < 0 {
		return "", 0, fault.Invalid("${ at line %d, column %d is not closed: write ${NAME} with a closing }, or $${ for a literal ${", line, col)
	}
	return "", 0, fault.Invalid("%s at line %d, column %d is not a variable reference: write ${NAME}, NAME made of letters, digits and _ and not starting with a digit (no spaces, defaults or other shell syntax), or $${ for a literal ${",
		quoteSnippet(text[start:start+close+1]), line, col)
}

func isNameByte(c byte, first bool) bool {
	return c == '_' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || !first && '0' <= c && c <= '9'
}

// position is the 1-based line and column (in characters) of text[i].
func position(text string, i int) (line, col int) {
	before := text[:i]
	line = strings.Count(before, "\n") + 1
	return line, utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:]) + 1
}

// quoteSnippet quotes s for an error message, cut to one short line.
func quoteSnippet(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "…"
	}
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}
