package outbox_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/outbox"
)

// Settings from the UI: checking never panics, what passes checks again
// unchanged, and a password or signing secret that passes is a reference.
func FuzzSettings(f *testing.F) {
	f.Add(`{"host":"smtp.example.com","port":587,"tls":"starttls","user":"me","password":"${SMTP_PASSWORD}","from":"a@example.com","to":"b@example.com"}`,
		`{"flavour":"json","url":"https://x.example/${S}","secret":"${S}","kinds":["error"]}`)
	f.Add(`{"host":"127.0.0.1","tls":"none","from":"R <a@b.c>","to":"x@y.z, w@v.u"}`, `{"flavour":"ntfy","url":"http://localhost:8080/t"}`)
	has := func(string) bool { return true }
	f.Fuzz(func(t *testing.T, email, hook string) {
		var e outbox.Email
		if json.Unmarshal([]byte(email), &e) == nil && e.Check(has) == nil {
			again := e
			if err := again.Check(has); err != nil || again != e {
				t.Fatalf("checked email %+v does not check again: %+v %v", e, again, err)
			}
			if e.Password != "" && !strings.HasPrefix(e.Password, "${") {
				t.Fatalf("password %q passed", e.Password)
			}
		}
		var h outbox.Hook
		if json.Unmarshal([]byte(hook), &h) == nil && h.Check(has) == nil {
			if h.Secret != "" && !strings.HasPrefix(h.Secret, "${") {
				t.Fatalf("secret %q passed", h.Secret)
			}
			again := h
			if err := again.Check(has); err != nil {
				t.Fatalf("checked hook %+v does not check again: %v", h, err)
			}
		}
	})
}
