package tool

import (
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// The SQL guard refuses the statements an agent may not run on a database:
// ATTACH / DETACH (they reach other database files), load_extension (native
// code), PRAGMA that sets something, and VACUUM INTO (writes a copy to any
// path). It works on tokens, so the same words inside string literals,
// quoted identifiers and comments are left alone. It is the first of two
// locks: every connection the tools open also carries a SQLite authorizer
// with the same policy (see database.go).

// tokKind says what a SQL token is.
type tokKind int

const (
	tokWord   tokKind = iota // keyword, bare identifier or number
	tokQuoted                // "identifier", `identifier` or [identifier]; text is the name inside
	tokString                // 'literal'; text is the value inside
	tokPunct                 // one byte of anything else: ; = ( ) . , ? and so on
)

type token struct {
	kind tokKind
	text string
}

// tokenize splits SQL into tokens the way SQLite's tokenizer would for the
// purpose of finding keywords: whitespace and comments vanish, literals and
// quoted identifiers are single tokens, an unterminated literal or comment
// runs to the end.
func tokenize(sql string) []token {
	var toks []token
	i := 0
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			end := strings.IndexByte(sql[i:], '\n')
			if end < 0 {
				return toks
			}
			i += end + 1
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += 2 + end + 2
		case c == '\'' || c == '"' || c == '`':
			j := closeQuote(sql, i, c)
			end := min(j-1, len(sql)) // the closing quote, or the end when unterminated
			kind := tokQuoted
			if c == '\'' {
				kind = tokString
			}
			q := string(c)
			toks = append(toks, token{kind, strings.ReplaceAll(sql[i+1:end], q+q, q)})
			i = j
		case c == '[':
			end := strings.IndexByte(sql[i:], ']')
			if end < 0 {
				toks = append(toks, token{tokQuoted, sql[i+1:]})
				return toks
			}
			toks = append(toks, token{tokQuoted, sql[i+1 : i+end]})
			i += end + 1
		case isIDByte(c):
			j := i
			for j < len(sql) && isIDByte(sql[j]) {
				j++
			}
			toks = append(toks, token{tokWord, sql[i:j]})
			i = j
		default:
			toks = append(toks, token{tokPunct, sql[i : i+1]})
			i++
		}
	}
	return toks
}

// closeQuote returns the index just past the quote q that closes the literal
// opened at sql[open], treating a doubled quote as an escaped one; past the
// end (len+1) when it is never closed.
func closeQuote(sql string, open int, q byte) int {
	for j := open + 1; j < len(sql); j++ {
		if sql[j] != q {
			continue
		}
		if j+1 < len(sql) && sql[j+1] == q {
			j++
			continue
		}
		return j + 1
	}
	return len(sql) + 1
}

// isIDByte reports whether c can be part of a bare identifier, keyword or
// number, as in SQLite (letters, digits, _, $ and every non-ASCII byte).
func isIDByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// readPragmas are the pragmas that take an argument in parentheses only to
// say what to read (PRAGMA table_info(t)); every other PRAGMA with a value
// sets something.
var readPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
	"collation_list": true, "function_list": true, "module_list": true,
	"pragma_list": true, "database_list": true, "compile_options": true,
}

// CheckSQL refuses SQL an agent may not run, saying what to do instead:
// ATTACH, DETACH, load_extension (also as a function in a SELECT), a PRAGMA
// that sets a value (PRAGMA x = v, or PRAGMA x(v) for any x not in the list
// of read-only pragmas) and VACUUM INTO. Keywords are matched without regard
// to case, outside string literals, quoted identifiers and comments; a
// quoted identifier still counts as a function name for load_extension.
// SQL holding a NUL byte is refused too, since SQLite would stop reading
// there and the rest would be checked but never run.
func CheckSQL(sql string) error {
	if strings.TrimSpace(sql) == "" {
		return fault.Invalid("sql is empty; give the SQL statement to run")
	}
	if strings.IndexByte(sql, 0) >= 0 {
		return fault.Invalid("sql contains a NUL byte; remove it")
	}
	toks := tokenize(sql)
	for i, t := range toks {
		word := t.kind == tokWord
		switch {
		case word && (strings.EqualFold(t.text, "attach") || strings.EqualFold(t.text, "detach")):
			return fault.Invalid("%s is not allowed: each database tool works on one database (list_tables / db_query / db_execute on your own, list_space_tables / space_db_query / space_db_execute on the shared one)", strings.ToUpper(t.text))
		case (word || t.kind == tokQuoted) && strings.EqualFold(t.text, "load_extension"):
			return fault.Invalid("load_extension is not allowed: SQLite extensions cannot be loaded; use the built-in functions (JSON, FTS5 and math are available)")
		case word && strings.EqualFold(t.text, "vacuum"):
			for _, u := range toks[i+1:] {
				if u.kind == tokPunct && u.text == ";" {
					break
				}
				if u.kind == tokWord && strings.EqualFold(u.text, "into") {
					return fault.Invalid("VACUUM INTO is not allowed: it writes a copy of the database to a file; plain VACUUM is fine")
				}
			}
		case word && strings.EqualFold(t.text, "pragma"):
			if err := checkPragma(toks[i+1:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPragma looks at what follows the PRAGMA keyword: a name, optionally
// schema-qualified, then "= value", "(value)" or nothing.
func checkPragma(rest []token) error {
	name, n := "", 0
	for n < len(rest) && n < 3 {
		t := rest[n]
		if t.kind == tokWord || t.kind == tokQuoted || t.kind == tokString {
			name = t.text
			n++
			if n < len(rest) && rest[n].kind == tokPunct && rest[n].text == "." {
				n++
				continue
			}
		}
		break
	}
	if n >= len(rest) || rest[n].kind != tokPunct {
		return nil
	}
	shown := strings.ToLower(name)
	switch rest[n].text {
	case "=":
		return fault.Invalid("PRAGMA %s = … is not allowed: database settings cannot be changed from a tool; PRAGMA %s without a value reads it", shown, shown)
	case "(":
		if !readPragmas[shown] {
			return fault.Invalid("PRAGMA %s(…) is not allowed: it sets a value; only reading pragmas such as PRAGMA table_info(name) take an argument", shown)
		}
	}
	return nil
}

// statementCount counts the non-empty statements separated by ';'. It
// splits naively, which is enough for the read-only tools: a CREATE TRIGGER
// body (which holds ';') can only reach db_execute, where several
// statements are fine.
func statementCount(sql string) int {
	count, open := 0, false
	for _, t := range tokenize(sql) {
		if t.kind == tokPunct && t.text == ";" {
			open = false
			continue
		}
		if !open {
			count++
			open = true
		}
	}
	return count
}

// Statements counts the SQL statements in sql: the non-empty runs of tokens
// between semicolons, where the semicolons inside a CREATE TRIGGER's
// BEGIN … END body do not end the statement.
func Statements(sql string) int {
	n, words, inBody, cases, empty := 0, 0, false, 0, true
	isTrigger := false
	for _, t := range tokenize(sql) {
		if t.kind == tokPunct && t.text == ";" {
			if inBody {
				continue
			}
			if !empty {
				n++
			}
			empty, words, isTrigger = true, 0, false
			continue
		}
		empty = false
		if t.kind != tokWord {
			continue
		}
		words++
		switch w := strings.ToUpper(t.text); {
		case words <= 3 && w == "TRIGGER":
			isTrigger = true // CREATE [TEMP] TRIGGER
		case isTrigger && !inBody && w == "BEGIN":
			inBody = true
		case inBody && w == "CASE":
			cases++
		case inBody && w == "END" && cases > 0:
			cases--
		case inBody && w == "END":
			inBody = false
		}
	}
	if !empty {
		n++
	}
	return n
}
