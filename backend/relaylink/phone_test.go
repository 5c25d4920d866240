package relaylink_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/pushtest"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// phoneCall is one call of the relay's phone API, as the phone's page
// makes it.
func phoneCall(t *testing.T, method, url, bearer string, in any) (int, string) {
	t.Helper()
	b, _ := json.Marshal(in)
	req, _ := http.NewRequest(method, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out bytes.Buffer
	out.ReadFrom(res.Body)
	return res.StatusCode, out.String()
}

// The whole way of a card to a phone and of its answer back: the desktop
// pairs a phone, a run raises an approval card, the outbox pushes it
// through the relay to the (fake) push service, where the phone's key
// opens it; the phone approves one item and declines the other through the
// relay, and the run resumes with those decisions. The relay's database
// holds neither the card nor the answer in the clear.
func TestPhoneCardAndAnswer(t *testing.T) {
	ctx := context.Background()
	const leaked = "sk-live-phone-9f8e7d6c"
	fake := llmtest.New(t)
	_, w, _ := served(t, workspace.Config{LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Deployer", BoxID: boxes[0].ID, Capabilities: []string{"human"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Variables.Set(ctx, "DEPLOY_TOKEN", leaked); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "relay.db")
	store, err := relay.OpenSQLite(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	rl := relaytest.StartOn(t, store, relay.Config{})

	if _, err := w.Relay.PairPhone(ctx); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("pair a phone before linking: %v, want a conflict", err)
	}
	l, err := rl.Server.CreateWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Relay.Link(ctx, relaylink.LinkRequest{RelayURL: rl.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret}); err != nil {
		t.Fatal(err)
	}
	if w.Relay.PhonesPaired() {
		t.Error("a phone is paired before any was")
	}

	// Pairing: the link's fragment holds the token and the phone key.
	inv, err := w.Relay.PairPhone(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(inv.QR, "data:image/png;base64,") || time.Until(inv.ExpiresAt) > relaylink.PairingTTL {
		t.Errorf("invite: QR %.30q, expires %v", inv.QR, inv.ExpiresAt)
	}
	page, frag, ok := strings.Cut(inv.Link, "#pair=")
	if !ok || page != rl.URL+"/p/" {
		t.Fatalf("link %q", inv.Link)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(frag)
	var f struct {
		V     int    `json:"v"`
		WS    string `json:"w"`
		Token string `json:"t"`
		Key   string `json:"k"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || f.V != 1 || f.WS != l.WorkspaceID {
		t.Fatalf("fragment %s: %v", raw, err)
	}
	key, _ := base64.RawURLEncoding.DecodeString(f.Key)
	push := pushtest.New(t)
	sub := push.Subscribe("pixel")
	code, body := phoneCall(t, "POST", rl.URL+"/v1/phone/pair", "", protocol.PairPhone{WorkspaceID: f.WS, Token: f.Token, Name: "Pixel", Subscription: sub.Subscription})
	if code != http.StatusCreated {
		t.Fatalf("pair: %d %s", code, body)
	}
	var paired protocol.PhonePaired
	json.Unmarshal([]byte(body), &paired)
	if code, _ := phoneCall(t, "POST", rl.URL+"/v1/phone/pair", "", protocol.PairPhone{WorkspaceID: f.WS, Token: f.Token, Name: "Again", Subscription: sub.Subscription}); code != http.StatusGone {
		t.Errorf("the link used twice: %d, want 410", code)
	}
	phones, err := w.Relay.Phones(ctx)
	if err != nil || len(phones) != 1 || phones[0].Name != "Pixel" || !w.Relay.PhonesPaired() {
		t.Fatalf("phones: %+v %v", phones, err)
	}

	// Approval cards of runs I start go to the phone.
	d, _ := w.Notify.Delivery(ctx)
	d[notify.Approval][notify.Mine][notify.Phone] = true
	if _, err := w.Notify.SetDelivery(ctx, d); err != nil {
		t.Fatal(err)
	}
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "ap", Name: "request_approval", Args: `{"title":"Release","items":[` +
			`{"title":"Deploy to prod","kind":"command","detail":"deploy --token ` + leaked + `"},{"title":"Email the customers"}]}`}),
		llmtest.Text("Deployed; no email sent."),
	)
	sess, _ := w.Runs.ChatSession(ctx, a.ID)
	r, err := w.Runs.Start(ctx, a.ID, sess.ID, run.SourceChat, "release it", run.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}

	m := push.Next(t)
	if m.Err != nil {
		t.Fatalf("the push service refused the push: %v", m.Err)
	}
	plain, err := protocol.OpenPhone(key, protocol.SealCard, m.Plain)
	if err != nil {
		t.Fatalf("the phone cannot open the card: %v", err)
	}
	var card struct {
		ID, PauseID, Kind, Title string
		Items                    []struct{ ID, Title, Detail string }
	}
	json.Unmarshal(bytes.ReplaceAll(plain, []byte(`"pause_id"`), []byte(`"pauseid"`)), &card)
	if card.Kind != "approval" || card.PauseID == "" || len(card.Items) != 2 || card.Items[0].Title != "Deploy to prod" {
		t.Fatalf("card: %s", plain)
	}
	if strings.Contains(string(plain), leaked) {
		t.Errorf("the card carries a variable's value: %s", plain)
	}

	// The phone approves the deploy and declines the email.
	answer := relaylink.PhoneAnswer{V: 1, NotificationID: card.ID, PauseID: card.PauseID, PhoneID: paired.PhoneID, At: time.Now(),
		Answer: json.RawMessage(`{"decisions":[{"id":"` + card.Items[0].ID + `","approved":true},{"id":"` + card.Items[1].ID + `","approved":false,"note":"not today"}]}`)}
	ab, _ := json.Marshal(answer)
	sealed, _ := protocol.SealPhone(key, protocol.SealAnswer, ab)
	if code, body := phoneCall(t, "POST", rl.URL+"/v1/phone/answers", paired.Secret, protocol.PhoneAnswer{Body: sealed}); code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", code, body)
	}
	waittest.Until(t, "the phone's answer reaches the card", func() bool {
		p, _ := w.Runs.GetPause(ctx, card.PauseID)
		return p.Status != pause.Open
	})
	wctx, cancel := context.WithTimeout(ctx, waittest.Patience)
	defer cancel()
	done, err := w.Runs.Wait(wctx, r.ID)
	if err != nil || done.Status != run.Done {
		t.Fatalf("run = %s %v %s", done.Status, err, done.Error)
	}
	p, _ := w.Runs.GetPause(ctx, card.PauseID)
	var got pause.ApprovalAnswer
	json.Unmarshal(p.Answer, &got)
	if p.Status != pause.Answered || len(got.Decisions) != 2 || !got.Decisions[0].Approved || got.Decisions[1].Approved {
		t.Fatalf("pause %s: %s", p.Status, p.Answer)
	}

	// Single use: the same answer again (a replay) changes nothing, and the
	// relay's queue drains.
	if code, _ := phoneCall(t, "POST", rl.URL+"/v1/phone/answers", paired.Secret, protocol.PhoneAnswer{Body: sealed}); code != http.StatusAccepted {
		t.Fatal("second answer not taken")
	}
	waittest.Until(t, "the relay's queue drains", func() bool {
		due, _, _ := rl.Store.Due(ctx, l.WorkspaceID, time.Now().Add(time.Hour), 10)
		return len(due) == 0
	})
	if p2, _ := w.Runs.GetPause(ctx, card.PauseID); string(p2.Answer) != string(p.Answer) {
		t.Errorf("the replayed answer changed the card: %s", p2.Answer)
	}

	// An answer sealed by another phone id than the one that sent it, or
	// with another key, is refused (and dropped by the relay).
	forged, _ := json.Marshal(relaylink.PhoneAnswer{V: 1, PauseID: card.PauseID, PhoneID: "ph_other", Answer: json.RawMessage(`{}`)})
	if _, err := relaylink.ReadPhoneAnswer(key, paired.PhoneID, mustSeal(t, key, forged)); err == nil {
		t.Error("an answer naming another phone was taken")
	}
	if _, err := relaylink.ReadPhoneAnswer(protocol.PhoneKey(make([]byte, 32)), paired.PhoneID, sealed); err == nil {
		t.Error("an answer sealed with another key was taken")
	}

	// The relay's store holds the card and the answer only sealed.
	for _, suffix := range []string{"", "-wal"} {
		b, _ := os.ReadFile(dbPath + suffix)
		for _, s := range []string{"Deploy to prod", "Email the customers", "not today", leaked, f.Key} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("relay.db%s holds %q in the clear", suffix, s)
			}
		}
	}

	// Removing the phone: the relay forgets it, its secret stops working.
	if err := w.Relay.RemovePhone(ctx, paired.PhoneID); err != nil {
		t.Fatal(err)
	}
	if w.Relay.PhonesPaired() {
		t.Error("a phone is still paired after removing the only one")
	}
	if code, _ := phoneCall(t, "POST", rl.URL+"/v1/phone/answers", paired.Secret, protocol.PhoneAnswer{Body: sealed}); code != http.StatusUnauthorized {
		t.Errorf("a removed phone answers: %d, want 401", code)
	}
	if err := w.Relay.RemovePhone(ctx, paired.PhoneID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("remove again: %v, want not found", err)
	}
}

func mustSeal(t *testing.T, key, b []byte) []byte {
	t.Helper()
	s, err := protocol.SealPhone(key, protocol.SealAnswer, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func FuzzPhoneAnswer(f *testing.F) {
	key := protocol.PhoneKey(make([]byte, 32))
	f.Add([]byte(`{"v":1,"pause_id":"pa_1","phone_id":"ph_1","answer":{"answers":["yes"]}}`), "ph_1")
	f.Add([]byte(`{"v":2}`), "")
	f.Add([]byte(`[]`), "ph_1")
	f.Fuzz(func(t *testing.T, plain []byte, phone string) {
		sealed, _ := protocol.SealPhone(key, protocol.SealAnswer, plain)
		a, err := relaylink.ReadPhoneAnswer(key, phone, sealed)
		if err == nil && (a.PhoneID != phone || a.PauseID == "" || a.Answer[0] != '{') {
			t.Fatalf("took %+v", a)
		}
		relaylink.ReadPhoneAnswer(key, phone, plain) // unsealed bytes never panic
	})
}
