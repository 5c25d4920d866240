package replica

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/replica/replicatest"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

func boundsEngine(t *testing.T) (*store.DB, *Engine) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := New(db, Config{Workspace: "ws_bounds", Dir: t.TempDir(), Device: "dev_b"})
	if err := e.Enable(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	return db, e
}

// A tombstone of a row outside the table's Where (meta: only the name
// syncs) must not delete it: the relay link, onboarding and notification
// settings live in meta too.
func TestApplyTombstoneKeepsRowsOutsideWhere(t *testing.T) {
	ctx := context.Background()
	db, e := boundsEngine(t)
	if _, err := db.Exec(`INSERT INTO meta (key, value) VALUES ('relay', '{"secret_sealed":"x"}')`); err != nil {
		t.Fatal(err)
	}
	key := bytes.Repeat([]byte{7}, KeySize)
	k, _ := deriveKeys(key, "ws_bounds")
	name, body, err := k.seal(Record{Table: "meta", PK: `["relay"]`, HLC: HLC{Wall: time.Now().UnixMilli() + 1000}.String(),
		Device: "dev_other", Deleted: true})
	if err != nil {
		t.Fatal(err)
	}
	relay := replicatest.New()
	if _, err := relay.Push(ctx, []protocol.Change{{Key: name, Device: "dev_other", Body: body}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Sync(ctx, key, relay); err != nil {
		t.Fatal(err)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM meta WHERE key = 'relay'`).Scan(&n)
	if n != 1 {
		t.Fatalf("a pulled tombstone deleted meta row 'relay', which meta does not sync")
	}
}

// stuckRelay answers every pull with the same page that says More but
// does not move past the cursor (a relay that lies or is broken).
type stuckRelay struct{ pulls int }

func (s *stuckRelay) Push(ctx context.Context, changes []protocol.Change) (int64, error) {
	return 0, nil
}
func (s *stuckRelay) Pull(ctx context.Context, after int64, limit int) (protocol.ChangePage, error) {
	s.pulls++
	return protocol.ChangePage{Changes: []protocol.Change{{Seq: after, Key: "00", Device: "dev_x", Body: []byte{1}}}, Last: after + 10, More: true}, nil
}

func TestPullStopsWhenThePageDoesNotAdvance(t *testing.T) {
	_, e := boundsEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	s := &stuckRelay{}
	err := e.Sync(ctx, bytes.Repeat([]byte{7}, KeySize), s)
	if err == nil || ctx.Err() != nil || s.pulls > 3 {
		t.Fatalf("Sync against a page that never advances: err %v after %d pulls (ctx %v); want an error at once", err, s.pulls, ctx.Err())
	}
}

// Unlinking ends the relay's log (the relay forgets the workspace); a link
// made later starts a new log whose seqs start again from 1. The cursor of
// the old log must not skip the new log's first changes.
func TestRelinkPullsTheNewLogFromItsStart(t *testing.T) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{7}, KeySize)
	dbA, a := boundsEngine(t)
	for i := range 3 {
		if _, err := dbA.Exec(`INSERT INTO boxes (id, name, position, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')`,
			"bx_a"+string(rune('0'+i)), "A box", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Enable(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx, key, replicatest.New()); err != nil {
		t.Fatal(err)
	}
	if err := a.Disable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Enable(ctx, true); err != nil {
		t.Fatal(err)
	}
	dbB, err := store.Open(ctx, filepath.Join(t.TempDir(), "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer dbB.Close()
	b := New(dbB, Config{Workspace: "ws_bounds", Dir: t.TempDir(), Device: "dev_c"})
	if err := b.Enable(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := dbB.Exec(`INSERT INTO boxes (id, name, position, created_at) VALUES ('bx_b', 'B box', 9, '2026-01-01T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	relay2 := replicatest.New()
	if err := b.Sync(ctx, key, relay2); err != nil {
		t.Fatal(err)
	}
	if err := a.Sync(ctx, key, relay2); err != nil {
		t.Fatal(err)
	}
	var n int
	dbA.QueryRow(`SELECT count(*) FROM boxes WHERE id = 'bx_b'`).Scan(&n)
	if n != 1 {
		t.Fatalf("after linking again, the other device's box (seq 1 of the new log) never arrived (cursor %d)", a.Status().Seq)
	}
}

// A record stamped far in the future (a device with a wrong clock) is
// refused: it would win every comparison and drag this device's clock.
func TestApplyRefusesAClockFarAhead(t *testing.T) {
	ctx := context.Background()
	db, e := boundsEngine(t)
	key := bytes.Repeat([]byte{7}, KeySize)
	k, _ := deriveKeys(key, "ws_bounds")
	relay := replicatest.New()
	push := func(name string, at time.Time) {
		t.Helper()
		row := []byte(`{"id":"bx_` + name + `","name":"` + name + `","position":1,"created_at":"2026-11-30T00:00:00Z"}`)
		rk, body, err := k.seal(Record{Table: "boxes", PK: `["bx_` + name + `"]`, HLC: HLC{Wall: at.UnixMilli()}.String(), Device: "dev_other", Row: row})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := relay.Push(ctx, []protocol.Change{{Key: rk, Device: "dev_other", Body: body}}); err != nil {
			t.Fatal(err)
		}
	}
	push("future", time.Now().Add(MaxDrift+time.Hour))
	push("soon", time.Now().Add(MaxDrift-time.Hour))
	if err := e.Sync(ctx, key, relay); err != nil {
		t.Fatal(err)
	}
	var future, soon int
	db.QueryRow(`SELECT count(*) FROM boxes WHERE id = 'bx_future'`).Scan(&future)
	db.QueryRow(`SELECT count(*) FROM boxes WHERE id = 'bx_soon'`).Scan(&soon)
	if future != 0 || soon != 1 {
		t.Fatalf("boxes applied: future %d, soon %d; want the one past MaxDrift refused and the other applied", future, soon)
	}
	if now := e.clock.now(); now.Wall > time.Now().Add(MaxDrift).UnixMilli() {
		t.Errorf("the clock followed the refused record to %v", now)
	}
}
