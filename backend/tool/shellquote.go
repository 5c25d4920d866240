package tool

import (
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// A variable's value pasted into a shell command must stay one piece of
// data: a " in it must not end the agent's quotes, a $(…) must not run. So
// each ${NAME} is quoted for the place it stands in, which a small reading
// of POSIX sh syntax finds: outside quotes the value is single-quoted, inside
// '…' its own quotes are closed and reopened around, inside "…" and in a
// here-document the characters that stay special there are backslashed.

// shellPlace is the quoting in force at a point of a command.
type shellPlace int

const (
	placeBare       shellPlace = iota // outside quotes (also inside $(…) and `…`)
	placeSingle                       // inside '…'
	placeDouble                       // inside "…"
	placeHeredoc                      // in a here-document body that expands $
	placeHeredocLit                   // in a here-document body with a quoted end word: taken as written
	placeComment                      // after #, to the end of the line
	placeEscaped                      // right after a backslash
)

// shellRef is the place of a ${ in a command, and for a here-document the
// word that ends it.
type shellRef struct {
	place      shellPlace
	end        string
	backquotes int // how many `…` it is inside: each reads backslashes once more
}

// shellPlaces reads command as /bin/sh would and returns the place of each
// $ in it, by index. It never fails: text it does not understand is read as
// bare, where the quoting is strictest.
func shellPlaces(command string) map[int]shellRef {
	type frame struct {
		kind   byte // 0 top, '(' for $(…), '`', '"', '\''
		parens int
		nested bool // a `…` opened by \` inside another
	}
	places := map[int]shellRef{}
	stack := []frame{{}}
	var pending []heredocWord
	at := func(i int, p shellPlace) {
		n := 0
		for _, f := range stack {
			if f.kind == '`' {
				n++
			}
		}
		places[i] = shellRef{place: p, backquotes: n}
	}
	atWordStart := true
	s := command
	for i := 0; i < len(s); i++ {
		top := &stack[len(stack)-1]
		c := s[i]
		switch top.kind {
		case '\'':
			switch c {
			case '\'':
				stack = stack[:len(stack)-1]
			case '$':
				at(i, placeSingle)
			}
			continue
		case '"':
			switch c {
			case '\\':
				escaped(s, i, places)
				i++
			case '"':
				stack = stack[:len(stack)-1]
			case '$':
				at(i, placeDouble)
				if i+1 < len(s) && s[i+1] == '(' {
					stack = append(stack, frame{kind: '('})
					i++
				}
			case '`':
				stack = append(stack, frame{kind: '`'})
			}
			continue
		}
		// Bare: the top level, $(…) or `…`.
		wordStart := atWordStart
		atWordStart = strings.IndexByte(" \t\n;&|()<>", c) >= 0
		switch c {
		case '\\':
			if i+1 < len(s) && s[i+1] == '`' && top.kind == '`' {
				// \` inside `…` opens or closes one nested inside it.
				if top.nested {
					stack = stack[:len(stack)-1]
				} else {
					stack = append(stack, frame{kind: '`', nested: true})
				}
				i++
				break
			}
			escaped(s, i, places)
			i++
		case '\'':
			stack = append(stack, frame{kind: '\''})
		case '"':
			stack = append(stack, frame{kind: '"'})
		case '`':
			if top.kind == '`' {
				stack = stack[:len(stack)-1]
			} else {
				stack = append(stack, frame{kind: '`'})
			}
		case '$':
			at(i, placeBare)
			if i+1 < len(s) && s[i+1] == '(' {
				stack = append(stack, frame{kind: '('})
				i++
			}
		case '(':
			top.parens++
		case ')':
			if top.kind == '(' {
				if top.parens == 0 {
					stack = stack[:len(stack)-1]
				} else {
					top.parens--
				}
			}
		case '#':
			if !wordStart {
				break
			}
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			for k := i; k < i+j; k++ {
				if s[k] == '$' {
					places[k] = shellRef{place: placeComment}
				}
			}
			i += j - 1
			atWordStart = true
		case '<':
			if i+1 < len(s) && s[i+1] == '<' && (i+2 >= len(s) || s[i+2] != '<') {
				h, next := readHeredocWord(s, i+2)
				pending = append(pending, h)
				i = next - 1
				atWordStart = true
			}
		case '\n':
			if len(pending) > 0 && len(stack) == 1 {
				i = readHeredocBodies(s, i+1, places, pending) - 1
				pending = nil
			}
		}
	}
	return places
}

type heredocWord struct {
	end       string
	literal   bool
	stripTabs bool
}

// readHeredocWord reads the end word after << at s[i:] and returns it and
// the index after it.
func readHeredocWord(s string, i int) (heredocWord, int) {
	var h heredocWord
	if i < len(s) && s[i] == '-' {
		h.stripTabs = true
		i++
	}
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	var word strings.Builder
	for i < len(s) && strings.IndexByte(" \t\n;&|()<>", s[i]) < 0 {
		switch c := s[i]; c {
		case '\'', '"':
			h.literal = true
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			i += j + 2
			continue
		case '\\':
			h.literal = true
			if i+1 < len(s) {
				word.WriteByte(s[i+1])
			}
			i += 2
			continue
		default:
			word.WriteByte(c)
		}
		i++
	}
	h.end = word.String()
	return h, min(i, len(s))
}

// readHeredocBodies reads the bodies of the pending here-documents from
// s[i:], one after the other, records the places of their $ and returns the
// index after the last end line.
func readHeredocBodies(s string, i int, places map[int]shellRef, pending []heredocWord) int {
	for _, h := range pending {
		for i < len(s) {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			line := s[i : i+j]
			if h.stripTabs {
				line = strings.TrimLeft(line, "\t")
			}
			if line == h.end {
				i += j + 1
				break
			}
			for k := i; k < i+j; k++ {
				switch {
				case s[k] != '$':
				case h.literal:
					places[k] = shellRef{place: placeHeredocLit, end: h.end}
				case k > i && s[k-1] == '\\':
					places[k] = shellRef{place: placeEscaped}
				default:
					places[k] = shellRef{place: placeHeredoc, end: h.end}
				}
			}
			i += j + 1
		}
	}
	return min(i, len(s))
}

// escaped records a $ right after the backslash at s[i]: the backslash
// would take the first character of a quoted value for itself.
func escaped(s string, i int, places map[int]shellRef) {
	if i+1 < len(s) && s[i+1] == '$' {
		places[i+1] = shellRef{place: placeEscaped}
	}
}

// quoteForShell returns value written so that the shell reads it as it is,
// at a place of a command; name is the variable's, for the error.
func quoteForShell(ref shellRef, name, value string) (string, error) {
	q, err := quoteInPlace(ref, name, value)
	for range ref.backquotes {
		q = backslash(q, "\\`$")
	}
	return q, err
}

func quoteInPlace(ref shellRef, name, value string) (string, error) {
	switch ref.place {
	case placeSingle:
		return strings.ReplaceAll(value, "'", `'\''`), nil
	case placeDouble:
		return backslash(value, "\\\"$`"), nil
	case placeHeredoc, placeHeredocLit:
		for line := range strings.SplitSeq(value, "\n") {
			if line == ref.end || strings.TrimLeft(line, "\t") == ref.end {
				return "", fault.Invalid("the value of %s holds a line that ends the here-document (%s); pass it in env instead, e.g. env {\"X\": \"${%s}\"} and \"$X\" in the command", name, ref.end, name)
			}
		}
		if ref.place == placeHeredoc {
			return backslash(value, "\\$`"), nil
		}
		return value, nil
	case placeComment:
		return strings.NewReplacer("\n", " ", "\r", " ").Replace(value), nil
	case placeEscaped:
		return "", fault.Invalid("\\${%s} puts a backslash before the variable's value, which would change how the shell reads it; write ${%s} without the backslash, or $${%s} for a literal ${%s}", name, name, name, name)
	}
	return "'" + strings.ReplaceAll(value, "'", `'\''`) + "'", nil
}

// backslash puts a backslash before every byte of s that is in special.
func backslash(s, special string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(special, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
