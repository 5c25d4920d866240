package outbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

type received struct {
	header http.Header
	path   string
	body   []byte
}

// receiver is a local server that records each request and answers with
// status (200 unless set).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	status atomic.Int32
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, received{req.Header.Clone(), req.URL.Path, b})
		r.mu.Unlock()
		if s := r.status.Load(); s != 0 {
			http.Error(w, "the receiver is down for maintenance", int(s))
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

const approvalCard = `{"title":"Ship it","items":[{"id":"1","title":"Run the migration","kind":"command","detail":"DEPLOY_TOKEN=sk-live-4f9a8b7c6d5e make migrate"},{"id":"2","title":"Post to #ops","kind":"text","detail":"Deployed."}]}`

// Each flavour gets its own shape; the json one is signed the Standard
// Webhooks way (checked with sync/protocol's verifier); none carries a
// secret; a URL's variable reference is resolved when it is sent.
func TestHooks(t *testing.T) {
	slack, discord, ntfy, plain := newReceiver(t), newReceiver(t), newReceiver(t), newReceiver(t)
	f := newFixture(t, outbox.Deps{}, outbox.Config{})
	ctx := context.Background()
	const signing = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	if _, err := f.vars.Set(ctx, "HOOK_SECRET", signing); err != nil {
		t.Fatal(err)
	}
	if _, err := f.vars.Set(ctx, "SLACK_PATH", "T000/B000/XXXX"); err != nil {
		t.Fatal(err)
	}
	hooks, err := f.out.SetHooks(ctx, []outbox.Hook{
		{Flavour: outbox.Slack, URL: slack.URL + "/services/${SLACK_PATH}"},
		{Flavour: outbox.Discord, URL: discord.URL + "/api/webhooks/1/abc"},
		{Flavour: outbox.Ntfy, URL: ntfy.URL + "/rerun-alerts"},
		{Flavour: outbox.JSON, URL: plain.URL + "/rerun", Secret: "${HOOK_SECRET}", Name: "My server"},
		{Flavour: outbox.JSON, URL: plain.URL + "/errors-only", Secret: "${HOOK_SECRET}", Kinds: []string{notify.Error}},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.out.Start()
	n := f.card(t, notify.Approval, approvalCard, "Needs your approval for 2 actions", "Token "+leaked, true)
	waittest.Until(t, "every hook is called", func() bool {
		return len(slack.requests()) == 1 && len(discord.requests()) == 1 && len(ntfy.requests()) == 1 && len(plain.requests()) == 1
	})
	link := appURL + "/?notification=" + n.ID + "&workspace=ws_test"
	for name, r := range map[string]*receiver{"slack": slack, "discord": discord, "ntfy": ntfy, "json": plain} {
		got := r.requests()[0]
		if strings.Contains(string(got.body), leaked) || strings.Contains(strings.Join(got.header.Values("Title"), ""), leaked) {
			t.Errorf("%s: the request carries a secret value: %s", name, got.body)
		}
		if !strings.Contains(string(got.body), "Run the migration") {
			t.Errorf("%s: no approval item in %s", name, got.body)
		}
	}

	s := slack.requests()[0]
	var sb struct{ Text string }
	if err := json.Unmarshal(s.body, &sb); err != nil || s.path != "/services/T000/B000/XXXX" {
		t.Fatalf("slack: %s at %s (%v)", s.body, s.path, err)
	}
	if !strings.Contains(sb.Text, "*Deploy bot*: Needs your approval") || !strings.Contains(sb.Text, "<"+link+"|Open in Rerun>") {
		t.Errorf("slack text %q", sb.Text)
	}

	var db struct {
		Content         string
		AllowedMentions struct{ Parse []string } `json:"allowed_mentions"`
	}
	if err := json.Unmarshal(discord.requests()[0].body, &db); err != nil || !strings.Contains(db.Content, "[Open in Rerun](<"+link+">)") {
		t.Errorf("discord %+v (%v)", db, err)
	}
	if db.AllowedMentions.Parse == nil || len(db.AllowedMentions.Parse) != 0 {
		t.Errorf("discord: mentions not disabled")
	}

	nt := ntfy.requests()[0]
	if nt.header.Get("Title") != "Deploy bot: Needs your approval for 2 actions" || nt.header.Get("Click") != link || nt.header.Get("Priority") != "high" {
		t.Errorf("ntfy headers %v", nt.header)
	}
	if !strings.HasPrefix(nt.header.Get("Content-Type"), "text/plain") || !strings.Contains(string(nt.body), "To approve or decline:") {
		t.Errorf("ntfy body %q", nt.body)
	}

	js := plain.requests()[0]
	if js.path != "/rerun" {
		t.Errorf("json hook with kinds [error] was called for an approval: %s", js.path)
	}
	err = protocol.VerifyWebhook(outbox.SigningKey(signing), js.header.Get("webhook-id"), js.header.Get("webhook-timestamp"),
		js.header.Get("webhook-signature"), js.body, time.Now(), 5*time.Minute)
	if err != nil {
		t.Errorf("signature: %v", err)
	}
	var p outbox.Payload
	if err := json.Unmarshal(js.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Type != "notification.created" || p.Data.NotificationID != n.ID || p.Data.Agent != "Deploy bot" || p.Data.Link != link ||
		len(p.Data.Items) != 2 || !strings.Contains(p.Data.Items[0].Detail, "make migrate") || p.Data.Items[1].Kind != "text" {
		t.Errorf("payload %+v", p)
	}
	var sendID string
	if err := f.db.QueryRow(`SELECT id FROM outbox WHERE notification_id = ? AND target = ?`, n.ID, hooks[3].ID).Scan(&sendID); err != nil {
		t.Fatal(err)
	}
	if js.header.Get("webhook-id") != sendID {
		t.Errorf("webhook-id %q, want the send id %q", js.header.Get("webhook-id"), sendID)
	}
	// A tampered body does not verify.
	if protocol.VerifyWebhook(outbox.SigningKey(signing), sendID, js.header.Get("webhook-timestamp"), js.header.Get("webhook-signature"),
		append(js.body, ' '), time.Now(), 5*time.Minute) == nil {
		t.Error("a tampered body verified")
	}
}

// A hook that fails is retried with backoff and shows its answer while it
// waits; one that keeps failing is given up, visibly.
func TestHookRetry(t *testing.T) {
	r := newReceiver(t)
	r.status.Store(503)
	f := newFixture(t, outbox.Deps{}, outbox.Config{Backoff: 50 * time.Millisecond, Attempts: 4})
	ctx := context.Background()
	if _, err := f.out.SetHooks(ctx, []outbox.Hook{{Flavour: outbox.Ntfy, URL: r.URL + "/t"}}); err != nil {
		t.Fatal(err)
	}
	f.out.Start()
	n, err := f.notes.Notify(ctx, notify.Input{AgentID: agentID, RunID: runID, Kind: notify.Error, Title: "The nightly report failed", Automated: true})
	if err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "a failure is recorded", func() bool {
		_, _, attempts, lastErr := f.row(t, n, outbox.ChannelHook)
		return attempts >= 1 && lastErr != ""
	})
	list, _ := f.out.Deliveries(ctx, outbox.ListOptions{NotificationID: n.ID})
	if len(list) != 1 || !strings.Contains(list[0].LastError, "503") || !strings.Contains(list[0].LastError, "down for maintenance") {
		t.Fatalf("deliveries %+v", list)
	}
	r.status.Store(0)
	waittest.Until(t, "the retry is sent", func() bool {
		_, status, _, _ := f.row(t, n, outbox.ChannelHook)
		return status == outbox.Sent
	})
	if got := len(r.requests()); got < 2 {
		t.Errorf("%d requests, want a failed one and a retry", got)
	}
	before := len(r.requests())

	r.status.Store(500)
	n2, _ := f.notes.Notify(ctx, notify.Input{AgentID: agentID, RunID: runID, Kind: notify.Error, Title: "Again", Automated: true})
	waittest.Until(t, "the delivery is given up", func() bool {
		_, status, _, _ := f.row(t, n2, outbox.ChannelHook)
		return status == outbox.Failed
	})
	if got := len(r.requests()) - before; got != 4 {
		t.Errorf("%d attempts, want 4", got)
	}
	problems, _ := f.out.Deliveries(ctx, outbox.ListOptions{Problems: true})
	if len(problems) != 1 || problems[0].NotificationID != n2.ID || problems[0].Status != outbox.Failed {
		t.Errorf("problems %+v", problems)
	}
}

func TestHookCheck(t *testing.T) {
	has := func(name string) bool { return name == "S" }
	for _, tc := range []struct {
		h    outbox.Hook
		want string
	}{
		{outbox.Hook{Flavour: "teams", URL: "https://x.example"}, `flavour "teams" is unknown`},
		{outbox.Hook{Flavour: outbox.Slack, URL: "http://hooks.slack.com/x"}, "must use https"},
		{outbox.Hook{Flavour: outbox.Slack, URL: "hooks.slack.com/x"}, "full http(s) URL"},
		{outbox.Hook{Flavour: outbox.Slack, URL: "https://u:p@x.example/"}, "carries a password"},
		{outbox.Hook{Flavour: outbox.Slack, URL: "https://x.example/${NOPE}"}, "variable NOPE"},
		{outbox.Hook{Flavour: outbox.JSON, URL: "https://x.example/"}, "give the variable holding its signing secret"},
		{outbox.Hook{Flavour: outbox.JSON, URL: "https://x.example/", Secret: "plain"}, "never the secret itself"},
		{outbox.Hook{Flavour: outbox.Slack, URL: "https://x.example/", Secret: "${S}"}, "takes no secret"},
		{outbox.Hook{Flavour: outbox.Ntfy, URL: "https://ntfy.sh/x", Kinds: []string{"gossip"}}, `kind "gossip" is unknown`},
	} {
		h := tc.h
		if err := h.Check(has); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.h, err, tc.want)
		}
	}
	ok := outbox.Hook{Flavour: "JSON", URL: "https://x.example/${S}", Secret: "${S}"}
	if err := ok.Check(has); err != nil || ok.Name != "json x.example" {
		t.Errorf("%+v %v", ok, err)
	}
}
