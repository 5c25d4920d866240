// Package fault defines the kinds of failure every domain package reports.
//
// Domain packages wrap one of these sentinels with a message that says what was
// wrong and what to do; transports (httpapi, mcpapi) translate the kind into a
// status code once, at their edge, with errors.Is.
package fault

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound: the thing named does not exist (or no longer does).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request clashes with what is stored (a taken handle, a
	// non-empty box).
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the request itself is malformed or out of range.
	ErrInvalid = errors.New("invalid")
)

// kindError carries a user-facing message and the sentinel kind it belongs to.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

// NotFound returns an ErrNotFound whose message is the formatted text.
func NotFound(format string, args ...any) error {
	return &kindError{ErrNotFound, fmt.Sprintf(format, args...)}
}

// Conflict returns an ErrConflict whose message is the formatted text.
func Conflict(format string, args ...any) error {
	return &kindError{ErrConflict, fmt.Sprintf(format, args...)}
}

// Invalid returns an ErrInvalid whose message is the formatted text.
func Invalid(format string, args ...any) error {
	return &kindError{ErrInvalid, fmt.Sprintf(format, args...)}
}

// Message is the user-facing text of err: the message of the innermost kind
// error when there is one (without the wrapping context meant for logs), else
// err's own text.
func Message(err error) string {
	var k *kindError
	if errors.As(err, &k) {
		return k.msg
	}
	return err.Error()
}

// Is reports whether err is (or wraps) an error of one of the kinds: a
// request the caller can fix, as opposed to a failing disk or database.
func Is(err error) bool {
	var k *kindError
	return errors.As(err, &k)
}
