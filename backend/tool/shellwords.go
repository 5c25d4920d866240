package tool

import "strings"

// To tell where a command sends what it holds, run_command reads the
// simple commands of a command line as /bin/sh would split them: words with
// quotes removed, redirections and here-document bodies left out, and the
// commands inside $(…) and `…` as commands of their own. What the shell
// would only know when it runs — a $VAR, a $(…), a glob, a ~ — is written
// as expansionMark in the word, so a destination that depends on it is
// known to be unknown.

// expansionMark stands in a word where the shell expands something. A
// command never holds a NUL (run_command refuses one).
const expansionMark = "\x00"

// maxShellDepth bounds how deeply $(…), `…`, sh -c and eval nest before
// the rest is read as unknown.
const maxShellDepth = 32

// shellCommands returns the simple commands of command, each its words. It
// never fails: what it does not understand ends a word or a command.
func shellCommands(command string) [][]string {
	p := &wordParser{s: command}
	p.list(0, 0)
	return p.cmds
}

type wordParser struct {
	s     string
	cmds  [][]string
	depth int
}

// sub reads text (the inside of a $(…), `…` or ${…}) as commands of their
// own.
func (p *wordParser) sub(text string) {
	if p.depth >= maxShellDepth {
		p.cmds = append(p.cmds, []string{expansionMark})
		return
	}
	q := &wordParser{s: text, depth: p.depth + 1}
	q.list(0, 0)
	p.cmds = append(p.cmds, q.cmds...)
}

// list reads commands from s[i:] up to the unmatched stop byte (0: the
// end) and returns the index after it.
func (p *wordParser) list(i int, stop byte) int {
	s := p.s
	var (
		words    []string
		word     strings.Builder
		inWord   bool
		skipNext bool // the next word is a redirection's target
		pending  []heredocWord
		parens   int
	)
	endWord := func() {
		if inWord {
			if skipNext {
				skipNext = false
			} else {
				words = append(words, word.String())
			}
		}
		word.Reset()
		inWord = false
	}
	endCmd := func() {
		endWord()
		if len(words) > 0 {
			p.cmds = append(p.cmds, words)
		}
		words = nil
	}
	mark := func() {
		word.WriteString(expansionMark)
		inWord = true
	}
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\r':
			endWord()
			i++
		case '\n':
			endCmd()
			i++
			if len(pending) > 0 {
				i = readHeredocBodies(s, i, map[int]shellRef{}, pending)
				pending = nil
			}
		case ';', '&', '|':
			endCmd()
			i++
		case '(':
			endCmd()
			parens++
			i++
		case ')':
			endCmd()
			i++
			if parens == 0 && stop == ')' {
				return i
			}
			parens = max(parens-1, 0)
		case '<', '>':
			if w := word.String(); inWord && w != "" && strings.Trim(w, "0123456789") == "" {
				word.Reset() // the descriptor of 2>file
				inWord = false
			}
			endWord()
			if strings.HasPrefix(s[i:], "<<") && !strings.HasPrefix(s[i:], "<<<") {
				h, next := readHeredocWord(s, i+2)
				pending = append(pending, h)
				i = next
				break
			}
			for i < len(s) && strings.IndexByte("<>&|-", s[i]) >= 0 {
				i++
			}
			skipNext = true
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				j = len(s) - i - 1
			}
			word.WriteString(s[i+1 : i+1+j])
			inWord = true
			i += j + 2
		case '"':
			i = p.double(i+1, &word, mark)
			inWord = true
		case '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					word.WriteByte(s[i+1])
					inWord = true
				}
				i += 2
			} else {
				i++
			}
		case '$':
			var ok bool
			if i, ok = p.dollar(i); ok {
				mark()
			} else {
				word.WriteByte('$')
				inWord = true
			}
		case '`':
			i = p.backquote(i)
			mark()
		case '#':
			if inWord {
				word.WriteByte(c)
				i++
				break
			}
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case '*', '?', '[':
			word.WriteByte(c)
			mark() // a glob: the shell may put file names here (after it: a URL's ? ends its host)
			i++
		case '~':
			if !inWord {
				mark()
			}
			word.WriteByte(c)
			i++
		default:
			word.WriteByte(c)
			inWord = true
			i++
		}
	}
	endCmd()
	return i
}

// double reads the inside of "…" from s[i:] into word and returns the index
// after the closing quote.
func (p *wordParser) double(i int, word *strings.Builder, mark func()) int {
	s := p.s
	for i < len(s) {
		switch c := s[i]; c {
		case '"':
			return i + 1
		case '\\':
			if i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
				if s[i+1] != '\n' {
					word.WriteByte(s[i+1])
				}
				i += 2
				continue
			}
			word.WriteByte(c)
			i++
		case '$':
			var ok bool
			if i, ok = p.dollar(i); ok {
				mark()
			} else {
				word.WriteByte('$')
			}
		case '`':
			i = p.backquote(i)
			mark()
		default:
			word.WriteByte(c)
			i++
		}
	}
	return i
}

// dollar reads the expansion at s[i] ('$') and returns the index after it,
// and false for a $ that expands nothing.
func (p *wordParser) dollar(i int) (int, bool) {
	s := p.s
	if i+1 >= len(s) {
		return i + 1, false
	}
	switch c := s[i+1]; {
	case c == '(':
		if p.depth >= maxShellDepth {
			p.cmds = append(p.cmds, []string{expansionMark})
			return len(s), true
		}
		q := &wordParser{s: s, depth: p.depth + 1}
		end := q.list(i+2, ')')
		p.cmds = append(p.cmds, q.cmds...)
		return end, true
	case c == '{':
		depth, j := 0, i+1
		for ; j < len(s); j++ {
			if s[j] == '{' {
				depth++
			} else if s[j] == '}' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if inner := s[i+2 : min(j, len(s))]; strings.Contains(inner, "$(") || strings.Contains(inner, "`") {
			p.sub(inner) // ${X:-$(cmd)}
		}
		return min(j+1, len(s)), true
	case c == '\'':
		j := i + 2
		for j < len(s) && s[j] != '\'' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		return min(j+1, len(s)), true
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		j := i + 2
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j, true
	case c >= '0' && c <= '9' || strings.IndexByte("@*#?$!-", c) >= 0:
		return i + 2, true
	}
	return i + 1, false
}

// backquote reads the `…` at s[i] as commands of their own and returns the
// index after it.
func (p *wordParser) backquote(i int) int {
	s := p.s
	var inner strings.Builder
	j := i + 1
	for ; j < len(s) && s[j] != '`'; j++ {
		if s[j] == '\\' && j+1 < len(s) && strings.IndexByte("$`\\", s[j+1]) >= 0 {
			j++
		}
		inner.WriteByte(s[j])
	}
	p.sub(inner.String())
	return min(j+1, len(s))
}
