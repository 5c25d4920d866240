package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/replica/replicatest"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

func testKeys(t testing.TB, secret byte, workspace string) *keys {
	t.Helper()
	k, err := deriveKeys(bytes.Repeat([]byte{secret}, KeySize), workspace)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestClockOrders(t *testing.T) {
	var c clock
	a := c.tick(1000)
	b := c.tick(1000) // same millisecond
	d := c.tick(900)  // the wall clock went back
	if !(a.Compare(b) < 0 && b.Compare(d) < 0) {
		t.Fatalf("readings %v %v %v are not increasing", a, b, d)
	}
	c.observe(HLC{Wall: 5000, Counter: 3})
	if e := c.tick(1000); e.Compare(HLC{Wall: 5000, Counter: 3}) <= 0 {
		t.Errorf("after a remote reading, tick = %v, want later than 5000.3", e)
	}
	for _, h := range []HLC{a, b, d, {Wall: 1<<40 + 7, Counter: 999_999}} {
		back, err := ParseHLC(h.String())
		if err != nil || back != h {
			t.Errorf("ParseHLC(%q) = %v %v, want %v", h.String(), back, err, h)
		}
		if (h.String() < a.String()) != (h.Compare(a) < 0) {
			t.Errorf("text order of %v and %v is not clock order", h, a)
		}
	}
}

func TestSealOpen(t *testing.T) {
	k := testKeys(t, 1, "ws_a")
	r := Record{Table: "souls", PK: `["ag_x",2]`, HLC: HLC{Wall: 1, Counter: 2}.String(), Device: "dev_a", Row: json.RawMessage(`{"body":"hi"}`)}
	name, body, err := k.seal(r)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.open(name, body)
	if err != nil || got.Table != r.Table || got.PK != r.PK || string(got.Row) != string(r.Row) {
		t.Fatalf("open = %+v, %v; want %+v", got, err, r)
	}
	otherName, _, _ := k.seal(Record{Table: "souls", PK: `["ag_y",2]`, HLC: r.HLC, Device: "dev_a", Row: r.Row})
	flipped := append([]byte(nil), body...)
	flipped[len(flipped)-3] ^= 0x10
	for name2, tc := range map[string]struct {
		k    *keys
		name string
		body []byte
	}{
		"other workspace": {testKeys(t, 1, "ws_b"), name, body},
		"other key":       {testKeys(t, 2, "ws_a"), name, body},
		"moved to a key":  {k, otherName, body},
		"flipped byte":    {k, name, flipped},
		"cut short":       {k, name, body[:20]},
	} {
		t.Run(name2, func(t *testing.T) {
			if _, err := tc.k.open(tc.name, tc.body); !errors.Is(err, errRefused) {
				t.Errorf("open = %v, want refused", err)
			}
		})
	}
}

func FuzzOpenRecord(f *testing.F) {
	k := testKeys(f, 1, "ws_a")
	name, body, _ := k.seal(Record{Table: "agents", PK: `["ag_x"]`, HLC: HLC{Wall: 1}.String(), Device: "dev_a", Row: json.RawMessage(`{"id":"ag_x"}`)})
	f.Add(name, body)
	f.Add(name, []byte{1, 2, 3})
	f.Add("", []byte{})
	f.Fuzz(func(t *testing.T, name string, body []byte) {
		r, err := k.open(name, body)
		if err != nil {
			return
		}
		if r.check() != nil || k.name(r.Table, r.PK) != name {
			t.Fatalf("opened a record that fails its checks: %+v", r)
		}
	})
}

// benchDB is a workspace database with sync enabled.
func benchDB(b *testing.B) (*store.DB, *Engine) {
	db, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "workspace.db"), store.WorkspaceMigrations())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	e := New(db, Config{Workspace: "ws_bench", Dir: b.TempDir(), Device: "dev_bench"})
	if err := e.Enable(context.Background(), false); err != nil {
		b.Fatal(err)
	}
	return db, e
}

// BenchmarkStampSealPush1000: 1,000 rows captured, stamped, sealed, pushed.
func BenchmarkStampSealPush1000(b *testing.B) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{1}, KeySize)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, e := benchDB(b)
		insertBoxes(b, db, 1000, i)
		relay := replicatest.New()
		b.StartTimer()
		if err := e.Sync(ctx, key, relay); err != nil {
			b.Fatal(err)
		}
		if n := len(relay.Changes()); n < 1000 {
			b.Fatalf("pushed %d changes, want 1000", n)
		}
	}
}

// BenchmarkApply1000: 1,000 pulled records applied.
func BenchmarkApply1000(b *testing.B) {
	ctx := context.Background()
	key := bytes.Repeat([]byte{1}, KeySize)
	src, se := benchDB(b)
	insertBoxes(b, src, 1000, 0)
	relay := replicatest.New()
	if err := se.Sync(ctx, key, relay); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, e := benchDB(b)
		b.StartTimer()
		if err := e.Sync(ctx, key, relay); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		var n int
		db.QueryRow(`SELECT count(*) FROM boxes`).Scan(&n)
		if n != 1000 {
			b.Fatalf("applied %d boxes, want 1000", n)
		}
		b.StartTimer()
	}
}

func insertBoxes(b *testing.B, db *store.DB, n, round int) {
	for j := 0; j < n; j++ {
		if _, err := db.Exec(`INSERT INTO boxes (id, name, position, created_at) VALUES (?, ?, ?, '2026-01-01T00:00:00Z')`,
			fmt.Sprintf("bx_%d_%d", round, j), fmt.Sprintf("Box %d", j), j); err != nil {
			b.Fatal(err)
		}
	}
}
