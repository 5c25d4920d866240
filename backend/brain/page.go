package brain

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Limits of a page.
const (
	MaxTitleLen   = 120      // characters
	MaxBodyBytes  = 64 << 10 // markdown
	MaxSummaryLen = 300      // characters, explicit or derived
	maxSlugLen    = 64
)

// Author says who wrote a version: a person in the app, an agent (through an
// approved proposal) or the Foreman during onboarding.
type Author string

// The authors that are not agents.
const (
	Person  Author = "person"
	Foreman Author = "foreman"
)

// AgentAuthor is the author of an agent's approved edit: "agent:@handle".
func AgentAuthor(handle string) Author { return Author("agent:@" + strings.TrimPrefix(handle, "@")) }

var agentAuthor = regexp.MustCompile(`^agent:@[a-z][a-z0-9-]{0,63}$`)

// check reports whether a is a known kind of author.
func (a Author) check() error {
	if a == Person || a == Foreman || agentAuthor.MatchString(string(a)) {
		return nil
	}
	return fault.Invalid("author %q is unknown; use %q, %q or \"agent:@handle\"", a, Person, Foreman)
}

// CleanTitle trims a page title and checks it: one line of plain text, 1 to
// MaxTitleLen characters.
func CleanTitle(title string) (string, error) {
	title = strings.Join(strings.Fields(title), " ")
	switch {
	case title == "":
		return "", fault.Invalid("a Brain page needs a title, e.g. \"What we sell\"")
	case !utf8.ValidString(title):
		return "", fault.Invalid("the title is not valid UTF-8 text")
	case utf8.RuneCountInString(title) > MaxTitleLen:
		return "", fault.Invalid("the title is %d characters; keep it to %d", utf8.RuneCountInString(title), MaxTitleLen)
	case strings.IndexFunc(title, unicode.IsControl) >= 0:
		return "", fault.Invalid("the title contains a control character; use plain text")
	}
	return title, nil
}

// checkBody checks a page's markdown.
func checkBody(body string) error {
	switch {
	case len(body) > MaxBodyBytes:
		return fault.Invalid("the page is %d KiB; keep it to %d KiB (split it into several pages)", (len(body)+1023)>>10, MaxBodyBytes>>10)
	case !utf8.ValidString(body):
		return fault.Invalid("the page is not valid UTF-8 text")
	case strings.ContainsRune(body, 0):
		return fault.Invalid("the page contains a NUL byte; send plain markdown")
	}
	return nil
}

// cleanSummary trims an explicit summary to one line and checks its length.
func cleanSummary(s string) (string, error) {
	s = strings.Join(strings.Fields(s), " ")
	switch {
	case !utf8.ValidString(s):
		return "", fault.Invalid("the summary is not valid UTF-8 text")
	case utf8.RuneCountInString(s) > MaxSummaryLen:
		return "", fault.Invalid("the summary is %d characters; keep it to %d (one or two sentences)", utf8.RuneCountInString(s), MaxSummaryLen)
	}
	return s, nil
}

// titleKey is what makes two titles the same page: case does not count.
func titleKey(title string) string { return strings.ToLower(title) }

// Slug turns a title into the page's address: lower-case letters and digits
// joined by hyphens ("What we sell" → "what-we-sell"); "page" when nothing
// is left.
func Slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > maxSlugLen {
		cut := maxSlugLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = strings.TrimRight(s[:cut], "-")
	}
	if s == "" {
		return "page"
	}
	return s
}

// Summarize is a page's short summary: the explicit one when set, else the
// first paragraph of its body that is not a heading, on one line, cut to
// MaxSummaryLen characters.
func Summarize(explicit, body string) string {
	if s := strings.TrimSpace(explicit); s != "" {
		return cut(strings.Join(strings.Fields(s), " "), MaxSummaryLen)
	}
	var para []string
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "```"):
			if len(para) > 0 {
				return cut(strings.Join(strings.Fields(strings.Join(para, " ")), " "), MaxSummaryLen)
			}
		case strings.HasPrefix(t, "#") && len(para) == 0:
			// a heading introduces the paragraph, it is not one
		case t == "---" || t == "***":
		default:
			para = append(para, t)
		}
	}
	return cut(strings.Join(strings.Fields(strings.Join(para, " ")), " "), MaxSummaryLen)
}

// cut shortens s to at most n characters, ending with "…" when it did.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ") + "…"
}
