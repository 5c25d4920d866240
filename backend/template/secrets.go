package template

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// credentialPatterns are credentials whose shape is known. A template holds
// none: a value belongs in the installer's variables, referenced as
// ${NAME}.
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

// findCredential returns what the first credential-shaped text in s looks
// like, and its start (never the whole value).
func findCredential(s string) (what, start string, found bool) {
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

// scrubCredentials replaces credential-shaped text in s; changed says
// whether there was any.
func scrubCredentials(s string) (out string, changed bool) {
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

// checkText refuses credential-shaped text; where names the place.
func checkText(where, s string) error {
	if what, start, ok := findCredential(s); ok {
		return fault.Invalid("%s holds what looks like %s (%s…); a template never carries credentials: remove it, and write ${NAME} where the agent needs a variable", where, what, start)
	}
	return nil
}

// forbiddenKeys are template.json keys of what a template never carries,
// with what they are.
var forbiddenKeys = map[string]string{
	"memories": "memories", "memory": "memories",
	"run_history": "run history", "runs": "run history", "history": "run history",
	"sessions": "run history", "messages": "run history", "chats": "run history",
}

// valueKey matches keys that hold a secret's value (a variable's value, a
// token, a password…). In a template such a key may only hold a ${NAME}
// reference.
var valueKey = regexp.MustCompile(`(?i)(?:^|[_-])(?:values?|tokens?|secrets?|passwords?|passwd|api_?keys?|keys?|credentials?|private_key)$`)

var referenceOnly = regexp.MustCompile(`^\$\{[A-Z][A-Z0-9_]{0,63}\}$`)

// checkManifestDoc refuses a decoded template.json that carries what a
// template never does: memories or run history, a value under a key that
// names a secret, or credential-shaped text anywhere. It runs before the
// schema, so the error says why such a key has no place there.
func checkManifestDoc(doc any) error {
	if obj, ok := doc.(map[string]any); ok {
		for _, k := range sortedKeys(obj) {
			if what, bad := forbiddenKeys[strings.ToLower(k)]; bad {
				return fault.Invalid("template.json has a %q key: a template never carries %s; remove it", k, what)
			}
		}
	}
	return walkJSON(doc, "template.json")
}

func walkJSON(v any, at string) error {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			if err := checkText(at+" has a key that", k); err != nil {
				return err
			}
			child := at + "." + k
			if valueKey.MatchString(k) && !isReference(x[k]) {
				return fault.Invalid("%s holds a value; a template carries the names of the variables it needs, never their values, tokens or keys: remove it (list the name under variables)", child)
			}
			if err := walkJSON(x[k], child); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := walkJSON(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case string:
		return checkText(at, x)
	}
	return nil
}

// isReference reports whether v may sit under a secret-named key: nothing,
// or a ${NAME} reference.
func isReference(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == "" || referenceOnly.MatchString(strings.TrimSpace(x))
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkManifestValues refuses credential-shaped text in a manifest built in
// the app (through the API rather than from a file).
func checkManifestValues(m Manifest) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode template manifest: %w", err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("decode template manifest: %w", err)
	}
	return walkJSON(doc, "template.json")
}

// referenceRE finds ${NAME} references to workspace variables.
var referenceRE = regexp.MustCompile(`\$\{([A-Z][A-Z0-9_]{0,63})\}`)

// references returns the variable names text refers to.
func references(text string) []string {
	var out []string
	for _, m := range referenceRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}
