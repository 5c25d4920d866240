package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/internal/waittest"
	"github.com/rerun-build/rerun-desktop/sync/relay"
	"github.com/rerun-build/rerun-desktop/sync/relay/relaytest"
)

func TestRelayThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	rl := relaytest.Start(t, relay.Config{SignupToken: "signup-1"})
	agentID := e.newAgent(t, "Ada")
	base := "/api/workspaces/" + e.ws

	var st map[string]any
	if got := e.do(t, "GET", base+"/relay", "", &st); got != 200 || st["linked"] != false {
		t.Fatalf("status before linking: %d %v", got, st)
	}
	var bad map[string]any
	if got := e.do(t, "POST", base+"/relay", `{"relay_url":"`+rl.URL+`","signup_token":"nope"}`, &bad); got != 400 || bad["error"] == "" {
		t.Errorf("link with a wrong token: %d %v, want 400 saying why", got, bad)
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	if got := e.do(t, "POST", base+"/relay", `{"relay_url":"`+dead.URL+`","signup_token":"x"}`, &bad); got != 502 {
		t.Errorf("link to a relay that is down: %d %v, want 502", got, bad)
	}
	if got := e.do(t, "POST", base+"/relay", `{"relay_url":"`+rl.URL+`","signup_token":"signup-1"}`, &st); got != 201 || st["linked"] != true ||
		st["hook_base"] != rl.URL+"/h/" {
		t.Fatalf("link: %d %v", got, st)
	}
	for _, secretField := range []string{"secret", "sync_key"} {
		if _, ok := st[secretField]; ok {
			t.Errorf("status has %q; it must never leave the app", secretField)
		}
	}

	var created map[string]any
	if got := e.do(t, "POST", base+"/agents/"+agentID+"/triggers", `{"name":"Orders","instruction":"File it."}`, &created); got != 201 {
		t.Fatalf("create trigger: %d %v", got, created)
	}
	local, _ := created["url"].(string)
	public, _ := created["public_url"].(string)
	token := local[strings.LastIndex(local, "/")+1:]
	if public != rl.URL+"/h/"+token {
		t.Fatalf("public_url %q, want the relay's hook base + the token", public)
	}
	view, _ := created["trigger"].(map[string]any)
	if p, _ := view["public_url_prefix"].(string); !strings.HasPrefix(p, rl.URL+"/h/rrh_") || strings.Contains(p, token) {
		t.Errorf("public_url_prefix %q, want the hook base and the token's first characters only", p)
	}

	// The public URL delivers, once the relay has the token's hash.
	deadline := time.Now().Add(waittest.Patience)
	for {
		res, err := http.Post(public, "application/json", strings.NewReader(`{"n":1}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 202 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("public URL: %d after %s, want 202", res.StatusCode, waittest.Patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		e.do(t, "GET", base+"/relay", "", &st)
		if st["last_delivery"] != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %v: no delivery after %s", st, waittest.Patience)
		}
		time.Sleep(20 * time.Millisecond)
	}

	var letters []map[string]any
	if got := e.do(t, "GET", base+"/relay/dead-letters", "", &letters); got != 200 || letters == nil || len(letters) != 0 {
		t.Errorf("dead letters: %d %v, want an empty list", got, letters)
	}
	if got := e.do(t, "POST", base+"/relay/dead-letters/dlv_nope/replay", "", nil); got != 404 {
		t.Errorf("replay of an unknown delivery: %d, want 404", got)
	}
	if got, _, body := e.send(t, "DELETE", base+"/relay", "", nil); got != 204 {
		t.Fatalf("unlink: %d %s", got, body)
	}
	if got := e.do(t, "GET", base+"/agents/"+agentID+"/triggers", "", &letters); got != 200 || len(letters) != 1 || letters[0]["public_url_prefix"] != nil {
		t.Errorf("triggers after unlink: %d %v, want no public prefix", got, letters)
	}
	if got := e.do(t, "DELETE", base+"/relay", "", nil); got != 404 {
		t.Errorf("unlink twice: %d, want 404", got)
	}
}

// Pairing a second device through the API: a code from a linked
// workspace joins it on another home, which fills from the relay; bad
// codes and unknown devices get 400s that say what is wrong.
func TestPairingThroughTheAPI(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	rl := relaytest.Start(t, relay.Config{SignupToken: "signup-1"})
	agentID := a.newAgent(t, "Ada")
	base := "/api/workspaces/" + a.ws
	var out map[string]any
	if got := a.do(t, "POST", base+"/relay/pairing", "", &out); got != 400 || !strings.Contains(out["error"].(string), "link") {
		t.Errorf("pairing before linking: %d %v, want 400 saying to link first", got, out)
	}
	if got := a.do(t, "POST", base+"/relay", `{"relay_url":"`+rl.URL+`","signup_token":"signup-1"}`, &out); got != 201 {
		t.Fatalf("link: %d %v", got, out)
	}
	var pairing struct{ Code string }
	if got := a.do(t, "POST", base+"/relay/pairing", "", &pairing); got != 201 || !strings.HasPrefix(pairing.Code, "rerun-pair-1.") {
		t.Fatalf("pairing: %d %q", got, pairing.Code)
	}
	for name, body := range map[string]string{
		"empty":      `{"code":""}`,
		"not a code": `{"code":"hello"}`,
		"damaged":    `{"code":"` + pairing.Code[:len(pairing.Code)-10] + `"}`,
	} {
		out = nil
		if got := b.do(t, "POST", "/api/relay/join", body, &out); got != 400 || !strings.Contains(out["error"].(string), "pairing code") {
			t.Errorf("join with %s: %d %v, want 400 about the pairing code", name, got, out)
		}
	}
	var info struct{ ID string }
	if got := b.do(t, "POST", "/api/relay/join", `{"code":"`+pairing.Code+`"}`, &info); got != 201 || info.ID != a.ws {
		t.Fatalf("join: %d %+v, want workspace %s", got, info, a.ws)
	}
	deadline := time.Now().Add(waittest.Patience)
	for b.do(t, "GET", "/api/workspaces/"+a.ws+"/agents/"+agentID, "", nil) != 200 {
		if time.Now().After(deadline) {
			t.Fatalf("A's agent did not reach B in %s", waittest.Patience)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var st struct {
		AutomationsDevice bool `json:"automations_device"`
		Sync              *struct{ Enabled bool }
		Devices           []struct{ ID string }
	}
	if got := b.do(t, "GET", "/api/workspaces/"+a.ws+"/relay", "", &st); got != 200 || st.AutomationsDevice || st.Sync == nil || !st.Sync.Enabled {
		t.Errorf("B's status: %d %+v, want sync on and A the automations device", got, st)
	}
	if got := b.do(t, "PUT", "/api/workspaces/"+a.ws+"/relay/automations-device", `{"device_id":"dev_nobody"}`, &out); got != 400 {
		t.Errorf("an unknown automations device: %d %v, want 400", got, out)
	}
}
