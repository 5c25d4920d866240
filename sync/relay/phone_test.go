package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/pushtest"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// clock is a relay clock tests move forward.
type clock struct{ skew atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.skew.Load())) }
func (c *clock) advance(d time.Duration) { c.skew.Add(int64(d)) }

func jsonBody(t testing.TB, v any) *bytes.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// addPairing registers a pairing token as the desktop does and returns it.
func addPairing(t testing.TB, r *relaytest.Relay, l protocol.Link, ttl time.Duration, now time.Time) string {
	t.Helper()
	token := "rpt_" + strings.Repeat("a", 10) + time.Now().Format("150405.000000000")
	code, body := do(t, "POST", r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/pairings"), l.Secret,
		jsonBody(t, protocol.PhonePairing{Hash: protocol.TokenHash(token), ExpiresAt: now.Add(ttl)}))
	if code != http.StatusNoContent {
		t.Fatalf("add pairing: %d %s", code, body)
	}
	return token
}

func pair(t testing.TB, r *relaytest.Relay, ws, token, name string, sub protocol.Subscription) (int, protocol.PhonePaired, string) {
	t.Helper()
	code, body := do(t, "POST", r.URL+protocol.PathPhoneAPI+"/pair", "",
		jsonBody(t, protocol.PairPhone{WorkspaceID: ws, Token: token, Name: name, Subscription: sub}))
	var p protocol.PhonePaired
	if code == http.StatusCreated {
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatal(err)
		}
	}
	return code, p, body
}

func TestPhonePairing(t *testing.T) {
	var c clock
	r := relaytest.Start(t, relay.Config{Now: c.now})
	l, other := r.Link(t), r.Link(t)
	push := pushtest.New(t)
	sub := push.Subscribe("a").Subscription

	token := addPairing(t, r, l, 10*time.Minute, c.now())
	if code, _, body := pair(t, r, other.WorkspaceID, token, "Pixel", sub); code != http.StatusNotFound {
		t.Errorf("a token of another workspace: %d %s, want 404", code, body)
	}
	bad := sub
	bad.Keys.Auth = "short"
	if code, _, body := pair(t, r, l.WorkspaceID, token, "Pixel", bad); code != http.StatusBadRequest || !strings.Contains(body, "auth") {
		t.Errorf("a damaged subscription: %d %s, want 400 about auth", code, body)
	}
	// A subscription naming a server that is not a push service: the relay
	// would POST wherever a pairing told it to.
	for _, endpoint := range []string{"https://metadata.internal/push/x", "https://fcm.googleapis.com.evil.example/x", "https://evilpush.apple.com.example/x"} {
		bad := sub
		bad.Endpoint = endpoint
		if code, _, body := pair(t, r, l.WorkspaceID, token, "Pixel", bad); code != http.StatusBadRequest || !strings.Contains(body, "not a push service") {
			t.Errorf("endpoint %s: %d %s, want 400 not a push service", endpoint, code, body)
		}
	}
	code, p, body := pair(t, r, l.WorkspaceID, token, "Pixel", sub)
	if code != http.StatusCreated || !protocol.ValidPhoneID(p.PhoneID) {
		t.Fatalf("pair: %d %s", code, body)
	}
	if code, _, body := pair(t, r, l.WorkspaceID, token, "Thief", push.Subscribe("b").Subscription); code != http.StatusGone || !strings.Contains(body, "already used") {
		t.Errorf("the token again: %d %s, want 410 already used", code, body)
	}
	if code, _, body := pair(t, r, l.WorkspaceID, "rpt_unknown", "Pixel", sub); code != http.StatusNotFound {
		t.Errorf("an unknown token: %d %s, want 404", code, body)
	}

	late := addPairing(t, r, l, 10*time.Minute, c.now())
	c.advance(11 * time.Minute)
	if code, _, body := pair(t, r, l.WorkspaceID, late, "Late", sub); code != http.StatusGone || !strings.Contains(body, "expired") {
		t.Errorf("an expired token: %d %s, want 410 expired", code, body)
	}
	code, body = do(t, "POST", r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/pairings"), l.Secret,
		jsonBody(t, protocol.PhonePairing{Hash: protocol.TokenHash("x"), ExpiresAt: c.now().Add(2 * time.Hour)}))
	if code != http.StatusBadRequest {
		t.Errorf("a pairing for two hours: %d %s, want 400", code, body)
	}
	if code, _ := do(t, "POST", r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/pairings"), other.Secret,
		jsonBody(t, protocol.PhonePairing{Hash: protocol.TokenHash("x"), ExpiresAt: c.now().Add(time.Minute)})); code != http.StatusUnauthorized {
		t.Errorf("another workspace's secret: %d, want 401", code)
	}

	devices := r.URL + protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/devices")
	code, body = do(t, "GET", devices, l.Secret, nil)
	var list []protocol.Phone
	json.Unmarshal([]byte(body), &list)
	if code != 200 || len(list) != 1 || list[0].ID != p.PhoneID || list[0].Name != "Pixel" {
		t.Fatalf("devices: %d %s", code, body)
	}
	if strings.Contains(body, p.Secret) || strings.Contains(body, sub.Keys.Auth) {
		t.Errorf("the device list shows the phone's secret or subscription: %s", body)
	}
	// The phone's secret works until the desktop removes the phone.
	resub := push.Subscribe("c").Subscription
	elsewhere := resub
	elsewhere.Endpoint = "https://169.254.169.254/latest"
	if code, body := do(t, "PUT", r.URL+protocol.PathPhoneAPI+"/subscription", p.Secret, jsonBody(t, elsewhere)); code != http.StatusBadRequest {
		t.Errorf("resubscribe to a server that is not a push service: %d %s, want 400", code, body)
	}
	if code, body := do(t, "PUT", r.URL+protocol.PathPhoneAPI+"/subscription", p.Secret, jsonBody(t, resub)); code != http.StatusNoContent {
		t.Errorf("resubscribe: %d %s", code, body)
	}
	if code, _ := do(t, "DELETE", devices+"/"+p.PhoneID, l.Secret, nil); code != http.StatusNoContent {
		t.Errorf("remove: %d", code)
	}
	if code, _ := do(t, "DELETE", devices+"/"+p.PhoneID, l.Secret, nil); code != http.StatusNotFound {
		t.Errorf("remove again: %d, want 404", code)
	}
	if code, body := do(t, "POST", r.URL+protocol.PathPhoneAPI+"/answers", p.Secret, jsonBody(t, protocol.PhoneAnswer{Body: []byte("x")})); code != http.StatusUnauthorized {
		t.Errorf("a removed phone answers: %d %s, want 401", code, body)
	}
	if code, _ := do(t, "POST", r.URL+protocol.PathPhoneAPI+"/answers", "rrp_ph_x.0123456789abcdef0", nil); code != http.StatusUnauthorized {
		t.Errorf("a made-up secret: %d, want 401", code)
	}
}

func TestPhonePush(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	push := pushtest.New(t)
	a, b := push.Subscribe("a"), push.Subscribe("b")
	_, pa, _ := pair(t, r, l.WorkspaceID, addPairing(t, r, l, time.Minute, time.Now()), "A", a.Subscription)
	_, pb, _ := pair(t, r, l.WorkspaceID, addPairing(t, r, l, time.Minute, time.Now()), "B", b.Subscription)

	code, body := do(t, "GET", r.URL+protocol.PathPhoneAPI+"/vapid", "", nil)
	var vapid protocol.VAPID
	json.Unmarshal([]byte(body), &vapid)
	if code != 200 || len(vapid.PublicKey) != 87 {
		t.Fatalf("vapid: %d %s", code, body)
	}

	key := protocol.PhoneKey(bytes.Repeat([]byte{7}, 32))
	sealed, _ := protocol.SealPhone(key, protocol.SealCard, []byte(`{"id":"nt_1","title":"Approve the deploy?"}`))
	url := r.URL + protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/push")
	code, body = do(t, "POST", url, l.Secret, jsonBody(t, protocol.PhonePush{ID: "ob_1", Tag: "nt_1", Body: sealed}))
	if code != 200 || !strings.Contains(body, `"sent":2`) {
		t.Fatalf("push: %d %s", code, body)
	}
	for range 2 {
		m := push.Next(t)
		if m.Err != nil {
			t.Fatalf("the push service refused the push: %v", m.Err)
		}
		if m.VAPIDKey != vapid.PublicKey {
			t.Errorf("the push was signed with %s, not the relay's announced key %s", m.VAPIDKey, vapid.PublicKey)
		}
		if !bytes.Equal(m.Plain, sealed) {
			t.Errorf("the phone decrypted %q, not the sealed card", m.Plain)
		}
		if plain, err := protocol.OpenPhone(key, protocol.SealCard, m.Plain); err != nil || !strings.Contains(string(plain), "deploy") {
			t.Errorf("open the card: %q %v", plain, err)
		}
		if m.Header.Get("Urgency") != "high" || m.Header.Get("Topic") == "" {
			t.Errorf("headers: Urgency %q, Topic %q", m.Header.Get("Urgency"), m.Header.Get("Topic"))
		}
	}

	// A failing push service: 502, the desktop retries. A gone
	// subscription: the phone is forgotten.
	push.Answer("a", http.StatusInternalServerError)
	push.Answer("b", http.StatusGone)
	code, body = do(t, "POST", url, l.Secret, jsonBody(t, protocol.PhonePush{ID: "ob_2", Tag: "nt_2", Body: sealed}))
	var out protocol.PhonePushed
	json.Unmarshal([]byte(body), &out)
	if code != http.StatusBadGateway || len(out.Failed) != 1 || out.Failed[0] != pa.PhoneID || len(out.Gone) != 1 || out.Gone[0] != pb.PhoneID {
		t.Fatalf("push to a failing and a gone phone: %d %s", code, body)
	}
	phones, _ := r.Store.Phones(context.Background(), l.WorkspaceID)
	if len(phones) != 1 || phones[0].ID != pa.PhoneID || !strings.Contains(phones[0].LastError, "500") {
		t.Errorf("phones after: %+v", phones)
	}
	if code, _ := do(t, "POST", url, l.Secret, jsonBody(t, protocol.PhonePush{ID: "ob_3", Body: make([]byte, protocol.MaxPushPayload+1)})); code != http.StatusBadRequest {
		t.Errorf("an oversized card: %d, want 400", code)
	}
}

func TestPhoneAnswerQueued(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	push := pushtest.New(t)
	_, p, _ := pair(t, r, l.WorkspaceID, addPairing(t, r, l, time.Minute, time.Now()), "A", push.Subscribe("a").Subscription)
	code, body := do(t, "POST", r.URL+protocol.PathPhoneAPI+"/answers", p.Secret, jsonBody(t, protocol.PhoneAnswer{Body: []byte("sealed answer")}))
	if code != http.StatusAccepted {
		t.Fatalf("answer: %d %s", code, body)
	}
	due, _, err := r.Store.Due(context.Background(), l.WorkspaceID, time.Now().Add(time.Second), 10)
	if err != nil || len(due) != 1 {
		t.Fatalf("due: %v %v", due, err)
	}
	d := due[0]
	if d.TokenHash != protocol.PhoneAnswerHash || d.Header.Get(protocol.HeaderPhone) != p.PhoneID || string(d.Body) != "sealed answer" {
		t.Errorf("the queued answer: %+v", d)
	}
}

func TestPhoneApp(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	for path, want := range map[string]string{
		"/p/": "<title>Rerun</title>", "/p/sw.js": "showNotification", "/p/manifest.webmanifest": `"display": "standalone"`,
		"/p/common.js": "AES-GCM", "/p/app.js": "/v1/phone/pair",
	} {
		res, err := http.Get(r.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(b.String(), want) || res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("GET %s: %d %q…", path, res.StatusCode, b.String()[:min(b.Len(), 80)])
		}
	}
	res, _ := http.Get(r.URL + "/p/icon-192.png")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "image/png" {
		t.Errorf("icon: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

// A phone paired while its push service was allowed gets no push once the
// operator's -push-hosts leaves it out: the list is checked at every push.
func TestPhonePushOnlyToListedHosts(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	push := pushtest.New(t)
	pair(t, r, l.WorkspaceID, addPairing(t, r, l, time.Minute, time.Now()), "A", push.Subscribe("a").Subscription)

	strict := httptest.NewServer(relay.New(r.Store, relay.Config{}))
	defer strict.Close()
	sealed, _ := protocol.SealPhone(protocol.PhoneKey(bytes.Repeat([]byte{7}, 32)), protocol.SealCard, []byte(`{"id":"nt_1"}`))
	code, body := do(t, "POST", strict.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathPhone+"/push"), l.Secret,
		jsonBody(t, protocol.PhonePush{ID: "ob_1", Tag: "nt_1", Body: sealed}))
	if code != http.StatusBadGateway || !strings.Contains(body, `"failed"`) {
		t.Fatalf("push to a host off the list: %d %s, want 502 failed", code, body)
	}
	if n := push.Pending(); n != 0 {
		t.Errorf("the push service got %d messages from a relay that does not list it", n)
	}
	phones, _ := r.Store.Phones(context.Background(), l.WorkspaceID)
	if len(phones) != 1 || !strings.Contains(phones[0].LastError, "-push-hosts") {
		t.Errorf("phones: %+v, want the one phone with the reason", phones)
	}
}
