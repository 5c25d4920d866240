package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// desktop is a client serving in this process until the test ends.
type desktop struct {
	*client.Client
	intake *intake
	stop   func()
}

func startDesktop(t testing.TB, relayURL string, l protocol.Link, tokens []string, mod func(*client.Config)) *desktop {
	t.Helper()
	dir := t.TempDir()
	in := openIntake(t, dir)
	cfg := client.Config{RelayURL: relayURL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: dir,
		Deliver: in.deliver(), Logger: quiet, MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second,
		TokenHashes: func(context.Context) ([]string, error) { return hashes(tokens), nil }}
	if mod != nil {
		mod(&cfg)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Serve(ctx); close(done) }()
	d := &desktop{Client: c, intake: in, stop: func() { cancel(); <-done }}
	t.Cleanup(d.stop)
	return d
}

func hashes(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		out = append(out, protocol.TokenHash(t))
	}
	return out
}

// post calls a public webhook URL and returns the status.
func post(t testing.TB, url, body string, header http.Header) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func TestDeliver(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t) // no tokens: the desktop registers them
	d := startDesktop(t, r.URL, l, []string{"tok_a"}, nil)
	waittest.Until(t, "the desktop did not register its tokens", func() bool {
		_, err := r.Store.TokenWorkspace(context.Background(), protocol.TokenHash("tok_a"))
		return err == nil
	})
	h := http.Header{"Webhook-Id": {"msg_1"}, "Webhook-Signature": {"v1,abc"}, "Cookie": {"a=b"}, "Connection": {"X-Hop"}, "X-Hop": {"1"}}
	if got := post(t, r.URL+"/h/tok_a?x=1", `{"n":1}`, h); got != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got)
	}
	waittest.Until(t, "no run queued", func() bool { return d.intake.counts(t).Runs == 1 })
	var method, query, header, body string
	d.intake.db.QueryRow(`SELECT method, query, header, body FROM runs`).Scan(&method, &query, &header, &body)
	if method != "POST" || query != "x=1" || body != `{"n":1}` {
		t.Errorf("got %s ?%s %s, want POST ?x=1 {\"n\":1}", method, query, body)
	}
	for _, want := range []string{`"Webhook-Signature":["v1,abc"]`, `"Webhook-Id":["msg_1"]`, `"Rerun-Relay-Delivery":["dlv_`} {
		if !strings.Contains(header, want) {
			t.Errorf("headers %s lack %s", header, want)
		}
	}
	for _, gone := range []string{"Cookie", "X-Hop", "Connection"} {
		if strings.Contains(header, gone) {
			t.Errorf("headers %s still hold %s", header, gone)
		}
	}
	waittest.Until(t, "the relay still holds the delivery", func() bool {
		st, _ := r.Store.Stats(context.Background())
		return st.Pending == 0
	})
	if s := d.Status(); !s.Connected || s.Delivered != 1 || s.HookBase != r.URL+"/h/" {
		t.Errorf("status %+v, want connected, 1 delivered, hook base %s/h/", s, r.URL)
	}
}

// metric reads one sample of the relay's /metrics, -1 when absent.
func metric(t testing.TB, relayURL, sample string) int {
	t.Helper()
	res, err := http.Get(relayURL + protocol.PathMetrics)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), sample+" "); ok {
			var n int
			fmt.Sscan(v, &n)
			return n
		}
	}
	return -1
}

// TestSignatureWindow: the relay's clock (and so its frames' timestamps) is
// skewed; past 5 minutes the desktop refuses the frame, nacks it, and no
// run starts.
func TestSignatureWindow(t *testing.T) {
	for _, tc := range []struct {
		name      string
		skew      time.Duration
		delivered bool
	}{
		{"4 min behind", -4 * time.Minute, true},
		{"4 min ahead", 4 * time.Minute, true},
		{"6 min behind", -6 * time.Minute, false},
		{"6 min ahead", 6 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := relaytest.Start(t, relay.Config{Now: func() time.Time { return time.Now().Add(tc.skew) }})
			l := r.Link(t, "tok")
			d := startDesktop(t, r.URL, l, []string{"tok"}, nil)
			if got := post(t, r.URL+"/h/tok", "{}", nil); got != http.StatusAccepted {
				t.Fatalf("got %d, want 202", got)
			}
			retried := `rerun_relay_deliveries_total{result="retried"}`
			if tc.delivered {
				waittest.Until(t, "not delivered", func() bool { return d.intake.counts(t).Runs == 1 })
				if n := metric(t, r.URL, retried); n != 0 {
					t.Errorf("got %d nacks, want 0", n)
				}
				return
			}
			waittest.Until(t, "the desktop did not nack the frame", func() bool { return metric(t, r.URL, retried) >= 1 })
			if c := d.intake.counts(t); c.Calls != 0 || c.Runs != 0 {
				t.Errorf("got %+v, want no call and no run", c)
			}
		})
	}
}

// TestRetryAfterNack: the intake is busy once (503); the delivery is
// nacked, retried after the relay's backoff, and queued once.
func TestRetryAfterNack(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t, "tok")
	d := startDesktop(t, r.URL, l, []string{"tok"}, nil)
	d.intake.fail.Store(1)
	if got := post(t, r.URL+"/h/tok", "{}", nil); got != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got)
	}
	waittest.Until(t, "not delivered after the nack", func() bool { return d.intake.counts(t).Calls == 1 })
	if n := metric(t, r.URL, `rerun_relay_deliveries_total{result="retried"}`); n != 1 {
		t.Errorf("got %d retries, want 1", n)
	}
	want(t, d.intake.counts(t), counts{Runs: 1, Calls: 1, CalledDeliveries: 1})
}

// TestRefused: the desktop has no trigger for the token (deleted before
// the relay learnt it): refused, and the relay drops the delivery.
func TestRefused(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t, "tok")
	d := startDesktop(t, r.URL, l, []string{"tok"}, nil)
	d.intake.known = map[string]bool{}
	if got := post(t, r.URL+"/h/tok", "{}", nil); got != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got)
	}
	waittest.Until(t, "not refused", func() bool {
		return metric(t, r.URL, `rerun_relay_deliveries_total{result="refused"}`) == 1
	})
	if st, _ := r.Store.Stats(context.Background()); st.Pending != 0 || st.DeadLetters != 0 {
		t.Errorf("got %+v, want the delivery gone", st)
	}
	if c := d.intake.counts(t); c.Runs != 0 {
		t.Errorf("got %d runs, want 0", c.Runs)
	}
}

// TestDeadLetterReplay: a delivery whose retention ended while the desktop
// was away is listed as a dead letter, not delivered, until replayed.
func TestDeadLetterReplay(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t, "tok")
	if got := post(t, r.URL+"/h/tok", `{"late":true}`, nil); got != http.StatusAccepted {
		t.Fatalf("got %d, want 202", got)
	}
	week := time.Now().Add(protocol.Retention + time.Minute)
	if n, _, err := r.Store.Expire(context.Background(), week, week.Add(-30*24*time.Hour)); err != nil || n != 1 {
		t.Fatalf("expired %d (%v), want 1", n, err)
	}
	d := startDesktop(t, r.URL, l, []string{"tok"}, nil)
	waittest.Until(t, "not connected", func() bool { return d.Status().Connected })
	list, err := d.DeadLetters(context.Background(), 0)
	if err != nil || len(list) != 1 || list[0].Size != len(`{"late":true}`) || list[0].TokenHash != protocol.TokenHash("tok") {
		t.Fatalf("got %+v (%v), want one dead letter of 13 bytes for tok", list, err)
	}
	if c := d.intake.counts(t); c.Runs != 0 {
		t.Fatalf("got %d runs before the replay, want 0", c.Runs)
	}
	if err := d.Replay(context.Background(), list[0].ID); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the replay was not delivered", func() bool { return d.intake.counts(t).Runs == 1 })
	if err := d.Replay(context.Background(), list[0].ID); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("second replay: got %v, want ErrNotFound", err)
	}
}

// TestTokensChanged: a trigger made after the desktop connected is known
// to the relay once the app says the tokens changed.
func TestTokensChanged(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	var tokens atomic.Pointer[[]string]
	tokens.Store(&[]string{"tok_a"})
	d := startDesktop(t, r.URL, l, nil, func(c *client.Config) {
		c.TokenHashes = func(context.Context) ([]string, error) { return hashes(*tokens.Load()), nil }
	})
	waittest.Until(t, "tok_a not registered", func() bool { return post(t, r.URL+"/h/tok_a", "{}", nil) == http.StatusAccepted })
	if got := post(t, r.URL+"/h/tok_b", "{}", nil); got != http.StatusNotFound {
		t.Fatalf("tok_b before the change: got %d, want 404", got)
	}
	tokens.Store(&[]string{"tok_b"}) // tok_a rotated to tok_b
	d.TokensChanged()
	waittest.Until(t, "tok_b not registered", func() bool { return post(t, r.URL+"/h/tok_b", "{}", nil) == http.StatusAccepted })
	if got := post(t, r.URL+"/h/tok_a", "{}", nil); got != http.StatusNotFound {
		t.Errorf("tok_a after the change: got %d, want 404", got)
	}
}

// TestUnauthorized: a secret the relay does not know is reported, and the
// client keeps trying (the user may link again).
func TestUnauthorized(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	l.Secret = "rrs_wrong"
	d := startDesktop(t, r.URL, l, nil, nil)
	waittest.Until(t, "no error reported", func() bool { return d.Status().Err == client.ErrUnauthorized.Error() })
	if d.Status().Connected {
		t.Error("connected with a wrong secret")
	}
}

// TestHandlerDeliver: how the intake's answers map onto ack, retry and
// refuse, and which idempotency key the intake sees.
func TestHandlerDeliver(t *testing.T) {
	for _, tc := range []struct {
		name    string
		status  int
		header  http.Header
		run     string
		refused bool
		retried bool
		key     string // the idempotency key the intake saw
	}{
		{"queued", 202, nil, "run_1", false, false, "Idempotency-Key: dlv_1"},
		{"duplicate", 200, http.Header{"Webhook-Id": {"msg_1"}}, "run_1", false, false, "webhook-id: msg_1"},
		{"sender's own key", 202, http.Header{"Idempotency-Key": {"k"}}, "run_1", false, false, "Idempotency-Key: k"},
		{"rate limited", 429, nil, "", false, true, "Idempotency-Key: dlv_1"},
		{"busy", 409, nil, "", false, true, "Idempotency-Key: dlv_1"},
		{"failed", 500, nil, "", false, true, "Idempotency-Key: dlv_1"},
		{"no such trigger", 404, nil, "", true, false, "Idempotency-Key: dlv_1"},
		{"method not allowed", 405, nil, "", true, false, "Idempotency-Key: dlv_1"},
		{"bad signature", 401, nil, "", true, false, "Idempotency-Key: dlv_1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var saw string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/hash" || r.URL.RawQuery != "a=1" || r.Header.Get("Rerun-Relay-Delivery") != "dlv_1" {
					t.Errorf("got %s ?%s delivery %q, want /hash ?a=1 dlv_1", r.URL.Path, r.URL.RawQuery, r.Header.Get("Rerun-Relay-Delivery"))
				}
				if id := r.Header.Get("webhook-id"); id != "" {
					saw = "webhook-id: " + id
				} else {
					saw = "Idempotency-Key: " + r.Header.Get("Idempotency-Key")
				}
				w.WriteHeader(tc.status)
				if tc.status < 300 {
					fmt.Fprint(w, `{"run_id":"run_1"}`)
				} else {
					fmt.Fprint(w, `{"error":"no"}`)
				}
			})
			deliver := client.HandlerDeliver(h, func(d client.Delivery) string { return "/" + d.TokenHash })
			run, err := deliver(context.Background(), client.Delivery{ID: "dlv_1", TokenHash: "hash", Method: "POST", Query: "a=1", Header: tc.header})
			if run != tc.run || errors.Is(err, client.ErrRefused) != tc.refused || (err != nil && !tc.refused) != tc.retried {
				t.Errorf("got %q, %v; want run %q, refused %v, retried %v", run, err, tc.run, tc.refused, tc.retried)
			}
			if saw != tc.key {
				t.Errorf("the intake saw %s, want %s", saw, tc.key)
			}
		})
	}
}
