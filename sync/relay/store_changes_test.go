package relay_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
)

// key returns the record key of name: 64 hex, as the desktop's HMAC is.
func key(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:])
}

func change(name, device, body string) protocol.Change {
	return protocol.Change{Key: key(name), Device: device, Body: []byte(body)}
}

func push(t *testing.T, s relay.Store, ws string, changes ...protocol.Change) int64 {
	t.Helper()
	last, err := s.PushChanges(context.Background(), ws, changes, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return last
}

// summary is "seq:name-of-body" of each change of a page.
func summary(p protocol.ChangePage) []string {
	var out []string
	for _, c := range p.Changes {
		out = append(out, fmt.Sprintf("%d:%s", c.Seq, c.Body))
	}
	return out
}

// TestStoreChanges: seqs are assigned in push order per workspace, a key
// keeps only its latest change (with a new seq), pages end at limit.
func TestStoreChanges(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		workspace(t, s, "ws_b")
		if last, err := s.LastSeq(ctx, "ws_a"); err != nil || last != 0 {
			t.Fatalf("newest seq of a new workspace: got %d (%v), want 0", last, err)
		}
		if got := push(t, s, "ws_a", change("agent/1", "dev_a", "a1"), change("agent/2", "dev_a", "a2")); got != 2 {
			t.Errorf("first push: got last %d, want 2", got)
		}
		if got := push(t, s, "ws_b", change("agent/1", "dev_b", "b1")); got != 1 {
			t.Errorf("another workspace counts on its own: got %d, want 1", got)
		}
		// agent/1 again: replaced, moved to seq 3; a key twice in one push
		// keeps the later, with one seq.
		if got := push(t, s, "ws_a", change("agent/1", "dev_b", "a1'"), change("soul/9", "dev_b", "s9"), change("soul/9", "dev_b", "s9'")); got != 4 {
			t.Errorf("second push: got last %d, want 4", got)
		}

		for _, tc := range []struct {
			name       string
			after      int64
			limit      int
			want       []string
			more       bool
			wantDevice string // of the first change
		}{
			{"all", 0, 10, []string{"2:a2", "3:a1'", "4:s9'"}, false, "dev_a"},
			{"first page", 0, 2, []string{"2:a2", "3:a1'"}, true, "dev_a"},
			{"next page", 3, 2, []string{"4:s9'"}, false, "dev_b"},
			{"up to date", 4, 10, nil, false, ""},
			{"past the end", 99, 10, nil, false, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				p, err := s.Changes(ctx, "ws_a", tc.after, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(summary(p), tc.want) || p.More != tc.more || p.Last != 4 {
					t.Errorf("got %v more=%v last=%d, want %v more=%v last=4", summary(p), p.More, p.Last, tc.want, tc.more)
				}
				if p.Changes == nil {
					t.Error("changes is null; want [] so the JSON is a list")
				}
				if len(p.Changes) > 0 && (p.Changes[0].Device != tc.wantDevice || p.Changes[0].Key == "") {
					t.Errorf("first change %+v, want device %s and its key", p.Changes[0], tc.wantDevice)
				}
			})
		}
		if st, _ := s.Stats(ctx); st.Changes != 4 || st.ChangeBytes != int64(len("a2a1's9'b1")) {
			t.Errorf("got %+v, want 4 records of %d bytes", st, len("a2a1's9'b1"))
		}

		if _, err := s.PushChanges(ctx, "ws_nope", []protocol.Change{change("x", "dev_a", "x")}, time.Now()); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("push to an unknown workspace: got %v, want ErrNotFound", err)
		}
		if _, err := s.Changes(ctx, "ws_nope", 0, 10); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("pull of an unknown workspace: got %v, want ErrNotFound", err)
		}
		if err := s.DeleteWorkspace(ctx, "ws_a"); err != nil {
			t.Fatal(err)
		}
		if st, _ := s.Stats(ctx); st.Changes != 1 {
			t.Errorf("got %d records after unlinking ws_a, want ws_b's 1", st.Changes)
		}
	})
}

// TestStoreChangesPageBytes: a page stops at MaxPullBytes, with More, and
// always holds one change.
func TestStoreChangesPageBytes(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		big := make([]byte, protocol.MaxChange)
		n := protocol.MaxPullBytes/protocol.MaxChange + 2
		for i := range n {
			if _, err := s.PushChanges(ctx, "ws_a", []protocol.Change{{Key: key(fmt.Sprint(i)), Device: "dev_a", Body: big}}, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		p, err := s.Changes(ctx, "ws_a", 0, protocol.MaxPull)
		if err != nil || len(p.Changes) != protocol.MaxPullBytes/protocol.MaxChange || !p.More {
			t.Fatalf("got %d changes more=%v (%v), want %d and more", len(p.Changes), p.More, err, protocol.MaxPullBytes/protocol.MaxChange)
		}
	})
}

// TestStoreChangesConcurrent: devices push at once through several stores
// (relay processes, on PostgreSQL) while a device pulls: every seq is
// used once, and the puller, following its cursor, misses no record (a
// seq never commits after a greater one).
func TestStoreChangesConcurrent(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		stores := []relay.Store{open(), open()}
		workspace(t, stores[0], "ws_a")
		const writers, pushes, perPush = 4, 25, 4
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				s := stores[w%len(stores)]
				for p := range pushes {
					var batch []protocol.Change
					for i := range perPush {
						batch = append(batch, change(fmt.Sprintf("w%d/p%d/%d", w, p, i), fmt.Sprintf("dev_%d", w), "x"))
					}
					if _, err := s.PushChanges(ctx, "ws_a", batch, time.Now()); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()

		seen := map[string]int64{}
		var cursor int64
		pull := func() {
			for {
				p, err := stores[1].Changes(ctx, "ws_a", cursor, 7)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range p.Changes {
					if c.Seq <= cursor {
						t.Fatalf("seq %d after cursor %d", c.Seq, cursor)
					}
					seen[c.Key], cursor = c.Seq, c.Seq
				}
				if !p.More {
					cursor = max(cursor, p.Last)
					return
				}
			}
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
			}
			pull()
		}
		pull()
		const total = writers * pushes * perPush
		if len(seen) != total || cursor != total {
			t.Errorf("pulled %d records up to seq %d, want %d up to %d", len(seen), cursor, total, total)
		}
	})
}
