package secret

import (
	"errors"
	"regexp"
	"strings"
	"unicode"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// ErrCredentialLike marks the refusal of text that looks like a credential
// (CheckCredential). The app lets a person store it anyway, after saying it
// is no secret; agents and the MCP API cannot.
var ErrCredentialLike = errors.New("looks like a credential")

// credentialPatterns are credentials whose shape is known. What agents read
// (a soul, a skill, a template) holds none: a value belongs in the
// variables, referenced as ${NAME}.
var credentialPatterns = []struct {
	what string
	re   *regexp.Regexp
	// random says the match must hold a digit: real keys are random, and
	// a placeholder such as sk-your-key-here is not one.
	random bool
}{
	{"a Rerun API key", regexp.MustCompile(`\brrk_[a-z2-7]{16,}`), true},
	{"a Rerun webhook token", regexp.MustCompile(`\brrh_[a-z2-7]{16,}`), true},
	{"an OpenAI or Anthropic API key", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`), true},
	{"a Stripe secret key", regexp.MustCompile(`\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`), true},
	{"a GitHub token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`), true},
	{"a Slack token", regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`), true},
	{"an AWS access key", regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`), false},
	{"a Google API key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), false},
	{"a webhook signing secret", regexp.MustCompile(`\bwhsec_[A-Za-z0-9+/=]{16,}`), true},
	{"a private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), false},
}

// FindCredential returns what the first credential-shaped text in s looks
// like, and its start (never the whole value).
func FindCredential(s string) (what, start string, found bool) {
	for _, p := range credentialPatterns {
		for _, loc := range p.re.FindAllStringIndex(s, -1) {
			m := s[loc[0]:loc[1]]
			if p.random && !strings.ContainsFunc(m, unicode.IsDigit) {
				continue
			}
			return p.what, m[:min(len(m), 6)], true
		}
	}
	return "", "", false
}

// ScrubCredentials replaces credential-shaped text in s; changed says
// whether there was any.
func ScrubCredentials(s string) (out string, changed bool) {
	for _, p := range credentialPatterns {
		s = p.re.ReplaceAllStringFunc(s, func(m string) string {
			if p.random && !strings.ContainsFunc(m, unicode.IsDigit) {
				return m
			}
			changed = true
			return "[credential removed]"
		})
	}
	return s, changed
}

// credentialError is a refusal of credential-shaped text: a fault.Invalid
// error that is ErrCredentialLike too.
type credentialError struct{ err error }

func (e *credentialError) Error() string        { return e.err.Error() }
func (e *credentialError) Unwrap() error        { return e.err }
func (e *credentialError) Is(target error) bool { return target == ErrCredentialLike }

// CheckCredential refuses credential-shaped text s; where names the place
// ("soul (soul.md)"), thing what never carries one ("a template", "a soul").
// The error is fault.ErrInvalid and ErrCredentialLike; fault.Message gives
// its text.
func CheckCredential(where, thing, s string) error {
	if what, start, ok := FindCredential(s); ok {
		return &credentialError{fault.Invalid("%s holds what looks like %s (%s…); %s never carries credentials: remove it, and write ${NAME} where the agent needs a variable", where, what, start, thing)}
	}
	return nil
}
