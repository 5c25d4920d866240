package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unsafe"
)

func TestRedact(t *testing.T) {
	const tok = "s3cr3t+/=&?<>x" // needs escaping in every form
	values := map[string]string{
		"TOKEN":   tok,
		"SHORT":   "abcdef",
		"LONGER":  "abcdefgh", // overlaps SHORT
		"OTHER":   "cdefghij", // overlaps LONGER
		"NEWLINE": "line1\nline2",
	}
	r := NewRedactor(values)
	jsonNoHTML := func(s string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(s)
		return strings.Trim(b.String(), "\"\n")
	}
	jsonHTML, _ := json.Marshal(tok)
	tests := []struct{ name, in, want string }{
		{"raw", "Authorization: " + tok + " end", "Authorization: [redacted:TOKEN] end"},
		{"base64 std", "x " + base64.StdEncoding.EncodeToString([]byte(tok)) + " y", "x [redacted:TOKEN] y"},
		{"base64 url", "x " + base64.URLEncoding.EncodeToString([]byte(tok)) + " y", "x [redacted:TOKEN] y"},
		{"base64 raw std", "x " + base64.RawStdEncoding.EncodeToString([]byte(tok)) + " y", "x [redacted:TOKEN] y"},
		{"base64 raw url", "x " + base64.RawURLEncoding.EncodeToString([]byte(tok)) + " y", "x [redacted:TOKEN] y"},
		{"query escape", "?t=" + url.QueryEscape(tok) + "&a=1", "?t=[redacted:TOKEN]&a=1"},
		{"path escape", "/p/" + url.PathEscape(tok) + "/q", "/p/[redacted:TOKEN]/q"},
		{"json with html escaping", `{"t":` + string(jsonHTML) + `}`, `{"t":"[redacted:TOKEN]"}`},
		{"json without html escaping", `{"t":"` + jsonNoHTML(tok) + `"}`, `{"t":"[redacted:TOKEN]"}`},
		{"split by fold", "a " + fold(tok, 3, "\n") + " b", "a [redacted:TOKEN] b"},
		{"split by CRLF", "a " + fold(tok, 5, "\r\n") + " b", "a [redacted:TOKEN] b"},
		{"break at the edges stays", "a\n" + tok + "\nb", "a\n[redacted:TOKEN]\nb"},
		{"value with a newline", "<line1\nline2>", "<[redacted:NEWLINE]>"},
		{"value with a newline, rewrapped", "<li\nne1line2>", "<[redacted:NEWLINE]>"},
		{"value with a newline, as json", `"line1\nline2"`, `"[redacted:NEWLINE]"`},
		{"many, touching ones apart", tok + tok + "-" + tok, "[redacted:TOKEN][redacted:TOKEN]-[redacted:TOKEN]"},
		{"longest wins", "<abcdefgh>", "<[redacted:LONGER]>"},
		{"overlapping values masked as one", "<abcdefghij>", "<[redacted:LONGER]>"},
		{"shorter alone", "<abcdefg>", "<[redacted:SHORT]g>"},
		{"near miss", "s3cr3t+/=&?<>", "s3cr3t+/=&?<>"},
		{"nothing", "plain text\nwith lines", "plain text\nwith lines"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactBase64InsideLongerStream(t *testing.T) {
	const tok = "ghp_R4nd0mT0k3nValue"
	r := NewRedactor(map[string]string{"GH": tok})
	for prefix := range 6 {
		for suffix := range 4 {
			plain := strings.Repeat("p", prefix) + tok + strings.Repeat("s", suffix)
			enc := wrap76(base64.StdEncoding.EncodeToString([]byte(plain)))
			got := stripBreaks(r.Redact(enc))
			if !strings.Contains(got, "[redacted:GH]") {
				t.Errorf("prefix %d suffix %d: %q not masked in %q", prefix, suffix, tok, got)
			}
			// What is left of the encoding must not decode to the token.
			for _, part := range strings.Split(got, "[redacted:GH]") {
				if s := decodeAnyOffset(part); strings.Contains(s, tok[:6]) {
					t.Errorf("prefix %d suffix %d: %q left, decodes to %q", prefix, suffix, part, s)
				}
			}
		}
	}
}

// decodeAnyOffset decodes what it can of base64 text starting at each of the
// four character offsets, joined.
func decodeAnyOffset(s string) string {
	s = strings.TrimRight(s, "=")
	var out []string
	for off := 0; off < 4 && off < len(s); off++ {
		part := s[off:]
		dec, _ := base64.RawStdEncoding.DecodeString(part[:len(part)/4*4])
		out = append(out, string(dec))
	}
	return strings.Join(out, "|")
}

func TestRedactNoMatchIsSameString(t *testing.T) {
	r := NewRedactor(map[string]string{"A": "needle-value"})
	for _, s := range []string{"haystack without it", "with\nlines\r\n", strings.Repeat("needle-valu ", 100)} {
		if got := r.Redact(s); unsafe.StringData(got) != unsafe.StringData(s) || got != s {
			t.Errorf("Redact(%.20q…) made a new string, want the same one", s)
		}
	}
	var empty *Redactor
	if got := empty.Redact("x"); got != "x" {
		t.Errorf("nil Redactor: got %q, want x", got)
	}
	if got := NewRedactor(nil).Redact("x"); got != "x" {
		t.Errorf("empty Redactor: got %q, want x", got)
	}
}

// TestRedactCanary hides 50 random values in one 64 KiB output in every form
// a tool may print them and expects none to survive.
func TestRedactCanary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	values := map[string]string{}
	var names []string
	for i := range 50 {
		name := fmt.Sprintf("CANARY_%02d", i)
		names = append(names, name)
		values[name] = randomValue(rng, 16+rng.IntN(25))
	}
	var out strings.Builder
	var kept []string // surrounding lines that must survive
	line := func(s string) {
		out.WriteString(s)
		out.WriteString("\n")
	}
	text := func(i int) {
		s := fmt.Sprintf("-- ordinary output line %d: all went well --", i)
		kept = append(kept, s)
		line(s)
	}
	var env strings.Builder
	for i, name := range names {
		v := values[name]
		text(i*10 + 0)
		line("token=" + v + " used")
		text(i*10 + 1)
		line(wrap76(base64.StdEncoding.EncodeToString([]byte(v))))
		text(i*10 + 2)
		line("https://example.com/cb?key=" + url.QueryEscape(v) + "&x=1")
		text(i*10 + 3)
		line(fold(v, 7, "\n"))
		text(i*10 + 4)
		j, _ := json.Marshal(map[string]string{"name": name, "value": v})
		line(string(j))
		env.WriteString(name + "=" + v + "\n")
	}
	text(9999)
	line(wrap76(base64.StdEncoding.EncodeToString([]byte(env.String())))) // `base64 .env`
	for out.Len() < 64<<10 {
		text(10000 + out.Len())
	}
	in := out.String()

	got := NewRedactor(values).Redact(in)

	flat := stripBreaks(got)
	for _, name := range names {
		v := values[name]
		j, _ := json.Marshal(v)
		for form, s := range map[string]string{
			"raw": v, "base64": base64.StdEncoding.EncodeToString([]byte(v)),
			"query": url.QueryEscape(v), "json": strings.Trim(string(j), `"`),
		} {
			if strings.Contains(flat, s) {
				t.Errorf("%s survives as %s", name, form)
			}
		}
		for off := range 3 {
			if s := base64Inner([]byte(v), off, base64.RawStdEncoding); strings.Contains(flat, s) {
				t.Errorf("%s survives in the base64 of .env (offset %d)", name, off)
			}
		}
		for _, piece := range []string{v[:len(v)/2], v[len(v)/2:]} {
			if len(piece) >= 12 && strings.Contains(got, piece) {
				t.Errorf("half of %s survives: %q", name, piece)
			}
		}
	}
	for _, s := range kept {
		if !strings.Contains(got, s+"\n") {
			t.Fatalf("surrounding line %q is gone", s)
		}
	}
	if n := strings.Count(got, "[redacted:CANARY_"); n < 50*5 {
		t.Errorf("%d masks, want at least %d (5 forms of 50 values)", n, 50*5)
	}
}

// randomValue mixes letters, digits, the characters that every encoding
// escapes differently and a little UTF-8.
func randomValue(rng *rand.Rand, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=&?%<>\"\\ -_.~:"
	runes := []rune(alphabet + "éß€")
	var b strings.Builder
	for b.Len() < n {
		b.WriteRune(runes[rng.IntN(len(runes))])
	}
	return b.String()
}

// fold cuts s every n bytes with sep, as `fold -w n` does.
func fold(s string, n int, sep string) string {
	var parts []string
	for len(s) > n {
		parts = append(parts, s[:n])
		s = s[n:]
	}
	return strings.Join(append(parts, s), sep)
}

// wrap76 wraps base64 text as the base64 command does.
func wrap76(s string) string { return fold(s, 76, "\n") }

func FuzzRedact(f *testing.F) {
	f.Add("abcd", "")
	f.Add("s3cr3t+/=", "text with s3cr3 in it\n")
	f.Add("ab\ncd", "\r\n")
	f.Add("]abc", "abc")
	f.Fuzz(func(t *testing.T, v, text string) {
		if len(stripBreaks(v)) < minMaskable { // Variables.Set refuses these
			t.Skip()
		}
		const marker = "[redacted:V]"
		got := NewRedactor(map[string]string{"V": v}).Redact(text + v + text)
		if !strings.Contains(got, marker) {
			t.Fatalf("no mask in %q", got)
		}
		// A value made of marker characters can be seen across or inside a
		// mask; no mask around, it must not be seen at all.
		plain := strings.ReplaceAll(got, marker, "\x00")
		if !strings.Contains(v, "\x00") && strings.Contains(plain, v) {
			t.Errorf("Redact(%q) = %q still contains the value %q", text+v+text, got, v)
		}
		if !strings.ContainsAny(v, "[]\x00") && !strings.Contains(marker, v) && strings.Contains(got, v) {
			t.Errorf("Redact(%q) = %q still contains the value %q", text+v+text, got, v)
		}
	})
}

// BenchmarkRedact masks a 64 KiB tool output (log lines, some base64, a few
// values) against 50 variables, as the run loop does after every tool call.
func BenchmarkRedact(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	values := map[string]string{}
	for i := range 50 {
		values[fmt.Sprintf("VAR_%02d", i)] = randomValue(rng, 16+rng.IntN(25))
	}
	var sb strings.Builder
	blob := make([]byte, 600)
	for i := 0; sb.Len() < 64<<10; i++ {
		fmt.Fprintf(&sb, "2026-01-02T03:04:05Z INFO request %d path=/api/items/%d status=200 took=%dms\n", i, i*7, i%90)
		if i%20 == 0 {
			for k := range blob {
				blob[k] = byte(rng.IntN(256))
			}
			sb.WriteString(wrap76(base64.StdEncoding.EncodeToString(blob)) + "\n")
		}
		if i%100 == 0 {
			sb.WriteString("token " + values[fmt.Sprintf("VAR_%02d", i/100%50)] + "\n")
		}
	}
	text := sb.String()[:64<<10]
	r := NewRedactor(values)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		r.Redact(text)
	}
}

func BenchmarkNewRedactor(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	values := map[string]string{}
	for i := range 50 {
		values[fmt.Sprintf("VAR_%02d", i)] = randomValue(rng, 16+rng.IntN(25))
	}
	b.ReportAllocs()
	for b.Loop() {
		NewRedactor(values)
	}
}

// A tool's result is often JSON, where a folded value's line breaks are the
// two characters \n.
func TestRedactEscapedBreaksInJSON(t *testing.T) {
	const tok = "s3cr3t+/=&?<>x"
	r := NewRedactor(map[string]string{"TOKEN": tok, "LINES": "first\nsecond", "OTHER": "tok-abcdefghijkl"})
	folded, _ := json.Marshal(map[string]string{"output": fold(tok, 4, "\n")})
	crlf, _ := json.Marshal(map[string]string{"output": "a\r\n" + fold(tok, 5, "\r\n") + "\r\nb"})
	lines, _ := json.Marshal("first\nsecond")
	tests := []struct{ name, in, want string }{
		{"folded value in a JSON result", string(folded), `{"output":"[redacted:TOKEN]"}`},
		{"CRLF-folded value in a JSON result", string(crlf), `{"output":"a\r\n[redacted:TOKEN]\r\nb"}`},
		{"value with a newline, JSON-escaped", string(lines), `"[redacted:LINES]"`},
		{"escaped LF and CRLF in one value", `{"output":"tok-abc\ndefghi\r\njkl done"}`, `{"output":"[redacted:OTHER] done"}`},
		{"escaped backslash before n is the value JSON-escaped twice", `first\\nsecond`, `[redacted:LINES]`},
		{"escaped backslash before n is no break", `firs\\nt second`, `firs\\nt second`},
		{"plain text with escapes untouched", `{"a":"x\ny"}`, `{"a":"x\ny"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactLongValues(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	long := randomValue(rng, 3000)
	twin := long[:maxHead+100] + "different tail after a shared head"
	r := NewRedactor(map[string]string{"LONG": long, "TWIN": twin})
	tests := []struct{ name, in, want string }{
		{"raw", "<" + long + ">", "<[redacted:LONG]>"},
		{"base64, wrapped", "<" + wrap76(base64.StdEncoding.EncodeToString([]byte(long))) + ">", "<[redacted:LONG]>"},
		{"folded", "<" + fold(long, 7, "\n") + ">", "<[redacted:LONG]>"},
		{"query-escaped", "<" + url.QueryEscape(long) + ">", "<[redacted:LONG]>"},
		{"shared head, other tail", "<" + twin + ">", "<[redacted:TWIN]>"},
		{"head matches, tail does not", "<" + long[:2000] + ">", "<" + long[:2000] + ">"},
		{"cut at the end of the text", long[:len(long)-1], long[:len(long)-1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("got %.80q…, want %.80q…", got, tt.want)
			}
		})
	}
	if n := len(r.fail); n > 2*15*maxHead {
		t.Errorf("automaton has %d nodes for two long values, want at most %d", n, 2*15*maxHead)
	}
}
