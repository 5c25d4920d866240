package relaylink_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/outbox"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/pushtest"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// logBuffer collects every log line of the desktop and the relay.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// TestPhoneAnswersConnectorBudgetCredential: connector, credential and
// budget cards reach the phone with what it needs to answer them (never a
// secret value), and a sealed answer from the phone resumes the run with
// the decision, as the app's answer would. A credential's value is set as
// the variable and is nowhere in the relay's database or in any log.
func TestPhoneAnswersConnectorBudgetCredential(t *testing.T) {
	ctx := context.Background()
	const (
		credValue  = "phone-cred-4b7d19ae"
		tokenValue = "phone-acme-5c2f88e1"
	)
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fake := llmtest.New(t)
	_, w, _ := served(t, workspace.Config{Logger: logger, LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Builder", BoxID: boxes[0].ID, Capabilities: []string{"human"}})
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "relay.db")
	store, err := relay.OpenSQLite(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	rl := relaytest.StartOn(t, store, relay.Config{Logger: logger})
	l, err := rl.Server.CreateWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret}); err != nil {
		t.Fatal(err)
	}
	inv, err := w.Relay.PairPhone(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, frag, _ := strings.Cut(inv.Link, "#pair=")
	raw, _ := base64.RawURLEncoding.DecodeString(frag)
	var f struct {
		WS    string `json:"w"`
		Token string `json:"t"`
		Key   string `json:"k"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	key, _ := base64.RawURLEncoding.DecodeString(f.Key)
	// A failure shows what the outbox tried and every log line.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ds, err := w.Outbox.Deliveries(ctx, outbox.ListOptions{})
		for _, d := range ds {
			t.Logf("delivery %s of %s: %s %s, %d attempts, last error %q", d.ID, d.NotificationID, d.Channel, d.Status, d.Attempts, d.LastError)
		}
		t.Logf("deliveries: %d (err %v); the logs:\n%s", len(ds), err, logs.Bytes())
	})
	push := pushtest.New(t)
	sub := push.Subscribe("pixel")
	code, body := phoneCall(t, "POST", rl.URL+"/v1/phone/pair", "", protocol.PairPhone{WorkspaceID: f.WS, Token: f.Token, Name: "Pixel", Subscription: sub.Subscription})
	if code != http.StatusCreated {
		t.Fatalf("pair: %d %s", code, body)
	}
	var paired protocol.PhonePaired
	json.Unmarshal([]byte(body), &paired)
	if _, err := w.Relay.Phones(ctx); err != nil {
		t.Fatal(err)
	}
	d, _ := w.Notify.Delivery(ctx)
	for _, k := range []string{notify.Connector, notify.Credential, pause.Budget} {
		d[k][notify.Mine][notify.Phone] = true
	}
	if _, err := w.Notify.SetDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}

	// card reads the next push as the phone does.
	type card struct {
		ID        string `json:"id"`
		PauseID   string `json:"pause_id"`
		Kind      string `json:"kind"`
		Connector *struct {
			Connector string        `json:"connector"`
			Fields    []pause.Field `json:"fields"`
		} `json:"connector"`
		Budget *struct {
			Unit         string  `json:"unit"`
			Limit        float64 `json:"limit"`
			Spent        float64 `json:"spent"`
			SuggestMore  float64 `json:"suggest_more"`
			SuggestLimit float64 `json:"suggest_limit"`
		} `json:"budget"`
		Credential *struct {
			Variable string   `json:"variable"`
			Label    string   `json:"label"`
			Hosts    []string `json:"hosts"`
		} `json:"credential"`
	}
	next := func(t *testing.T, kind string) (card, []byte) {
		t.Helper()
		m := push.Next(t)
		if m.Err != nil {
			t.Fatalf("the push service refused the push: %v", m.Err)
		}
		plain, err := protocol.OpenPhone(key, protocol.SealCard, m.Plain)
		if err != nil {
			t.Fatalf("the phone cannot open the card: %v", err)
		}
		var c card
		if err := json.Unmarshal(plain, &c); err != nil || c.Kind != kind || c.PauseID == "" {
			t.Fatalf("card %s: %v; want a %s card", plain, err, kind)
		}
		return c, plain
	}
	// answer seals body as the phone does and waits for the run to end.
	answer := func(t *testing.T, c card, r run.Run, body string) run.Pause {
		t.Helper()
		ab, _ := json.Marshal(relaylink.PhoneAnswer{V: 1, NotificationID: c.ID, PauseID: c.PauseID, PhoneID: paired.PhoneID,
			At: time.Now(), Answer: json.RawMessage(body)})
		sealed, _ := protocol.SealPhone(key, protocol.SealAnswer, ab)
		if code, body := phoneCall(t, "POST", rl.URL+"/v1/phone/answers", paired.Secret, protocol.PhoneAnswer{Body: sealed}); code != http.StatusAccepted {
			t.Fatalf("answer: %d %s", code, body)
		}
		waittest.Until(t, "the phone's answer reaches the card", func() bool {
			p, _ := w.Runs.GetPause(ctx, c.PauseID)
			return p.Status != pause.Open
		})
		wctx, cancel := context.WithTimeout(ctx, waittest.Patience)
		defer cancel()
		done, err := w.Runs.Wait(wctx, r.ID)
		if err != nil || done.Status != run.Done {
			t.Fatalf("run = %s %v %s", done.Status, err, done.Error)
		}
		p, _ := w.Runs.GetPause(ctx, c.PauseID)
		if p.Status != pause.Answered {
			t.Fatalf("pause %s: %s, want answered", p.Status, p.Answer)
		}
		return p
	}
	start := func(t *testing.T, text string) run.Run {
		t.Helper()
		sess, _ := w.Runs.ChatSession(ctx, a.ID)
		r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, text, run.StartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	t.Run("connector", func(t *testing.T) {
		fake.Script(
			llmtest.Tools(llmtest.ToolCall{ID: "cn", Name: "request_connector", Args: `{"connector":"Acme","fields":[` +
				`{"name":"url","label":"Address","type":"url","required":true},{"name":"api_token","label":"API token","type":"secret","required":true}]}`}),
			llmtest.Text("Connected."),
		)
		r := start(t, "connect acme")
		c, _ := next(t, pause.Connector)
		if c.Connector == nil || c.Connector.Connector != "Acme" || len(c.Connector.Fields) != 2 || c.Connector.Fields[1].Type != pause.FieldSecret {
			t.Fatalf("connector card: %+v", c.Connector)
		}
		p := answer(t, c, r, `{"values":{"url":"https://acme.example","api_token":"`+tokenValue+`"}}`)
		var got pause.ConnectorAnswer
		json.Unmarshal(p.Answer, &got)
		if got.Values["url"] != "https://acme.example" || got.Values["api_token"] != "${ACME_API_TOKEN}" {
			t.Errorf("stored answer %s; want the url and the token's variable", p.Answer)
		}
		if v, _ := w.Variables.Resolve("${ACME_API_TOKEN}"); v != tokenValue {
			t.Errorf("ACME_API_TOKEN = %q, want the phone's value", v)
		}
	})

	t.Run("credential", func(t *testing.T) {
		old, hosts := "placeholder-old", []string{"api.stripe.com"}
		if _, err := w.Variables.Update(ctx, "STRIPE_KEY", secret.Change{Value: &old, Hosts: &hosts}); err != nil {
			t.Fatal(err)
		}
		fake.Script(
			llmtest.Tools(llmtest.ToolCall{ID: "cr", Name: "request_credential", Args: `{"variable":"STRIPE_KEY","label":"Stripe key"}`}),
			llmtest.Text("Got it."),
		)
		r := start(t, "charge it")
		c, plain := next(t, pause.Credential)
		if c.Credential == nil || c.Credential.Variable != "STRIPE_KEY" || c.Credential.Label != "Stripe key" ||
			len(c.Credential.Hosts) != 1 || c.Credential.Hosts[0] != "api.stripe.com" {
			t.Fatalf("credential card: %s", plain)
		}
		if bytes.Contains(plain, []byte("placeholder-old")) {
			t.Errorf("the card carries the variable's value: %s", plain)
		}
		p := answer(t, c, r, `{"value":"`+credValue+`"}`)
		var got pause.CredentialAnswer
		json.Unmarshal(p.Answer, &got)
		if got.Variable != "STRIPE_KEY" || !got.Filled || bytes.Contains(p.Answer, []byte(credValue)) {
			t.Errorf("stored answer %s; want the variable named, filled, without the value", p.Answer)
		}
		if v, _ := w.Variables.Resolve("${STRIPE_KEY}"); v != credValue {
			t.Errorf("STRIPE_KEY = %q, want the phone's value", v)
		}
	})

	// The runs above spent more than the one token a day the agent is now
	// allowed: its next run stops at the budget before calling the model.
	t.Run("budget", func(t *testing.T) {
		if _, err := w.Budgets.SetAgent(ctx, a.ID, budget.Update{DayTokens: ptr[int64](1)}); err != nil {
			t.Fatal(err)
		}
		fake.Script(llmtest.Text("Done within the new allowance."))
		r := start(t, "spend more")
		c, plain := next(t, pause.Budget)
		if c.Budget == nil || c.Budget.Unit != pause.UnitTokens || c.Budget.Limit != 1 || c.Budget.Spent <= 0 ||
			c.Budget.SuggestMore <= 0 || c.Budget.SuggestLimit <= c.Budget.Spent {
			t.Fatalf("budget card: %s", plain)
		}
		p := answer(t, c, r, `{"choice":"allow","amount":100000}`)
		var got pause.BudgetAnswer
		json.Unmarshal(p.Answer, &got)
		if got.Choice != pause.BudgetAllow || got.Amount != 100000 {
			t.Errorf("stored answer %s; want allow 100000", p.Answer)
		}
	})

	// The relay's queue drains; its store and every log line hold neither
	// value in the clear.
	waittest.Until(t, "the relay's queue drains", func() bool {
		due, _, _ := rl.Store.Due(ctx, l.WorkspaceID, time.Now().Add(time.Hour), 10)
		return len(due) == 0
	})
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(dbPath + suffix)
		for _, s := range []string{credValue, tokenValue, "Stripe key"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("relay.db%s holds %q in the clear", suffix, s)
			}
		}
	}
	for _, s := range []string{credValue, tokenValue} {
		if bytes.Contains(logs.Bytes(), []byte(s)) {
			t.Errorf("the logs hold %q", s)
		}
	}
	if !bytes.Contains(logs.Bytes(), []byte("card answered from a phone")) {
		t.Error("no log line says a card was answered from a phone: the logs checked are not the ones written")
	}
}

func ptr[T any](v T) *T { return &v }
