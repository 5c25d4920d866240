package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// forms lists what v may look like in a tool's output (duplicates included).
// The first ones are the forms tools print most; the rest (see moreForms) get
// a shorter head in the automaton.
func forms(v string) (common, more []string) {
	b := []byte(v)
	common = []string{
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
				common = append(common, f)
			}
		}
	}
	return common, moreForms(v)
}

// moreForms are the rarer forms: the percent-encodings of other languages'
// libraries, JSON escaped again by a tool that embeds JSON in JSON, and hex.
func moreForms(v string) []string {
	var fs []string
	for _, p := range percentStyles {
		fs = append(fs, percent(v, p.keep, p.plus, true), percent(v, p.keep, p.plus, false))
	}
	fs = append(fs, lowerEscapes(url.PathEscape(v)))
	for _, style := range []func(string) string{
		func(s string) string { return jsonString(s, true) },
		func(s string) string { return jsonString(s, false) },
		jsonASCII,
	} {
		s := v
		for range 3 {
			s = style(s)
			fs = append(fs, s)
		}
	}
	return append(fs, hex.EncodeToString([]byte(v)), strings.ToUpper(hex.EncodeToString([]byte(v))))
}

// percentStyles are the percent-encodings in common use, by the bytes they
// leave as they are (other than letters and digits) and whether a space
// becomes +.
var percentStyles = []struct {
	keep func(c byte) bool
	plus bool
}{
	{keepOf("-_.~"), true},                  // Go url.QueryEscape, Python quote_plus
	{keepOf("-_.~"), false},                 // Python quote(safe=""), RFC 3986 unreserved
	{keepOf("-_.~/"), false},                // Python quote (safe="/")
	{keepOf("-_.!~*'()"), false},            // JavaScript encodeURIComponent
	{keepOf("-_.!~*'();,/?:@&=+$#"), false}, // JavaScript encodeURI
	{keepOf("*-._"), true},                  // HTML forms, URLSearchParams
}

func keepOf(set string) func(c byte) bool {
	return func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(set, c) >= 0
	}
}

// percent escapes every byte of s that keep refuses as %XX (upper or lower
// case hex); plus writes a space as +.
func percent(s string, keep func(c byte) bool, plus, upper bool) string {
	digits := "0123456789abcdef"
	if upper {
		digits = "0123456789ABCDEF"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' && plus:
			b.WriteByte('+')
		case keep(c):
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&15])
		}
	}
	return b.String()
}

// lowerEscapes writes the hex digits of s's %XX escapes in lower case.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerHex(b[i+1]), lowerHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerHex(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
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

// jsonASCII is v inside a JSON string as Python's json.dumps writes it by
// default: everything outside ASCII as \uXXXX (UTF-16), HTML left alone.
func jsonASCII(v string) string {
	var b strings.Builder
	for _, r := range v {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
