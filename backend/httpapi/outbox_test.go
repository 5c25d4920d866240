package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/internal/mailpittest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// Settings → Notifications → Email and Hooks through the API: checked
// settings, the test button's real answer, a notification from an automated
// run delivered by mail with a link to the app, and the deliveries listed.
func TestEmailAndHooksThroughTheAPI(t *testing.T) {
	mp := mailpittest.Start(t, mailpittest.Options{})
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	ctx := context.Background()
	w, _ := e.home.Workspace(e.ws)
	if _, err := w.Variables.Set(ctx, "SMTP_PASSWORD", "pw-never-shown"); err != nil {
		t.Fatal(err)
	}
	var failure struct{ Error string }
	if code := e.do(t, "PUT", base+"/settings/notifications/email",
		`{"host":"127.0.0.1","port":25,"tls":"none","user":"me","password":"pw-never-shown","from":"a@example.com","to":"b@example.com"}`, &failure); code != 400 ||
		!strings.Contains(failure.Error, "${SMTP_PASSWORD}") {
		t.Fatalf("a password in clear: %d %+v", code, failure)
	}
	body := fmt.Sprintf(`{"host":"127.0.0.1","port":%d,"tls":"none","user":"me","password":"${SMTP_PASSWORD}","from":"a@example.com","to":"b@example.com"}`, mp.Port)
	var saved outbox.Email
	if code := e.do(t, "PUT", base+"/settings/notifications/email", body, &saved); code != 200 || saved.Password != "${SMTP_PASSWORD}" {
		t.Fatalf("save: %d %+v", code, saved)
	}
	var got outbox.Email
	if e.do(t, "GET", base+"/settings/notifications/email", "", &got); got != saved {
		t.Errorf("read back %+v, want %+v", got, saved)
	}
	var res struct {
		OK     bool
		Answer string
	}
	if code := e.do(t, "POST", base+"/settings/notifications/email/test", body, &res); code != 200 || !res.OK {
		t.Fatalf("test email: %d %+v", code, res)
	}
	refused := strings.Replace(body, fmt.Sprint(mp.Port), fmt.Sprint(mailpittest.FreePort(t)), 1)
	if code := e.do(t, "POST", base+"/settings/notifications/email/test", refused, &res); code != 200 || res.OK || !strings.Contains(res.Answer, "refused") {
		t.Errorf("test email to no server: %d %+v", code, res)
	}

	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", 418) }))
	defer hook.Close()
	var hooks []outbox.Hook
	if code := e.do(t, "PUT", base+"/settings/notifications/hooks", `[{"flavour":"slack","url":"`+hook.URL+`/x"}]`, &hooks); code != 200 || len(hooks) != 1 || hooks[0].ID == "" {
		t.Fatalf("hooks: %d %+v", code, hooks)
	}
	if code := e.do(t, "POST", base+"/settings/notifications/hooks/test", `{"flavour":"slack","url":"`+hook.URL+`/x"}`, &res); code != 200 || res.OK || !strings.Contains(res.Answer, "418") {
		t.Errorf("test hook: %d %+v", code, res)
	}

	a := e.agent(t, "Night shift")
	n := e.notify(t, notify.Input{AgentID: a, Kind: notify.Error, Title: "The nightly import failed", Automated: true})
	waittest.Until(t, "the mail arrives", func() bool { return len(mp.Messages(t)) == 2 })
	m := mp.Message(t, mp.Messages(t)[0].ID)
	link := "http://" + strings.TrimPrefix(e.srv.URL, "http://") + "/?notification=" + n.ID + "&workspace=" + e.ws
	if m.Subject != "[Rerun] Night shift: The nightly import failed" || !strings.Contains(m.Text, link) {
		t.Errorf("mail %q:\n%s\nwant link %s", m.Subject, m.Text, link)
	}
	waittest.Until(t, "the hook's failure is listed", func() bool {
		var list []outbox.Delivery
		e.do(t, "GET", base+"/notifications/deliveries?problems=1", "", &list)
		return len(list) == 1 && strings.Contains(list[0].LastError, "418")
	})
	var list []outbox.Delivery
	if code := e.do(t, "GET", base+"/notifications/deliveries?notification_id="+n.ID, "", &list); code != 200 || len(list) != 2 {
		t.Fatalf("deliveries: %d %+v", code, list)
	}
	b, _ := json.Marshal(list)
	if strings.Contains(string(b), "pw-never-shown") {
		t.Errorf("deliveries carry the password: %s", b)
	}
	var one notify.Notification
	if code := e.do(t, "GET", base+"/notifications/"+n.ID, "", &one); code != 200 || one.ID != n.ID {
		t.Errorf("the link's notification: %d %+v", code, one)
	}
	if code := e.do(t, "GET", base+"/notifications/deliveries?problems=maybe", "", &failure); code != 400 {
		t.Errorf("problems=maybe: %d", code)
	}
}
