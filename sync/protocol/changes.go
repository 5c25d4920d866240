package protocol

import (
	"errors"
	"fmt"
	"strings"
)

// PathChanges is, under /v1/workspaces/{id}: POST a [ChangePush] (answered
// by [Pushed]), GET ?after=N&limit=M (answered by a [ChangePage]).
const PathChanges = "/changes"

// Limits of the change log.
const (
	// MaxChange bounds one sealed record.
	MaxChange = 1 << 20
	// MaxPush bounds the changes of one push.
	MaxPush = 500
	// MaxPushBytes bounds the sealed bytes of one push (the JSON carries
	// them in base64, a third more); a client splits larger pushes.
	MaxPushBytes = 16 << 20
	// MaxPull bounds, and DefaultPull is, the changes of one page.
	MaxPull     = 1000
	DefaultPull = 500
	// MaxPullBytes bounds the sealed bytes of one page: past it the page
	// ends early, with More (a page has at least one change).
	MaxPullBytes = 8 << 20
	// MaxDevice bounds a device id.
	MaxDevice = 64
)

// Change is one record of a workspace's change log, opaque to the relay.
type Change struct {
	Seq    int64  `json:"seq,omitempty"` // assigned by the relay, increasing per workspace
	Key    string `json:"key"`           // opaque record key: 64 lowercase hex (the desktop's HMAC of table+primary key)
	Device string `json:"device"`        // the device that wrote it, "dev_" + base32/hex id, ≤ 64 chars
	Body   []byte `json:"body"`          // the sealed record (base64 in JSON), 1..MaxChange bytes
}

// ChangePush is the body of POST /v1/workspaces/{id}/changes: 1..MaxPush
// changes without a seq. A key pushed twice in one push keeps the later.
type ChangePush struct {
	Changes []Change `json:"changes"`
}

// Pushed answers a push: the workspace's newest seq, that of the push's
// last change.
type Pushed struct {
	Last int64 `json:"last"`
}

// ChangePage answers GET /v1/workspaces/{id}/changes?after=N&limit=M
// (limit ≤ MaxPull, default DefaultPull).
type ChangePage struct {
	Changes []Change `json:"changes"` // seq > after, ascending
	Last    int64    `json:"last"`    // the workspace's newest seq
	// More says that changes up to Last remain: pull again after the last
	// change's seq. Without More the device has everything up to Last.
	More bool `json:"more"`
}

// ErrChange: a change, or a push, the relay refuses.
var ErrChange = errors.New("invalid change")

// ValidKey says whether key is a record key: 64 lowercase hex digits.
func ValidKey(key string) bool {
	if len(key) != 64 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidDevice says whether id is a device id: "dev_" and 1 to 60 ASCII
// letters or digits (a base32 or hex id).
func ValidDevice(id string) bool {
	rest, ok := strings.CutPrefix(id, "dev_")
	if !ok || rest == "" || len(id) > MaxDevice {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// CheckPush returns an error wrapping [ErrChange] that says what to fix
// when p is not a push the relay takes.
func CheckPush(p ChangePush) error {
	if len(p.Changes) == 0 {
		return fmt.Errorf("%w: the push has no changes", ErrChange)
	}
	if len(p.Changes) > MaxPush {
		return fmt.Errorf("%w: %d changes in one push; send at most %d at a time", ErrChange, len(p.Changes), MaxPush)
	}
	total := 0
	for i, c := range p.Changes {
		if err := CheckChange(c); err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
		total += len(c.Body)
	}
	if total > MaxPushBytes {
		return fmt.Errorf("%w: %d bytes of sealed records in one push; send at most %d MiB at a time", ErrChange, total, MaxPushBytes>>20)
	}
	return nil
}

// CheckChange returns an error wrapping [ErrChange] that says what to fix
// when c is not a change a device may push.
func CheckChange(c Change) error {
	switch {
	case c.Seq != 0:
		return fmt.Errorf("%w: seq is %d; leave it out, the relay assigns it", ErrChange, c.Seq)
	case !ValidKey(c.Key):
		return fmt.Errorf("%w: key %.70q is not 64 lowercase hex digits (the record's HMAC, never its name)", ErrChange, c.Key)
	case !ValidDevice(c.Device):
		return fmt.Errorf("%w: device %.70q is not \"dev_\" and up to 60 letters or digits", ErrChange, c.Device)
	case len(c.Body) == 0:
		return fmt.Errorf("%w: the body is empty; a deletion is a sealed tombstone", ErrChange)
	case len(c.Body) > MaxChange:
		return fmt.Errorf("%w: the body has %d bytes, over the %d KiB a sealed record may have", ErrChange, len(c.Body), MaxChange>>10)
	}
	return nil
}
