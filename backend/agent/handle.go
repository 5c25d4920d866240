package agent

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// handlePattern is the shape of a handle: the @mention key other agents use.
var handlePattern = regexp.MustCompile(`^[a-z][a-z0-9-]{1,31}$`)

// MaxHandleLen is the longest handle.
const MaxHandleLen = 32

// ValidateHandle reports whether h can be a handle, saying what to fix if not.
func ValidateHandle(h string) error {
	if handlePattern.MatchString(h) {
		return nil
	}
	switch {
	case h == "":
		return fault.Invalid("handle is empty; use 2 to 32 characters: a lowercase letter, then lowercase letters, digits or '-'")
	case len(h) > MaxHandleLen:
		return fault.Invalid("handle %q is %d characters; keep it to %d", h, len(h), MaxHandleLen)
	case len(h) < 2:
		return fault.Invalid("handle %q is too short; use at least 2 characters", h)
	case h[0] < 'a' || h[0] > 'z':
		return fault.Invalid("handle %q must start with a lowercase letter", h)
	default:
		return fault.Invalid("handle %q may contain only lowercase letters, digits and '-'", h)
	}
}

// DeriveHandle turns an agent's name into a handle: accents dropped, lowercase,
// runs of anything else become one '-', a leading non-letter gets an "a-"
// prefix, cut to MaxHandleLen. Names with nothing usable give "agent".
func DeriveHandle(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range norm.NFKD.String(name) {
		if unicode.Is(unicode.Mn, r) { // combining accent left by NFKD
			continue
		}
		r = unicode.ToLower(r)
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	h := b.String()
	if h == "" {
		return "agent"
	}
	if h[0] < 'a' || h[0] > 'z' {
		h = "a-" + h
	}
	if len(h) > MaxHandleLen {
		h = strings.TrimRight(h[:MaxHandleLen], "-")
	}
	if len(h) < 2 {
		h += "-agent"
	}
	return h
}

// withSuffix returns h with "-n" appended, shortening h so the result fits.
func withSuffix(h string, n int) string {
	suffix := "-" + strconv.Itoa(n)
	if len(h)+len(suffix) > MaxHandleLen {
		h = strings.TrimRight(h[:MaxHandleLen-len(suffix)], "-")
	}
	return h + suffix
}
