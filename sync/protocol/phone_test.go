package protocol_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

func TestSealPhone(t *testing.T) {
	key := protocol.PhoneKey(bytes.Repeat([]byte{1}, 32))
	if bytes.Equal(key, bytes.Repeat([]byte{1}, 32)) || len(key) != 32 {
		t.Fatal("the phone key is the sync key")
	}
	sealed, err := protocol.SealPhone(key, protocol.SealAnswer, []byte("yes"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := protocol.OpenPhone(key, protocol.SealAnswer, sealed); err != nil || string(got) != "yes" {
		t.Fatalf("open: %q %v", got, err)
	}
	if _, err := protocol.OpenPhone(key, protocol.SealCard, sealed); err == nil {
		t.Error("an answer opened as a card")
	}
	other := protocol.PhoneKey(bytes.Repeat([]byte{2}, 32))
	if _, err := protocol.OpenPhone(other, protocol.SealAnswer, sealed); err == nil {
		t.Error("opened with another workspace's key")
	}
}

func TestParsePhoneSecret(t *testing.T) {
	s := protocol.NewPhoneSecret("ph_abc123")
	if id, err := protocol.ParsePhoneSecret(s); err != nil || id != "ph_abc123" {
		t.Fatalf("%q: %q %v", s, id, err)
	}
	for _, bad := range []string{"", "rrp_", "rrp_ph_abc", "rrs_ph_abc.0123456789abcdef", "rrp_ph_ABC.0123456789abcdef", "rrp_ph_a.short"} {
		if _, err := protocol.ParsePhoneSecret(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestCheckSubscription(t *testing.T) {
	var s protocol.Subscription
	json.Unmarshal([]byte(`{"endpoint":"https://fcm.googleapis.com/fcm/send/x","keys":{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}}`), &s)
	if err := protocol.CheckSubscription(s); err != nil {
		t.Fatalf("RFC 8291's example subscription: %v", err)
	}
	for name, edit := range map[string]func(*protocol.Subscription){
		"http":       func(s *protocol.Subscription) { s.Endpoint = "http://push.example.com/x" },
		"no host":    func(s *protocol.Subscription) { s.Endpoint = "https:///x" },
		"user":       func(s *protocol.Subscription) { s.Endpoint = "https://u:p@push.example.com/x" },
		"short key":  func(s *protocol.Subscription) { s.Keys.P256dh = "BNcR" },
		"not point":  func(s *protocol.Subscription) { s.Keys.P256dh = "B" + strings.Repeat("A", 86) },
		"short auth": func(s *protocol.Subscription) { s.Keys.Auth = "tBHI" },
	} {
		c := s
		edit(&c)
		if err := protocol.CheckSubscription(c); err == nil {
			t.Errorf("%s: taken", name)
		}
	}
}

func FuzzCheckSubscription(f *testing.F) {
	f.Add(`{"endpoint":"https://fcm.googleapis.com/fcm/send/x","keys":{"p256dh":"BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM","auth":"tBHItJI5svbpez7KI4CCXg"}}`)
	f.Add(`{"endpoint":"http://127.0.0.1:1/push/a","keys":{"p256dh":"","auth":""}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		var p protocol.PairPhone
		if json.Unmarshal([]byte(`{"subscription":`+raw+`}`), &p) != nil {
			return
		}
		if protocol.CheckSubscription(p.Subscription) == nil && !strings.HasPrefix(p.Subscription.Endpoint, "http") {
			t.Fatalf("took endpoint %q", p.Subscription.Endpoint)
		}
		protocol.CheckPhoneName(p.Name)
	})
}

func FuzzParsePhoneSecret(f *testing.F) {
	f.Add(protocol.NewPhoneSecret("ph_abc"))
	f.Add("rrp_ph_.x")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := protocol.ParsePhoneSecret(s)
		if err == nil && (!protocol.ValidPhoneID(id) || !strings.HasPrefix(s, "rrp_"+id+".")) {
			t.Fatalf("%q gave id %q", s, id)
		}
	})
}

func FuzzOpenPhone(f *testing.F) {
	key := protocol.PhoneKey(make([]byte, 32))
	sealed, _ := protocol.SealPhone(key, protocol.SealAnswer, []byte(`{"v":1}`))
	f.Add(sealed)
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		if plain, err := protocol.OpenPhone(key, protocol.SealAnswer, b); err == nil && !bytes.Equal(b, sealed) && len(plain) > len(b) {
			t.Fatal("opened more than was sealed")
		}
	})
}
