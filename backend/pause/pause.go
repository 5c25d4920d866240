// Package pause defines the ways an agent hands a decision back to a person
// — a question, an approval, a connector to set up, a credential to fill, a
// browser to take over — as plain values: what the agent asks, what the
// person may answer, the checks on both, and the text the agent and the
// notification read. Each kind lives in its own file and is listed in
// kinds (kind.go). Storing a pause and resuming its run belong to package
// run; this package holds no state.
package pause

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Statuses of a pause.
const (
	Open      = "open"
	Answered  = "answered"
	Dismissed = "dismissed"
	Cancelled = "cancelled"
)

// Limits of a card, so it stays something a person can answer at a glance.
const (
	MaxQuestions = 6
	MaxOptions   = 6
	MaxItems     = 20
	MaxFields    = 20
	maxText      = 2000     // a question, title or description
	maxDetail    = 64 << 10 // an approval item's detail (a diff can be long)
	maxAnswer    = 8000     // one free-text answer
	MaxValue     = 64 << 10 // a secret value
	maxLabel     = 200
)

// DismissAnswer records that the person closed the card without answering.
type DismissAnswer struct {
	Dismissed bool   `json:"dismissed"`
	Note      string `json:"note"`
}

var (
	variableName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
	fieldName    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	nonWord      = regexp.MustCompile(`[^A-Za-z0-9]+`)
)

// DismissedText is what the agent reads back from a card the person closed
// without answering, whatever its kind.
func DismissedText(note string) string {
	out := "The person dismissed the card without answering."
	if note != "" {
		out += " They wrote: " + note
	}
	return out + " Do not ask the same again right away; go on with what you can, or stop and say what you need."
}

// ValidVariable reports whether name can name a workspace variable.
func ValidVariable(name string) bool { return variableName.MatchString(name) }

func text(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case required && s == "":
		return "", fault.Invalid("%s is empty; write it", field)
	case utf8.RuneCountInString(s) > max:
		return "", fault.Invalid("%s is %d characters; keep it under %d", field, utf8.RuneCountInString(s), max)
	case !utf8.ValidString(s):
		return "", fault.Invalid("%s is not valid UTF-8 text", field)
	}
	return s, nil
}
