package relay_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// backends runs fn against each store: SQLite always, PostgreSQL when
// RERUN_TEST_POSTGRES holds a postgres:// URL (each test in a schema of its
// own). open may be called several times: with PostgreSQL the stores share
// the database, as relay processes do.
func backends(t *testing.T, fn func(t *testing.T, open func() relay.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "relay.db")
		fn(t, func() relay.Store {
			return openStore(t, func(ctx context.Context) (relay.Store, error) { return relay.OpenSQLite(ctx, path) })
		})
	})
	t.Run("postgres", func(t *testing.T) {
		u := postgresSchema(t)
		fn(t, func() relay.Store {
			return openStore(t, func(ctx context.Context) (relay.Store, error) { return relay.OpenPostgres(ctx, u) })
		})
	})
}

func openStore(t *testing.T, open func(context.Context) (relay.Store, error)) relay.Store {
	t.Helper()
	s, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func postgresSchema(t testing.TB) string { return relaytest.PostgresSchema(t) }

func workspace(t *testing.T, s relay.Store, id string) {
	t.Helper()
	err := s.CreateWorkspace(context.Background(), relay.Workspace{ID: id, Verifier: protocol.Verifier("secret-" + id),
		SigningKey: protocol.SigningKey("secret-" + id), CreatedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
}

func TestStoreWorkspaces(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		w, err := s.Workspace(ctx, "ws_a")
		if err != nil || w.Verifier != protocol.Verifier("secret-ws_a") || string(w.SigningKey) != string(protocol.SigningKey("secret-ws_a")) {
			t.Fatalf("got %+v, %v; want ws_a with its verifier and signing key", w, err)
		}
		if _, err := s.Workspace(ctx, "ws_b"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("unknown workspace: got %v, want ErrNotFound", err)
		}
		if err := s.SetTokens(ctx, "ws_a", []string{"h1"}); err != nil {
			t.Fatal(err)
		}
		add(t, s, "ws_a", "dlv_1", time.Now())
		if err := s.DeleteWorkspace(ctx, "ws_a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TokenWorkspace(ctx, "h1"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("token after unlink: got %v, want ErrNotFound", err)
		}
		if st, _ := s.Stats(ctx); st.Pending != 0 {
			t.Errorf("got %d deliveries after unlink, want 0", st.Pending)
		}
		if err := s.DeleteWorkspace(ctx, "ws_a"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("second delete: got %v, want ErrNotFound", err)
		}
	})
}

func TestStoreTokens(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		workspace(t, s, "ws_b")
		for _, step := range []struct {
			name   string
			ws     string
			hashes []string
			err    error
			owners map[string]string // hash → workspace, "" for none
		}{
			{"first set", "ws_a", []string{"h1", "h2"}, nil, map[string]string{"h1": "ws_a", "h2": "ws_a"}},
			{"replaced", "ws_a", []string{"h2", "h3"}, nil, map[string]string{"h1": "", "h2": "ws_a", "h3": "ws_a"}},
			{"another workspace's hash", "ws_b", []string{"h4", "h3"}, relay.ErrConflict, map[string]string{"h3": "ws_a", "h4": ""}},
			{"emptied", "ws_a", nil, nil, map[string]string{"h2": "", "h3": ""}},
		} {
			err := s.SetTokens(ctx, step.ws, step.hashes)
			if !errors.Is(err, step.err) {
				t.Fatalf("%s: got %v, want %v", step.name, err, step.err)
			}
			for h, want := range step.owners {
				got, err := s.TokenWorkspace(ctx, h)
				if want == "" && !errors.Is(err, relay.ErrNotFound) || want != "" && got != want {
					t.Errorf("%s: %s belongs to %q (%v), want %q", step.name, h, got, err, want)
				}
			}
		}
	})
}

func add(t *testing.T, s relay.Store, ws, id string, at time.Time) {
	t.Helper()
	_, err := s.AddDeliveries(context.Background(), []relay.Record{{WorkspaceID: ws, ExpiresAt: at.Add(time.Hour),
		Delivery: protocol.Delivery{ID: id, TokenHash: "h", ReceivedAt: at, Method: "POST", Query: "a=1",
			Header: map[string][]string{"Webhook-Id": {"msg_" + id}}, Body: []byte(`{"id":"` + id + `"}`)}}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStoreAddByToken: a delivery without a workspace is stored for the one
// its token hash belongs to at the commit, and not at all when none does;
// one of a group does not keep the others from being stored.
func TestStoreAddByToken(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		workspace(t, s, "ws_b")
		if err := s.SetTokens(ctx, "ws_a", []string{"ha"}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetTokens(ctx, "ws_b", []string{"hb"}); err != nil {
			t.Fatal(err)
		}
		at := time.UnixMilli(time.Now().UnixMilli()).UTC()
		rec := func(id, hash, ws string) relay.Record {
			return relay.Record{WorkspaceID: ws, ExpiresAt: at.Add(time.Hour), Delivery: protocol.Delivery{ID: id, TokenHash: hash,
				ReceivedAt: at, Method: "POST", Header: map[string][]string{"Webhook-Id": {"msg_" + id}}, Body: []byte(id)}}
		}
		got, err := s.AddDeliveries(ctx, []relay.Record{rec("dlv_1", "ha", ""), rec("dlv_2", "gone", ""), rec("dlv_3", "hb", ""),
			rec("dlv_4", protocol.PhoneAnswerHash, "ws_b")})
		if err != nil || !slices.Equal(got, []string{"ws_a", "", "ws_b", "ws_b"}) {
			t.Fatalf("got %q (%v), want ws_a, none, ws_b, ws_b", got, err)
		}
		for ws, want := range map[string][]string{"ws_a": {"dlv_1"}, "ws_b": {"dlv_3", "dlv_4"}} {
			due, _, err := s.Due(ctx, ws, at, 10)
			if err != nil || !slices.Equal(ids(due), want) {
				t.Errorf("%s: got %v (%v), want %v", ws, ids(due), err, want)
			}
			if len(due) > 0 && (string(due[0].Body) != due[0].ID || due[0].TokenHash == "" || due[0].Header.Get("Webhook-Id") != "msg_"+due[0].ID) {
				t.Errorf("%s: got %+v, want it as added", ws, due[0])
			}
		}
	})
}

func ids(ds []protocol.Delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}

// TestStoreDeliveries walks deliveries through their life: due, nacked,
// acked, expired, listed, replayed, dropped.
func TestStoreDeliveries(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		workspace(t, s, "ws_b")
		t0 := time.UnixMilli(time.Now().UnixMilli()).UTC()
		for i, id := range []string{"dlv_1", "dlv_2", "dlv_3"} {
			add(t, s, "ws_a", id, t0.Add(time.Duration(i)*time.Millisecond))
		}
		add(t, s, "ws_b", "dlv_b", t0)

		due, next, err := s.Due(ctx, "ws_a", t0.Add(time.Second), 2)
		if err != nil || !slices.Equal(ids(due), []string{"dlv_1", "dlv_2"}) || !next.IsZero() {
			t.Fatalf("due: got %v next %v (%v), want dlv_1 dlv_2, nothing later", ids(due), next, err)
		}
		d := due[0]
		if d.Method != "POST" || d.Query != "a=1" || string(d.Body) != `{"id":"dlv_1"}` || d.Header.Get("Webhook-Id") != "msg_dlv_1" ||
			!d.ReceivedAt.Equal(t0) || d.TokenHash != "h" || d.Attempt != 0 {
			t.Errorf("got %+v, want the delivery as added", d)
		}

		retryAt := t0.Add(time.Minute)
		if err := s.Retry(ctx, "ws_a", "dlv_1", "busy", retryAt); err != nil {
			t.Fatal(err)
		}
		due, next, _ = s.Due(ctx, "ws_a", t0.Add(time.Second), 10)
		if !slices.Equal(ids(due), []string{"dlv_2", "dlv_3"}) || !next.Equal(retryAt) {
			t.Errorf("after a nack: got %v next %v, want dlv_2 dlv_3, next %v", ids(due), next, retryAt)
		}
		due, _, _ = s.Due(ctx, "ws_a", retryAt, 10)
		if len(due) != 3 || due[0].ID != "dlv_1" || due[0].Attempt != 1 {
			t.Errorf("at the retry: got %v, want dlv_1 (attempt 1) first of 3", ids(due))
		}

		received, err := s.Ack(ctx, "ws_a", []string{"dlv_2", "dlv_unknown", "dlv_b"})
		if err != nil || len(received) != 1 || !received[0].Equal(t0.Add(time.Millisecond)) {
			t.Errorf("ack: got %v (%v), want one receipt time (another workspace's id is not acked)", received, err)
		}
		if st, _ := s.Stats(ctx); st != (relay.Stats{Pending: 3}) {
			t.Errorf("got %+v, want 3 pending", st)
		}

		later := t0.Add(2 * time.Hour)
		expired, pruned, err := s.Expire(ctx, later, t0)
		if err != nil || expired != 3 || pruned != 0 {
			t.Fatalf("expire: got %d, %d (%v), want 3 expired, 0 pruned", expired, pruned, err)
		}
		if due, _, _ := s.Due(ctx, "ws_a", later, 10); len(due) != 0 {
			t.Errorf("dead letters are due: %v", ids(due))
		}
		dead, err := s.DeadLetters(ctx, "ws_a", 10)
		if err != nil || len(dead) != 2 || dead[0].ID != "dlv_3" || dead[1].ID != "dlv_1" {
			t.Fatalf("dead letters: got %+v (%v), want dlv_3, dlv_1", dead, err)
		}
		if dl := dead[1]; dl.Attempts != 1 || dl.LastError != "busy" || dl.Size != len(`{"id":"dlv_1"}`) || !dl.DeadAt.Equal(later) {
			t.Errorf("got %+v, want 1 attempt, last error busy, 14 bytes, dead at %v", dl, later)
		}

		if err := s.Replay(ctx, "ws_a", "dlv_1", later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Replay(ctx, "ws_a", "dlv_1", later, later.Add(time.Hour)); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("replay of a live delivery: got %v, want ErrNotFound", err)
		}
		due, _, _ = s.Due(ctx, "ws_a", later, 10)
		if len(due) != 1 || due[0].ID != "dlv_1" || due[0].Attempt != 0 {
			t.Errorf("after the replay: got %v, want dlv_1 at attempt 0", ids(due))
		}
		if err := s.DropDeadLetter(ctx, "ws_a", "dlv_3"); err != nil {
			t.Fatal(err)
		}
		if err := s.DropDeadLetter(ctx, "ws_a", "dlv_1"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("drop of a live delivery: got %v, want ErrNotFound", err)
		}
		if _, pruned, _ := s.Expire(ctx, later, later.Add(time.Second)); pruned != 1 {
			t.Errorf("got %d dead letters pruned, want 1 (ws_b's)", pruned)
		}
		if st, _ := s.Stats(ctx); st != (relay.Stats{Pending: 1}) {
			t.Errorf("got %+v, want dlv_1 alone", st)
		}
	})
}

// TestStoreListen: a delivery added through one store reaches Listen on
// another sharing the database (relay processes behind a load balancer).
func TestStoreListen(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		a, b := open(), open()
		ctx, cancel := context.WithCancel(context.Background())
		got := make(chan string, 100)
		var wg sync.WaitGroup
		wg.Go(func() {
			b.Listen(ctx, func(n relay.Notice) {
				select {
				case got <- n.WorkspaceID:
				default:
				}
			})
		})
		defer func() { cancel(); wg.Wait() }()
		if strings.HasSuffix(t.Name(), "sqlite") {
			select {
			case <-time.After(waittest.Patience):
				t.Fatal("SQLite's Listen blocks: it has nothing to listen to and must return")
			case <-ctxDone(&wg):
			}
			return
		}
		workspace(t, a, "ws_a")
		// LISTEN takes effect once b's connection has run it: add until
		// heard.
		start := time.Now()
		for i := 0; ; i++ {
			add(t, a, "ws_a", fmt.Sprintf("dlv_%d", i), time.Now())
			select {
			case ws := <-got:
				if ws != "ws_a" {
					t.Fatalf("heard %q, want ws_a", ws)
				}
				return
			case <-time.After(200 * time.Millisecond):
				if time.Since(start) > waittest.Patience {
					t.Fatalf("no notification in %s", waittest.Patience)
				}
			}
		}
	})
}

// ctxDone returns a channel closed when wg is done.
func ctxDone(wg *sync.WaitGroup) <-chan struct{} {
	c := make(chan struct{})
	go func() { wg.Wait(); close(c) }()
	return c
}
