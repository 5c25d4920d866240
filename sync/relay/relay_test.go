package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// do makes one call and returns the status and body.
func do(t testing.TB, method, url, bearer string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// chunked hides a body's length, so the relay must count.
type chunked struct{ io.Reader }

func TestIntake(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	r.Link(t, "tok")
	limit := strings.Repeat("x", protocol.MaxBody)
	for _, tc := range []struct {
		name   string
		path   string
		body   io.Reader
		status int
	}{
		{"unknown token", "/h/nope", strings.NewReader("{}"), http.StatusNotFound},
		{"token too long", "/h/" + strings.Repeat("t", 300), strings.NewReader("{}"), http.StatusNotFound},
		{"no token", "/h/", strings.NewReader("{}"), http.StatusNotFound},
		{"body over 1 MiB", "/h/tok", strings.NewReader(limit + "x"), http.StatusRequestEntityTooLarge},
		{"body over 1 MiB, no length", "/h/tok", chunked{strings.NewReader(limit + "x")}, http.StatusRequestEntityTooLarge},
		{"body of 1 MiB", "/h/tok", strings.NewReader(limit), http.StatusAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := do(t, http.MethodPost, r.URL+tc.path, "", tc.body)
			if status != tc.status {
				t.Fatalf("got %d %s, want %d", status, body, tc.status)
			}
			if status == http.StatusAccepted {
				// The 202 means committed: the store has it now.
				var a protocol.Accepted
				json.Unmarshal([]byte(body), &a)
				due, _, err := r.Store.Due(context.Background(), l0(t, r), time.Now().Add(time.Second), 10)
				if err != nil || len(due) != 1 || due[0].ID != a.DeliveryID || len(due[0].Body) != protocol.MaxBody {
					t.Errorf("store holds %d deliveries (%v), want %s with its 1 MiB body", len(due), err, a.DeliveryID)
				}
			}
		})
	}
	// Only the 202 stored anything.
	if st, _ := r.Store.Stats(context.Background()); st.Pending != 1 {
		t.Errorf("got %d deliveries stored, want 1", st.Pending)
	}
}

// TestIntakeTokenGone: a token unregistered behind this relay's back (by
// another relay process sharing the store) is refused, though this one saw
// it registered a call earlier, and nothing is stored for it.
func TestIntakeTokenGone(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t, "tok", "other")
	if status, body := do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader("{}")); status != http.StatusAccepted {
		t.Fatalf("got %d %s, want 202", status, body)
	}
	if err := r.Store.SetTokens(context.Background(), l.WorkspaceID, []string{protocol.TokenHash("other")}); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second after the relay forgot the token
		if status, body := do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader("{}")); status != http.StatusNotFound {
			t.Fatalf("unregistered token: got %d %s, want 404", status, body)
		}
	}
	if status, body := do(t, http.MethodPost, r.URL+"/h/other", "", strings.NewReader("{}")); status != http.StatusAccepted {
		t.Fatalf("registered token: got %d %s, want 202", status, body)
	}
	if st, _ := r.Store.Stats(context.Background()); st.Pending != 2 {
		t.Errorf("got %d deliveries stored, want 2", st.Pending)
	}
}

// l0 is the workspace that owns "tok".
func l0(t testing.TB, r *relaytest.Relay) string {
	ws, err := r.Store.TokenWorkspace(context.Background(), protocol.TokenHash("tok"))
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestWorkspaceAPI(t *testing.T) {
	closed := relaytest.Start(t, relay.Config{})
	if status, _ := do(t, http.MethodPost, closed.URL+protocol.PathWorkspaces, "anything", nil); status != http.StatusForbidden {
		t.Errorf("signup on a closed relay: got %d, want 403", status)
	}

	r := relaytest.Start(t, relay.Config{SignupToken: "let-me-in"})
	if _, err := client.Link(context.Background(), nil, r.URL, "wrong"); err == nil {
		t.Error("signup with a wrong token: linked")
	}
	a, err := client.Link(context.Background(), nil, r.URL, "let-me-in")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.WorkspaceID, "ws_") || !strings.HasPrefix(a.Secret, "rrs_") || a.HookBase != r.URL+"/h/" {
		t.Errorf("got %+v, want ws_… rrs_… %s/h/", a, r.URL)
	}
	b, _ := client.Link(context.Background(), nil, r.URL, "let-me-in")
	tokens := func(l protocol.Link, secret string, hashes ...string) int {
		body, _ := json.Marshal(protocol.Tokens{Hashes: hashes})
		status, _ := do(t, http.MethodPut, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathTokens), secret, bytes.NewReader(body))
		return status
	}
	h := protocol.TokenHash("tok")
	for _, tc := range []struct {
		name   string
		ws     protocol.Link
		secret string
		hashes []string
		want   int
	}{
		{"wrong secret", a, b.Secret, []string{h}, 401},
		{"unknown workspace", protocol.Link{WorkspaceID: "ws_nope"}, a.Secret, []string{h}, 401},
		{"a token, not its hash", a, a.Secret, []string{"tok"}, 400},
		{"registered", a, a.Secret, []string{h, h}, 204},
		{"another workspace's hash", b, b.Secret, []string{h}, 409},
	} {
		if got := tokens(tc.ws, tc.secret, tc.hashes...); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
	if status, _ := do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader("{}")); status != http.StatusAccepted {
		t.Errorf("webhook: got %d, want 202", status)
	}
	if status, _ := do(t, http.MethodDelete, r.URL+protocol.WorkspacePath(a.WorkspaceID, ""), a.Secret, nil); status != http.StatusNoContent {
		t.Errorf("unlink: got %d, want 204", status)
	}
	if status, _ := do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader("{}")); status != http.StatusNotFound {
		t.Errorf("webhook after unlink: got %d, want 404", status)
	}
	if st, _ := r.Store.Stats(context.Background()); st.Pending != 0 {
		t.Errorf("got %d deliveries after unlink, want 0", st.Pending)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	r.Link(t, "tok")
	if status, body := do(t, http.MethodGet, r.URL+protocol.PathHealth, "", nil); status != 200 || body != "ok\n" {
		t.Errorf("healthz: got %d %q, want 200 ok", status, body)
	}
	do(t, http.MethodPost, r.URL+"/h/nope", "", nil)
	do(t, http.MethodPost, r.URL+"/h/tok", "", nil)
	do(t, http.MethodPost, r.URL+"/h/tok", "", nil)
	_, body := do(t, http.MethodGet, r.URL+protocol.PathMetrics, "", nil)
	for _, want := range []string{
		"# TYPE rerun_relay_webhooks_total counter",
		`rerun_relay_webhooks_total{code="202"} 2`,
		`rerun_relay_webhooks_total{code="404"} 1`,
		`rerun_relay_deliveries_total{result="acked"} 0`,
		"# TYPE rerun_relay_queue_depth gauge",
		"rerun_relay_queue_depth 2",
		"rerun_relay_dead_letters 0",
		"rerun_relay_connected_workspaces 0",
		"# TYPE rerun_relay_delivery_latency_seconds histogram",
		`rerun_relay_delivery_latency_seconds_bucket{le="+Inf"} 0`,
		"rerun_relay_delivery_latency_seconds_count 0",
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
}

// TestTwoRelays: two relay processes share a PostgreSQL store behind a
// load balancer; a webhook taken by one reaches the desktop connected to
// the other at once (NOTIFY), not at the next 30 s poll.
func TestTwoRelays(t *testing.T) {
	u := postgresSchema(t)
	open := func() relay.Store {
		return openStore(t, func(ctx context.Context) (relay.Store, error) { return relay.OpenPostgres(ctx, u) })
	}
	a := relaytest.StartOn(t, open(), relay.Config{})
	b := relaytest.StartOn(t, open(), relay.Config{})
	l := a.Link(t, "tok")
	delivered := make(chan client.Delivery, 1)
	c, err := client.New(client.Config{RelayURL: b.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: t.TempDir(),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		TokenHashes: func(context.Context) ([]string, error) { return []string{protocol.TokenHash("tok")}, nil },
		Deliver: func(_ context.Context, d client.Delivery) (string, error) {
			delivered <- d
			return "run_1", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	for !c.Status().Connected {
		time.Sleep(10 * time.Millisecond)
	}
	if status, _ := do(t, http.MethodPost, a.URL+"/h/tok", "", strings.NewReader(`{"via":"a"}`)); status != http.StatusAccepted {
		t.Fatalf("got %d, want 202", status)
	}
	select {
	case d := <-delivered:
		if string(d.Body) != `{"via":"a"}` {
			t.Errorf("got body %s", d.Body)
		}
	case <-time.After(waittest.Patience):
		t.Fatal("not delivered through the other relay")
	}
}
