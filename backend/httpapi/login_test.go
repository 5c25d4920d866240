package httpapi

import (
	"testing"
	"time"
)

// A login code is good once, within loginTTL; codes are not guessable from
// each other and an expired one is forgotten when the next is issued.
func TestLoginCodes(t *testing.T) {
	var l logins
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	a, b := l.issue(now), l.issue(now)
	if a == b || len(a) < 40 {
		t.Fatalf("codes %q and %q: want two different codes of 32 random bytes", a, b)
	}
	if l.use("not-a-code", now) {
		t.Error("an unknown code signed in")
	}
	if !l.use(a, now.Add(loginTTL)) {
		t.Error("a code within its time did not sign in")
	}
	if l.use(a, now) {
		t.Error("a used code signed in again")
	}
	if l.use(b, now.Add(loginTTL+time.Second)) {
		t.Error("an expired code signed in")
	}
	c := l.issue(now)
	l.issue(now.Add(loginTTL + time.Second))
	if _, ok := l.codes[hashOf(c)]; ok {
		t.Error("an expired code is still kept after a new one was issued")
	}
}
