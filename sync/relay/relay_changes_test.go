package relay_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/client"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func pushJSON(t *testing.T, r *relaytest.Relay, l protocol.Link, body string) (int, string) {
	t.Helper()
	return do(t, http.MethodPost, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathChanges), l.Secret, strings.NewReader(body))
}

func pushBody(changes ...protocol.Change) string {
	b, _ := json.Marshal(protocol.ChangePush{Changes: changes})
	return string(b)
}

// TestChangesAPI: every malformed push or pull gets a 400 that says what
// to fix, and stores nothing; a valid one is stored and pulled back.
func TestChangesAPI(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	good := change("agent/1", "dev_a", "sealed")
	many := make([]protocol.Change, protocol.MaxPush+1)
	for i := range many {
		many[i] = good
	}
	for _, tc := range []struct {
		name string
		body string
		want string
	}{
		{"not JSON", `{"changes":`, "the body must be"},
		{"body not base64", `{"changes":[{"key":"` + key("x") + `","device":"dev_a","body":"%%%"}]}`, "the body must be"},
		{"no changes", `{"changes":[]}`, "no changes"},
		{"over MaxPush", pushBody(many...), "at most 500"},
		{"key not hex", pushBody(protocol.Change{Key: "agent/1", Device: "dev_a", Body: []byte("x")}), "64 lowercase hex"},
		{"device", pushBody(protocol.Change{Key: key("x"), Device: "laptop", Body: []byte("x")}), `laptop`},
		{"empty body", pushBody(protocol.Change{Key: key("x"), Device: "dev_a"}), "empty"},
		{"body over 1 MiB", pushBody(protocol.Change{Key: key("x"), Device: "dev_a", Body: make([]byte, protocol.MaxChange+1)}), "over the 1024 KiB"},
		{"seq set", pushBody(protocol.Change{Seq: 7, Key: key("x"), Device: "dev_a", Body: []byte("x")}), "the relay assigns it"},
		{"one bad change among good ones", pushBody(good, good, protocol.Change{Key: key("x"), Device: "dev_a"}), "change 2:"},
	} {
		t.Run("push "+tc.name, func(t *testing.T) {
			status, body := pushJSON(t, r, l, tc.body)
			if status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("got %d %s, want 400 saying %q", status, body, tc.want)
			}
		})
	}
	if last, _ := r.Store.LastSeq(context.Background(), l.WorkspaceID); last != 0 {
		t.Fatalf("refused pushes stored something: newest seq %d", last)
	}
	if status, body := do(t, http.MethodPost, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathChanges), "rrs_wrong",
		strings.NewReader(pushBody(good))); status != http.StatusUnauthorized {
		t.Errorf("push with a wrong secret: got %d %s, want 401", status, body)
	}

	status, body := pushJSON(t, r, l, pushBody(good, change("agent/2", "dev_a", "sealed 2")))
	if status != http.StatusOK || body != `{"last":2}`+"\n" {
		t.Fatalf("push: got %d %s, want 200 {\"last\":2}", status, body)
	}
	pull := func(query string) (int, string) {
		return do(t, http.MethodGet, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathChanges)+query, l.Secret, nil)
	}
	for _, tc := range []struct {
		query, want string
	}{
		{"?after=-1", "after="},
		{"?after=one", "after="},
		{"?limit=0", "from 1 to 1000"},
		{"?limit=1001", "from 1 to 1000"},
		{"?limit=ten", "from 1 to 1000"},
	} {
		if status, body := pull(tc.query); status != http.StatusBadRequest || !strings.Contains(body, tc.want) {
			t.Errorf("pull %s: got %d %s, want 400 saying %q", tc.query, status, body, tc.want)
		}
	}
	status, body = pull("?after=1&limit=5")
	var page protocol.ChangePage
	json.Unmarshal([]byte(body), &page)
	if status != 200 || len(page.Changes) != 1 || page.Changes[0].Seq != 2 || string(page.Changes[0].Body) != "sealed 2" ||
		page.Changes[0].Key != key("agent/2") || page.Changes[0].Device != "dev_a" || page.Last != 2 || page.More {
		t.Errorf("pull: got %d %s, want agent/2 at seq 2", status, body)
	}
	if status, body := pull(""); status != 200 || !strings.Contains(body, `"seq":1`) {
		t.Errorf("pull without a query: got %d %s, want everything", status, body)
	}
}

// socket is a device's raw WebSocket to the relay, to see every frame.
type socket struct {
	t      *testing.T
	conn   *websocket.Conn
	frames chan protocol.Frame
	closed chan websocket.StatusCode
}

func dial(t *testing.T, r *relaytest.Relay, l protocol.Link, query string) *socket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathConnect)+query,
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + l.Secret}}})
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(protocol.MaxFrame)
	s := &socket{t: t, conn: conn, frames: make(chan protocol.Frame, 100), closed: make(chan websocket.StatusCode, 1)}
	go func() {
		for {
			_, msg, err := conn.Read(context.Background())
			if err != nil {
				s.closed <- websocket.CloseStatus(err)
				close(s.frames)
				return
			}
			f, _, _ := protocol.Decode(msg)
			s.frames <- f
		}
	}()
	t.Cleanup(func() { conn.CloseNow() })
	if f := s.next(); f.Type != protocol.TypeHello {
		t.Fatalf("first frame %+v, want hello", f)
	}
	return s
}

// next returns the next frame (failing after waittest.Stall without one).
func (s *socket) next() protocol.Frame {
	s.t.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the socket closed")
		}
		return f
	case <-time.After(waittest.Stall):
		s.t.Fatalf("no frame in %s", waittest.Stall)
	}
	return protocol.Frame{}
}

func (s *socket) wantChanges(last int64) {
	s.t.Helper()
	if f := s.next(); f.Type != protocol.TypeChanges || f.Last != last {
		s.t.Fatalf("got %+v, want a changes frame with last %d", f, last)
	}
}

// TestDeviceSockets: several devices of a workspace connect at once. Each
// hears of the others' pushes (never of its own), webhooks go to the
// newest socket that takes them (never to hooks=0), and a device's second
// socket replaces its first.
func TestDeviceSockets(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t, "tok")

	laptop := dial(t, r, l, "?device=dev_laptop&hooks=1")
	laptop.wantChanges(0)
	phone := dial(t, r, l, "?device=dev_phone&hooks=0")
	phone.wantChanges(0)
	if status, body := do(t, http.MethodGet, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathConnect)+"?device=laptop",
		l.Secret, nil); status != http.StatusBadRequest || !strings.Contains(body, "dev_") {
		t.Errorf("a malformed device id: got %d %s, want 400", status, body)
	}
	if status, _ := do(t, http.MethodGet, r.URL+protocol.WorkspacePath(l.WorkspaceID, protocol.PathConnect)+"?device=dev_x&hooks=yes",
		l.Secret, nil); status != http.StatusBadRequest {
		t.Errorf("hooks=yes: got %d, want 400", status)
	}

	// The laptop pushes: the phone hears, the laptop does not. Then the
	// phone pushes: the laptop's next frame is that one, so it heard
	// nothing of its own push in between.
	if status, body := pushJSON(t, r, l, pushBody(change("agent/1", "dev_laptop", "a"))); status != 200 {
		t.Fatalf("push: %d %s", status, body)
	}
	phone.wantChanges(1)
	pushJSON(t, r, l, pushBody(change("agent/2", "dev_phone", "b")))
	laptop.wantChanges(2)

	// A webhook goes to the laptop (hooks=1), not the phone.
	if status, _ := do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader(`{"n":1}`)); status != http.StatusAccepted {
		t.Fatal("webhook not taken")
	}
	if f := laptop.next(); f.Type != protocol.TypeDelivery {
		t.Fatalf("laptop got %+v, want the delivery", f)
	}
	wantMetric(t, r, "rerun_relay_connected_workspaces 1", "rerun_relay_connected_devices 2")

	// A desktop that takes webhooks connects: the newest hook socket. A
	// webhook goes to it; the laptop (whose first delivery is unacked)
	// gets no new one.
	desk := dial(t, r, l, "?device=dev_desk&hooks=1")
	desk.wantChanges(2)
	if f := desk.next(); f.Type != protocol.TypeDelivery {
		t.Fatalf("the new hook socket got %+v, want the unacked delivery", f)
	}
	do(t, http.MethodPost, r.URL+"/h/tok", "", strings.NewReader(`{"n":2}`))
	second := desk.next()
	if second.Type != protocol.TypeDelivery {
		t.Fatalf("the new hook socket got %+v, want the second delivery", second)
	}

	// The phone connects again: the old socket is closed as replaced.
	phone2 := dial(t, r, l, "?device=dev_phone&hooks=0")
	phone2.wantChanges(2)
	select {
	case code := <-phone.closed:
		if code != 4001 {
			t.Errorf("the replaced socket closed with %d, want 4001", code)
		}
	case <-time.After(waittest.Patience):
		t.Fatal("the replaced socket is still open")
	}
	// The desktop leaves: the laptop is the hook socket again and gets
	// the delivery it never had (the first waits for its ack timeout).
	desk.conn.Close(websocket.StatusNormalClosure, "")
	if f := laptop.next(); f.Type != protocol.TypeDelivery || f.ID != second.ID {
		t.Fatalf("laptop got %+v, want delivery %s", f, second.ID)
	}
	// The phone's sockets never saw a delivery.
	phone2.conn.Close(websocket.StatusNormalClosure, "")
	for _, s := range []*socket{phone, phone2} {
		for f := range s.frames {
			if f.Type == protocol.TypeDelivery {
				t.Errorf("a hooks=0 socket got delivery %s", f.ID)
			}
		}
	}
	wantMetric(t, r, "rerun_relay_connected_devices 1", "rerun_relay_changes_total 2", "rerun_relay_change_records 2", "rerun_relay_change_bytes 2")
}

func wantMetric(t *testing.T, r *relaytest.Relay, samples ...string) {
	t.Helper()
	deadline := time.Now().Add(waittest.Patience)
	for {
		_, body := do(t, http.MethodGet, r.URL+protocol.PathMetrics, "", nil)
		missing := ""
		for _, s := range samples {
			if !strings.Contains(body, s+"\n") {
				missing = s
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics lack %q:\n%s", missing, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestClientChanges: two devices through package client: Push (in
// batches past MaxPush), OnChanges for the other device, Pull page by
// page, Status.
func TestClientChanges(t *testing.T) {
	r := relaytest.Start(t, relay.Config{})
	l := r.Link(t)
	heard := make(chan int64, 100)
	newDevice := func(id string, on func(int64)) *client.Client {
		c, err := client.New(client.Config{RelayURL: r.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: t.TempDir(),
			Device: id, OnChanges: on, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Serve(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		return c
	}
	a := newDevice("dev_a", func(last int64) {
		if last != 0 {
			t.Errorf("device a heard of its own push (%d)", last)
		}
	})
	b := newDevice("dev_b", func(last int64) { heard <- last })
	if got := <-heard; got != 0 {
		t.Fatalf("b heard %d on connecting, want 0", got)
	}
	for !a.Status().Connected {
		time.Sleep(10 * time.Millisecond)
	}
	const n = 1234
	var changes []protocol.Change
	for i := range n {
		c := change(string(rune(i)), "dev_a", "sealed")
		c.Seq = 99 // ignored: the relay assigns seqs
		changes = append(changes, c)
	}
	last, err := a.Push(context.Background(), changes)
	if err != nil || last != n {
		t.Fatalf("push: got %d (%v), want %d", last, err, n)
	}
	// Three batches: b hears each.
	for got := int64(0); got != n; {
		select {
		case got = <-heard:
		case <-time.After(waittest.Stall):
			t.Fatalf("b heard up to %d, want %d", got, n)
		}
	}
	var cursor int64
	pages, total := 0, 0
	for {
		p, err := b.Pull(context.Background(), cursor, 0)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		total += len(p.Changes)
		if len(p.Changes) > 0 {
			cursor = p.Changes[len(p.Changes)-1].Seq
		}
		if !p.More {
			break
		}
	}
	if total != n || cursor != n || pages != 3 {
		t.Errorf("pulled %d changes in %d pages up to %d, want %d in 3 up to %d", total, pages, cursor, n, n)
	}
	if st := b.Status(); st.Device != "dev_b" || st.LastChange != n || !st.Connected {
		t.Errorf("status %+v, want dev_b connected, last change %d", st, n)
	}
	if _, err := a.Push(context.Background(), []protocol.Change{{Key: "nope", Device: "dev_a", Body: []byte("x")}}); !errors.Is(err, protocol.ErrChange) {
		t.Errorf("push of a bad key: got %v, want ErrChange before any call", err)
	}
	if _, err := client.New(client.Config{RelayURL: r.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: t.TempDir(), Device: "laptop"}); err == nil {
		t.Error("a malformed device id was taken")
	}
}

// TestRelayCannotDecrypt: a record sealed with AES-GCM under a key only
// the devices have is stored as the ciphertext alone: neither the
// plaintext nor its base64 or hex is anywhere in the relay's SQLite file
// (or PostgreSQL table), while the ciphertext is (so the search looks in
// the right place).
func TestRelayCannotDecrypt(t *testing.T) {
	plaintext := []byte(`{"table":"souls","id":"agt_42","soul":"You are Ada, the bookkeeper. The launch code is 7-4-1-9."}`)
	syncKey := make([]byte, 32)
	rand.Read(syncKey)
	block, _ := aes.NewCipher(syncKey)
	gcm, _ := cipher.NewGCM(block)
	nonce := make([]byte, gcm.NonceSize())
	rand.Read(nonce)
	sealed := gcm.Seal(nonce, nonce, plaintext, nil)

	// What must not be found, and what must be.
	secrets := map[string][]byte{
		"plaintext":          plaintext,
		"a phrase of it":     []byte("launch code"),
		"its base64":         []byte(base64.StdEncoding.EncodeToString(plaintext)),
		"its hex":            []byte(hex.EncodeToString(plaintext)),
		"the sync key":       syncKey,
		"the sync key (hex)": []byte(hex.EncodeToString(syncKey)),
	}
	check := func(t *testing.T, stored []byte, sealedForm []byte) {
		t.Helper()
		if !bytes.Contains(stored, sealedForm) {
			t.Fatal("the ciphertext is not in what was read: the check would prove nothing")
		}
		for name, s := range secrets {
			if bytes.Contains(stored, s) {
				t.Errorf("the relay's store holds %s", name)
			}
		}
	}
	pushSealed := func(t *testing.T, r *relaytest.Relay) {
		l := r.Link(t)
		c, err := client.New(client.Config{RelayURL: r.URL, WorkspaceID: l.WorkspaceID, Secret: l.Secret, Dir: t.TempDir(), Device: "dev_a"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Push(context.Background(), []protocol.Change{{Key: key("souls/agt_42"), Device: "dev_a", Body: sealed}}); err != nil {
			t.Fatal(err)
		}
		page, err := c.Pull(context.Background(), 0, 0)
		if err != nil || len(page.Changes) != 1 {
			t.Fatalf("pull: %v", err)
		}
		opened, err := gcm.Open(nil, page.Changes[0].Body[:gcm.NonceSize()], page.Changes[0].Body[gcm.NonceSize():], nil)
		if err != nil || !bytes.Equal(opened, plaintext) {
			t.Fatalf("the device could not open what it pulled: %v", err)
		}
	}

	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "relay.db")
		store, err := relay.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		pushSealed(t, relaytest.StartOn(t, store, relay.Config{}))
		var stored []byte
		for _, suffix := range []string{"", "-wal", "-shm"} { // committed pages may still be in the WAL
			b, _ := os.ReadFile(path + suffix)
			stored = append(stored, b...)
		}
		check(t, stored, sealed)
	})
	t.Run("postgres", func(t *testing.T) {
		u := relaytest.PostgresSchema(t)
		store, err := relay.OpenPostgres(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		pushSealed(t, relaytest.StartOn(t, store, relay.Config{}))
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// Every table of the relay's schema, each row as text (bytea as
		// \x hex), and the raw bytes of the records.
		var stored []byte
		for _, table := range []string{"workspaces", "tokens", "deliveries", "changes"} {
			rows, err := db.Query(`SELECT t::text FROM ` + table + ` t`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var s string
				rows.Scan(&s)
				stored = append(stored, s...)
			}
			rows.Close()
		}
		var raw []byte
		if err := db.QueryRow(`SELECT body FROM changes`).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, raw...)
		secrets["its hex"] = []byte(hex.EncodeToString(plaintext))
		check(t, stored, []byte(hex.EncodeToString(sealed)))
		check(t, raw, sealed)
	})
}
