package template

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// checkText refuses credential-shaped text; where names the place.
func checkText(where, s string) error {
	return secret.CheckCredential(where, "a template", s)
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
			_, isNumber := x[k].(float64)
			budgetLimit := at == "template.json.budget" && isNumber // run_tokens, day_tokens: counts, not tokens of a service
			if valueKey.MatchString(k) && !isReference(x[k]) && !budgetLimit {
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
