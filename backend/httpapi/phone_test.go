package httpapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

// Settings → Phone through the API: no pairing before a relay link; then a
// one-time link with a QR code, an empty list, and 404 for a phone that is
// not paired.
func TestPhoneThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	var out map[string]any
	if got := e.do(t, "POST", base+"/phone/pairing", "", &out); got != 409 || !strings.Contains(out["error"].(string), "relay") {
		t.Errorf("pair before linking: %d %v, want 409 about the relay", got, out)
	}
	rl := relaytest.Start(t, relay.Config{SignupToken: "signup-1"})
	if got := e.do(t, "POST", base+"/relay", `{"relay_url":"`+rl.URL+`","signup_token":"signup-1"}`, &out); got != 201 {
		t.Fatalf("link: %d %v", got, out)
	}
	var inv map[string]any
	if got := e.do(t, "POST", base+"/phone/pairing", "", &inv); got != 201 {
		t.Fatalf("pairing: %d %v", got, inv)
	}
	link, _ := inv["link"].(string)
	qr, _ := inv["qr"].(string)
	expires, _ := time.Parse(time.RFC3339, inv["expires_at"].(string))
	if !strings.HasPrefix(link, rl.URL+"/p/#pair=") || !strings.HasPrefix(qr, "data:image/png;base64,") || time.Until(expires) > 11*time.Minute {
		t.Errorf("invite %v", inv)
	}
	var list []map[string]any
	if got := e.do(t, "GET", base+"/phone/devices", "", &list); got != 200 || len(list) != 0 {
		t.Errorf("devices: %d %v", got, list)
	}
	if got := e.do(t, "DELETE", base+"/phone/devices/ph_nope", "", &out); got != 404 {
		t.Errorf("remove an unknown phone: %d %v, want 404", got, out)
	}
}
