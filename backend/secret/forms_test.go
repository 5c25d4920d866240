package secret

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// formValue holds what every encoding escapes differently: / + & = " < a
// space, the characters JavaScript leaves alone and a non-ASCII letter.
const formValue = `a/b+c&d=e"f<g h~!*()'é`

// TestRedactForms masks formValue in the forms real libraries write it. The
// encoded texts were printed by Python 3 and Node.js, not by this package.
func TestRedactForms(t *testing.T) {
	r := NewRedactor(map[string]string{"TOKEN": formValue})
	tests := []struct{ name, in string }{
		{"python quote", `a/b%2Bc%26d%3De%22f%3Cg%20h~%21%2A%28%29%27%C3%A9`},
		{"python quote safe=''", `a%2Fb%2Bc%26d%3De%22f%3Cg%20h~%21%2A%28%29%27%C3%A9`},
		{"python quote_plus", `a%2Fb%2Bc%26d%3De%22f%3Cg+h~%21%2A%28%29%27%C3%A9`},
		{"js encodeURIComponent", `a%2Fb%2Bc%26d%3De%22f%3Cg%20h~!*()'%C3%A9`},
		{"js encodeURI", `a/b+c&d=e%22f%3Cg%20h~!*()'%C3%A9`},
		{"js URLSearchParams", `a%2Fb%2Bc%26d%3De%22f%3Cg+h%7E%21*%28%29%27%C3%A9`},
		{"go QueryEscape, lower-case hex", `a%2fb%2bc%26d%3de%22f%3cg+h~%21%2a%28%29%27%c3%a9`},
		{"js encodeURIComponent, lower-case hex", `a%2fb%2bc%26d%3de%22f%3cg%20h~!*()'%c3%a9`},
		{"python json.dumps", `a/b+c&d=e\"f<g h~!*()'\u00e9`},
		{"python json.dumps twice", `a/b+c&d=e\\\"f<g h~!*()'\\u00e9`},
		{"python json.dumps three times", `a/b+c&d=e\\\\\\\"f<g h~!*()'\\\\u00e9`},
		{"js JSON.stringify", `a/b+c&d=e\"f<g h~!*()'é`},
		{"js JSON.stringify twice", `a/b+c&d=e\\\"f<g h~!*()'é`},
		{"js JSON.stringify three times", `a/b+c&d=e\\\\\\\"f<g h~!*()'é`},
		{"go json.Marshal twice", `a/b+c\\u0026d=e\\\"f\\u003cg h~!*()'é`},
		{"go json.Marshal three times", `a/b+c\\\\u0026d=e\\\\\\\"f\\\\u003cg h~!*()'é`},
		{"hex", hex.EncodeToString([]byte(formValue))},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(formValue)))},
		{"hex, wrapped", fold(hex.EncodeToString([]byte(formValue)), 16, "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := "<" + tt.in + ">"
			if got := r.Redact(in); got != "<[redacted:TOKEN]>" {
				t.Errorf("Redact(%q) = %q, want <[redacted:TOKEN]>", in, got)
			}
		})
	}
}

func TestRedactRange(t *testing.T) {
	const tok = "CANARY-7-abcdefghijkl"
	r := NewRedactor(map[string]string{"C": tok})
	text := "head " + tok + " middle " + fold(tok, 5, "\n") + " tail"
	cut := strings.Index(text, tok) + 8 // inside the first value
	tests := []struct {
		name   string
		lo, hi int
		want   string
	}{
		{"whole", 0, len(text), "head [redacted:C] middle [redacted:C] tail"},
		{"cut inside a value, before", 0, cut, "head [redacted:C]"},
		{"cut inside a value, after", cut, len(text), "[redacted:C] middle [redacted:C] tail"},
		{"inside one value", cut, cut + 2, "[redacted:C]"},
		{"no value", 0, 4, "head"},
		{"out of bounds", -5, len(text) + 9, "head [redacted:C] middle [redacted:C] tail"},
		{"empty", 7, 7, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.RedactRange(text, tt.lo, tt.hi); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if name, ok := r.Find("x " + tok); !ok || name != "C" {
		t.Errorf("Find = %q %v, want C true", name, ok)
	}
	if _, ok := r.Find("x " + tok[:10]); ok {
		t.Error("Find found half a value")
	}
	if got, want := r.Longest(), len(hex.EncodeToString([]byte(tok))); got != want {
		t.Errorf("Longest = %d, want %d (the hex form)", got, want)
	}
}

func FuzzRedactRange(f *testing.F) {
	f.Add("s3cr3t+/=", "text with s3cr3 in it\n", 3)
	f.Add("ab\ncd", "\r\n", 1)
	f.Fuzz(func(t *testing.T, v, text string, cut int) {
		if len(stripBreaks(v)) < minMaskable || strings.ContainsAny(v, "[]\x00\\\r\n") {
			t.Skip()
		}
		r := NewRedactor(map[string]string{"V": v})
		s := text + v + text
		cut = max(0, cut) % (len(s) + 1)
		got := r.RedactRange(s, 0, cut) + "\x00" + r.RedactRange(s, cut, len(s))
		if strings.Contains(strings.ReplaceAll(got, "[redacted:V]", "\x00"), v) {
			t.Errorf("RedactRange cut at %d: %q still holds %q", cut, got, v)
		}
		if whole := r.RedactRange(s, 0, len(s)); whole != r.Redact(s) {
			t.Errorf("RedactRange of all = %q, Redact = %q", whole, r.Redact(s))
		}
		for _, f := range moreForms(v) {
			if len(f) > 2000 {
				continue
			}
			if got := r.Redact(fmt.Sprintf("<%s>", f)); !strings.Contains(got, "[redacted:V]") {
				t.Errorf("form %q of %q not masked: %q", f, v, got)
			}
		}
	})
}
