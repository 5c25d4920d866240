package protocol_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/sync/protocol"
)

var (
	hexKey = strings.Repeat("ab", 32)
	device = "dev_01kb1q9x6p"
)

func TestCheckChange(t *testing.T) {
	ok := protocol.Change{Key: hexKey, Device: device, Body: []byte{1}}
	with := func(f func(*protocol.Change)) protocol.Change { c := ok; f(&c); return c }
	for _, tc := range []struct {
		name string
		c    protocol.Change
		want string // in the error; "" for none
	}{
		{"valid", ok, ""},
		{"body of MaxChange", with(func(c *protocol.Change) { c.Body = make([]byte, protocol.MaxChange) }), ""},
		{"hex device id", with(func(c *protocol.Change) { c.Device = "dev_" + strings.Repeat("f", 60) }), ""},
		{"seq set", with(func(c *protocol.Change) { c.Seq = 3 }), "the relay assigns it"},
		{"key too short", with(func(c *protocol.Change) { c.Key = hexKey[:63] }), "64 lowercase hex"},
		{"key upper case", with(func(c *protocol.Change) { c.Key = strings.ToUpper(hexKey) }), "64 lowercase hex"},
		{"key not hex", with(func(c *protocol.Change) { c.Key = strings.Repeat("g", 64) }), "64 lowercase hex"},
		{"no device", with(func(c *protocol.Change) { c.Device = "" }), "device"},
		{"device without prefix", with(func(c *protocol.Change) { c.Device = "01kb1q9x6p" }), "device"},
		{"device prefix only", with(func(c *protocol.Change) { c.Device = "dev_" }), "device"},
		{"device too long", with(func(c *protocol.Change) { c.Device = "dev_" + strings.Repeat("a", 61) }), "device"},
		{"device with a dash", with(func(c *protocol.Change) { c.Device = "dev_a-b" }), "device"},
		{"empty body", with(func(c *protocol.Change) { c.Body = nil }), "empty"},
		{"body over MaxChange", with(func(c *protocol.Change) { c.Body = make([]byte, protocol.MaxChange+1) }), "over the 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.CheckChange(tc.c)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				return
			}
			if !errors.Is(err, protocol.ErrChange) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrChange saying %q", err, tc.want)
			}
		})
	}
}

func TestCheckPush(t *testing.T) {
	one := protocol.Change{Key: hexKey, Device: device, Body: []byte{1}}
	many := func(n, size int) []protocol.Change {
		out := make([]protocol.Change, n)
		for i := range out {
			out[i] = one
			out[i].Body = make([]byte, size)
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		changes []protocol.Change
		want    string
	}{
		{"one", many(1, 1), ""},
		{"MaxPush", many(protocol.MaxPush, 1), ""},
		{"empty", nil, "no changes"},
		{"over MaxPush", many(protocol.MaxPush+1, 1), "at most 500"},
		{"over MaxPushBytes", many(protocol.MaxPushBytes/protocol.MaxChange+1, protocol.MaxChange), "at most 16 MiB"},
		{"a bad change names its index", append(many(2, 1), protocol.Change{Key: "x"}), "change 2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := protocol.CheckPush(protocol.ChangePush{Changes: tc.changes})
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzCheckChange: the relay checks every pushed change; whatever it
// lets through has a key and device of the documented shape and a body in
// bounds.
func FuzzCheckChange(f *testing.F) {
	f.Add(int64(0), hexKey, device, []byte("sealed"))
	f.Add(int64(-1), "", "dev_", []byte{})
	f.Add(int64(0), strings.ToUpper(hexKey), "dev_ü", []byte{0})
	f.Fuzz(func(t *testing.T, seq int64, key, dev string, body []byte) {
		c := protocol.Change{Seq: seq, Key: key, Device: dev, Body: body}
		if protocol.CheckChange(c) != nil {
			return
		}
		if seq != 0 || len(key) != 64 || strings.Trim(key, "0123456789abcdef") != "" ||
			!strings.HasPrefix(dev, "dev_") || len(dev) > protocol.MaxDevice || len(dev) < 5 ||
			len(body) == 0 || len(body) > protocol.MaxChange {
			t.Fatalf("accepted %+v", c)
		}
	})
}
