package httpapi

import (
	"net/http/httptest"
	"strings"
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

// The sign-in page escapes what it shows: an app's name or a provider's
// error cannot put markup in it.
func TestCallbackPageEscapes(t *testing.T) {
	w := httptest.NewRecorder()
	writeCallbackPage(w, 400, `Not <b>connected</b>`, `Evil <script>alert("x")</script> & co`)
	body := w.Body.String()
	if w.Code != 400 || strings.Contains(body, "<script>") || strings.Contains(body, "<b>") ||
		!strings.Contains(body, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co") || !strings.Contains(body, "<title>Not &lt;b&gt;connected&lt;/b&gt; — Rerun</title>") {
		t.Fatalf("page %d:\n%s", w.Code, body)
	}
}
