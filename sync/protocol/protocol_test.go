package protocol_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

var update = flag.Bool("update", false, "rewrite the golden frames in testdata/")

var (
	key = protocol.SigningKey("rrs_test")
	now = time.Unix(1764500000, 0)
)

func TestVerify(t *testing.T) {
	payload := []byte(`{"id":"dlv_1"}`)
	at := func(d time.Duration) int64 { return now.Add(d).Unix() }
	sig := func(ts int64) string { return protocol.Sign(key, "dlv_1", ts, payload) }
	for _, tc := range []struct {
		name      string
		id        string
		ts        int64
		signature string
		payload   []byte
		key       []byte
		want      error
	}{
		{"valid", "dlv_1", at(0), sig(at(0)), payload, key, nil},
		{"5 min old", "dlv_1", at(-5 * time.Minute), sig(at(-5 * time.Minute)), payload, key, nil},
		{"5 min ahead", "dlv_1", at(5 * time.Minute), sig(at(5 * time.Minute)), payload, key, nil},
		{"5 min 1 s old", "dlv_1", at(-5*time.Minute - time.Second), sig(at(-5*time.Minute - time.Second)), payload, key, protocol.ErrExpired},
		{"5 min 1 s ahead", "dlv_1", at(5*time.Minute + time.Second), sig(at(5*time.Minute + time.Second)), payload, key, protocol.ErrExpired},
		{"far future", "dlv_1", 1 << 62, sig(1 << 62), payload, key, protocol.ErrExpired},
		{"another workspace's key", "dlv_1", at(0), sig(at(0)), payload, protocol.SigningKey("rrs_other"), protocol.ErrSignature},
		{"payload changed", "dlv_1", at(0), sig(at(0)), []byte(`{"id":"dlv_2"}`), key, protocol.ErrSignature},
		{"id changed", "dlv_2", at(0), sig(at(0)), payload, key, protocol.ErrSignature},
		{"timestamp changed", "dlv_1", at(time.Second), sig(at(0)), payload, key, protocol.ErrSignature},
		{"one of several matches", "dlv_1", at(0), "v1,AAAA v2,x " + sig(at(0)), payload, key, nil},
		{"other version", "dlv_1", at(0), "v1a," + sig(at(0))[3:], payload, key, protocol.ErrSignature},
		{"no signature", "dlv_1", at(0), "", payload, key, protocol.ErrUnsigned},
		{"no id", "", at(0), sig(at(0)), payload, key, protocol.ErrUnsigned},
		{"no timestamp", "dlv_1", 0, sig(0), payload, key, protocol.ErrUnsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.Verify(tc.key, tc.id, tc.ts, tc.signature, tc.payload, now, protocol.Tolerance)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifyWebhook: the timestamp is signed as the sender wrote it, so a
// sender writing "+1764500000" is checked over those bytes, not over a
// reformatted number; text that is no Unix time is unsigned.
func TestVerifyWebhook(t *testing.T) {
	payload := []byte(`{}`)
	signed := func(ts string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte("msg_1." + ts + "."))
		m.Write(payload)
		return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	for _, tc := range []struct {
		name, timestamp, signature string
		want                       error
	}{
		{"as Sign writes it", ts, protocol.Sign(key, "msg_1", now.Unix(), payload), nil},
		{"a plus sign, signed with it", "+" + ts, signed("+" + ts), nil},
		{"a plus sign, signed without it", "+" + ts, signed(ts), protocol.ErrSignature},
		{"not a number", "soon", signed("soon"), protocol.ErrUnsigned},
		{"before 1970", "-1", signed("-1"), protocol.ErrUnsigned},
		{"one of several", ts, "v1,AAAA v1a,xx " + signed(ts), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.VerifyWebhook(key, "msg_1", tc.timestamp, tc.signature, payload, now, protocol.Tolerance)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

// TestDerivedSecrets: what the relay keeps of a secret differs from it and
// from each other, and is stable (a relay upgrade must not unlink anyone).
func TestDerivedSecrets(t *testing.T) {
	const secret = "rrs_test"
	v, k := protocol.Verifier(secret), string(protocol.SigningKey(secret))
	if v == secret || k == secret || v == k {
		t.Fatal("the verifier, the signing key and the secret must differ")
	}
	if want := "6ff30c7adbdafbed49cb8362200c3f250d5e1cc7f1981642513834e219d06c35"; v != want {
		t.Errorf("verifier: got %s, want %s", v, want)
	}
	if got, want := hex.EncodeToString([]byte(k)), "d00a464caf3462bfad3dbc7257c7c7cef161af3e5aaadc85914cb6e33506f817"; got != want {
		t.Errorf("signing key: got %s, want %s", got, want)
	}
	// The desktop stores trigger tokens as hex SHA-256 (backend/trigger): the same.
	if got, want := protocol.TokenHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf("token hash: got %s, want %s", got, want)
	}
}

// TestFrames pins the wire format in testdata/*.golden (go test -update
// rewrites them).
func TestFrames(t *testing.T) {
	d := protocol.Delivery{ID: "dlv_01kb1q9x6p000000000000000", TokenHash: protocol.TokenHash("rrh_example"),
		ReceivedAt: now.UTC(), Method: "POST", Query: "source=shop",
		Header: http.Header{"Content-Type": {"application/json"}, "Webhook-Id": {"msg_1"}, "Webhook-Signature": {"v1,abc="}},
		Body:   []byte(`{"type":"order.created"}`)}
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"hello", protocol.Encode(protocol.Frame{Type: protocol.TypeHello, WorkspaceID: "ws_example", Time: now.UnixMilli(),
			HeartbeatMS: 15000, HookBase: "https://relay.example.com/h/"}, nil)},
		{"delivery", protocol.SealDelivery(key, d, now)},
		{"ack", protocol.Encode(protocol.Frame{Type: protocol.TypeAck, IDs: []string{d.ID, "dlv_01kb1q9x6p000000000000001"}}, nil)},
		{"nack", protocol.Encode(protocol.Frame{Type: protocol.TypeNack, ID: d.ID, Error: "the trigger answered 429: over this trigger's limit"}, nil)},
		{"refuse", protocol.Encode(protocol.Frame{Type: protocol.TypeRefuse, ID: d.ID, Error: "refused by the desktop: the trigger answered 404"}, nil)},
		{"changes", protocol.Encode(protocol.Frame{Type: protocol.TypeChanges, Last: 42}, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				if err := os.WriteFile(path, tc.msg, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(tc.msg) != string(want) {
				t.Errorf("got\n%s\nwant\n%s", tc.msg, want)
			}
			f, payload, err := protocol.Decode(want)
			if err != nil || f.Type != tc.name {
				t.Fatalf("decode: got %q (%v), want type %s", f.Type, err, tc.name)
			}
			if tc.name == "delivery" {
				got, err := protocol.OpenDelivery(key, f, payload, now)
				if err != nil || got.ID != d.ID || string(got.Body) != string(d.Body) || got.Header.Get("Webhook-Signature") != "v1,abc=" {
					t.Errorf("open: got %+v (%v), want the delivery back", got, err)
				}
			}
		})
	}
}

// TestOpenDeliveryIDMismatch: a payload signed for one frame id cannot be
// passed off under another.
func TestOpenDeliveryIDMismatch(t *testing.T) {
	msg := protocol.SealDelivery(key, protocol.Delivery{ID: "dlv_1"}, now)
	f, payload, _ := protocol.Decode(msg)
	f.ID = "dlv_2"
	f.Signature = protocol.Sign(key, "dlv_2", f.Timestamp, payload)
	if _, err := protocol.OpenDelivery(key, f, payload, now); !errors.Is(err, protocol.ErrFrame) {
		t.Errorf("got %v, want ErrFrame", err)
	}
}

// FuzzDecode: any message from the network decodes or fails, never
// panics, and a delivery opens only with a valid signature.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"hello", "delivery", "ack", "nack", "refuse", "changes"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".golden"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"type":"delivery","id":"x","timestamp":1,"signature":"v1,"}` + "\n{"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, payload, err := protocol.Decode(msg)
		if err != nil {
			return
		}
		if fr.Type == protocol.TypeDelivery {
			at := time.Unix(fr.Timestamp, 0)
			d, err := protocol.OpenDelivery(key, fr, payload, at)
			if err == nil && (d.ID != fr.ID || protocol.Verify(key, fr.ID, fr.Timestamp, fr.Signature, payload, at, protocol.Tolerance) != nil) {
				t.Fatalf("opened %q under frame %q without a valid signature", d.ID, fr.ID)
			}
		}
	})
}

// FuzzVerify: no signature header, however malformed, panics the check.
func FuzzVerify(f *testing.F) {
	f.Add("dlv_1", now.Unix(), protocol.Sign(key, "dlv_1", now.Unix(), []byte("{}")), []byte("{}"))
	f.Add("", int64(-1), "v1,,, v1", []byte{})
	f.Fuzz(func(t *testing.T, id string, ts int64, sig string, payload []byte) {
		err := protocol.Verify(key, id, ts, sig, payload, now, protocol.Tolerance)
		if err == nil && protocol.Verify(key, id, ts, sig, append(payload, 'x'), now, protocol.Tolerance) == nil {
			t.Fatal("a signature verified two different payloads")
		}
	})
}
