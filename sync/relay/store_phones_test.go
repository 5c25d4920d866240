package relay_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
	"github.com/rerun-build/rerun-desktop/sync/relay"
)

func subscription(endpoint, p256dh, auth string) protocol.Subscription {
	var s protocol.Subscription
	s.Endpoint, s.Keys.P256dh, s.Keys.Auth = endpoint, p256dh, auth
	return s
}

func phoneRecord(ws, id string, at time.Time) relay.PhoneRecord {
	return relay.PhoneRecord{ID: id, WorkspaceID: ws, Verifier: protocol.Verifier("secret-" + id), Name: "Phone " + id,
		Subscription: subscription("https://fcm.googleapis.com/fcm/send/"+id, "p256dh-"+id, "auth-"+id), PairedAt: at}
}

// The phones' tables (migration 0003) on SQLite and on PostgreSQL: a
// pairing spent once and only before it expires, the phone limit, the
// subscription and push record, removal, and one VAPID key however many
// relay processes ask for it at once.
func TestStorePhones(t *testing.T) {
	backends(t, func(t *testing.T, open func() relay.Store) {
		ctx := context.Background()
		s := open()
		workspace(t, s, "ws_a")
		workspace(t, s, "ws_b")
		now := time.Now().Truncate(time.Millisecond)

		if err := s.AddPairing(ctx, "ws_a", "h1", now.Add(10*time.Minute), now); err != nil {
			t.Fatal(err)
		}
		if err := s.Pair(ctx, "h1", phoneRecord("ws_b", "ph_b", now)); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("another workspace's pairing: %v, want not found", err)
		}
		if err := s.Pair(ctx, "h1", phoneRecord("ws_a", "ph_1", now)); err != nil {
			t.Fatal(err)
		}
		if err := s.Pair(ctx, "h1", phoneRecord("ws_a", "ph_2", now)); !errors.Is(err, relay.ErrUsed) {
			t.Errorf("the pairing again: %v, want used", err)
		}
		s.AddPairing(ctx, "ws_a", "h2", now.Add(time.Minute), now)
		if err := s.Pair(ctx, "h2", phoneRecord("ws_a", "ph_2", now.Add(2*time.Minute))); !errors.Is(err, relay.ErrExpired) {
			t.Errorf("an expired pairing: %v, want expired", err)
		}

		p, err := s.Phone(ctx, "ph_1")
		want := phoneRecord("ws_a", "ph_1", now)
		if p.PairedAt.Equal(want.PairedAt) {
			want.PairedAt = p.PairedAt
		}
		if err != nil || p != want {
			t.Fatalf("phone: %+v %v", p, err)
		}
		if _, err := s.Phone(ctx, "ph_none"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("an unknown phone: %v", err)
		}
		sub := subscription("https://updates.push.services.mozilla.com/wpush/v2/x", "k2", "a2")
		if err := s.SetSubscription(ctx, "ph_1", sub); err != nil {
			t.Fatal(err)
		}
		if err := s.PushDone(ctx, "ph_1", now.Add(time.Second), "push service answered 500"); err != nil {
			t.Fatal(err)
		}
		ps, err := s.Phones(ctx, "ws_a")
		if err != nil || len(ps) != 1 || ps[0].Subscription != sub || !ps[0].LastPushAt.Equal(now.Add(time.Second)) || ps[0].LastError != "push service answered 500" {
			t.Fatalf("phones: %+v %v", ps, err)
		}
		if ps, _ := s.Phones(ctx, "ws_b"); len(ps) != 0 {
			t.Errorf("ws_b has %d phones", len(ps))
		}

		// Up to MaxPhones; the pairing that would pass it stays unspent.
		for i := 2; i <= protocol.MaxPhones; i++ {
			h := fmt.Sprintf("hm%d", i)
			s.AddPairing(ctx, "ws_a", h, now.Add(time.Minute), now)
			if err := s.Pair(ctx, h, phoneRecord("ws_a", fmt.Sprintf("ph_%d", i), now)); err != nil {
				t.Fatalf("phone %d: %v", i, err)
			}
		}
		s.AddPairing(ctx, "ws_a", "hfull", now.Add(time.Minute), now)
		if err := s.Pair(ctx, "hfull", phoneRecord("ws_a", "ph_over", now)); !errors.Is(err, relay.ErrConflict) {
			t.Errorf("phone %d: %v, want a conflict", protocol.MaxPhones+1, err)
		}
		if err := s.DeletePhone(ctx, "ws_a", "ph_1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeletePhone(ctx, "ws_b", "ph_2"); !errors.Is(err, relay.ErrNotFound) {
			t.Errorf("delete another workspace's phone: %v, want not found", err)
		}
		if err := s.Pair(ctx, "hfull", phoneRecord("ws_a", "ph_over", now)); err != nil {
			t.Errorf("the refused pairing after a phone was removed: %v", err)
		}

		// Several processes (stores) race for the first pairing use and the
		// first VAPID key: one wins each.
		s.AddPairing(ctx, "ws_b", "hrace", now.Add(time.Minute), now)
		stores := []relay.Store{s, open(), open(), open()}
		var wg sync.WaitGroup
		paired := make([]error, len(stores))
		keys := make([]string, len(stores))
		for i, st := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				paired[i] = st.Pair(ctx, "hrace", phoneRecord("ws_b", fmt.Sprintf("ph_race%d", i), now))
				k, err := st.RelayKey(ctx, "vapid", func() (string, error) { return fmt.Sprintf("key-%d", i), nil })
				if err != nil {
					t.Error(err)
				}
				keys[i] = k
			}()
		}
		wg.Wait()
		won := 0
		for i, err := range paired {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, relay.ErrUsed) && !errors.Is(err, relay.ErrConflict):
				t.Errorf("store %d: %v", i, err)
			}
		}
		if ps, _ := s.Phones(ctx, "ws_b"); won != 1 || len(ps) != 1 {
			t.Errorf("%d pairings won with one token, ws_b has %d phones; want 1", won, len(ps))
		}
		for _, k := range keys {
			if k != keys[0] {
				t.Errorf("VAPID keys %v: want one", keys)
				break
			}
		}
	})
}
