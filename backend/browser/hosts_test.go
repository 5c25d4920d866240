package browser

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// A variable bound to other hosts is not typed into a page of this one.
func TestTypeVariableBoundToOtherHosts(t *testing.T) {
	s, m, env := setup(t, "hosts")
	box, err := secret.NewBox(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	v, err := secret.NewVariables(storetest.Open(t), box, "ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	value, hosts := "bound-password-42", []string{"login.example.com"}
	if _, err := v.Update(ctx, "PW", secret.Change{Value: &value, Hosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	env.Vars = v

	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/form"})
	snap := must(t, m, env, "browser_snapshot", nil)
	note := ref(t, snap, `textbox "A note"`)
	mustFail(t, m, env, "browser_type", map[string]any{"element": note, "text": "x ${PW}"},
		"nothing was typed into ["+strconv.Itoa(note)+"]")
	msg := mustFail(t, m, env, "browser_type", map[string]any{"element": note, "text": "${PW}"},
		"the variable PW may only be sent to login.example.com, and this would send it to 127.0.0.1")
	if strings.Contains(msg, value) {
		t.Fatalf("the error shows the value: %s", msg)
	}
	if l := line(must(t, m, env, "browser_snapshot", nil), note); !strings.Contains(l, `value=""`) {
		t.Fatalf("after the refusal the field reads %q, want it untouched", l)
	}

	hosts = []string{"127.0.0.1"}
	if _, err := v.Update(ctx, "PW", secret.Change{Hosts: &hosts}); err != nil {
		t.Fatal(err)
	}
	must(t, m, env, "browser_type", map[string]any{"element": note, "text": "${PW}"})
	if l := line(must(t, m, env, "browser_snapshot", nil), note); !strings.Contains(l, `value="[redacted:PW]"`) {
		t.Fatalf("bound to this host the field reads %q, want the value typed (and masked)", l)
	}
}

// A workspace variable's value the page shows (never typed, so only the
// workspace knows it) is masked before the snapshot is cut: where the page
// is cut at MaxSnapshot and where its title is clipped, no part of it
// shows.
func TestSnapshotMasksBeforeItCuts(t *testing.T) {
	_, m, env := setup(t, "cut")
	box, err := secret.NewBox(bytes.Repeat([]byte{6}, 32))
	if err != nil {
		t.Fatal(err)
	}
	v, err := secret.NewVariables(storetest.Open(t), box, "ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	const value = "CANARY-straddle-0123456789abcdef"
	if _, err := v.Set(context.Background(), "CANARY", value); err != nil {
		t.Fatal(err)
	}
	env.Vars = v
	var mu sync.Mutex
	body := strings.Repeat("a", 40000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s%s</title><p>%s</p>", strings.Repeat("t", 140), value, body)
	}))
	defer srv.Close()

	must(t, m, env, "browser_open", map[string]any{"url": srv.URL + "/page"})
	first := must(t, m, env, "browser_snapshot", nil)
	head := strings.Index(first, "aaaa")
	if head < 0 {
		t.Fatalf("snapshot lacks the text:\n%.500s", first)
	}
	mu.Lock()
	at := MaxSnapshot - head - len(value)/2 // the value straddles the cut
	body = body[:at] + value + body[at+len(value):]
	mu.Unlock()
	must(t, m, env, "browser_open", map[string]any{"url": srv.URL + "/page"})
	out := must(t, m, env, "browser_snapshot", nil)
	if !strings.Contains(out, "[snapshot cut here") {
		t.Fatalf("the snapshot was not cut:\n%.300s", out)
	}
	rest := must(t, m, env, "browser_snapshot", map[string]any{"offset": len(out) - len(out[strings.LastIndex(out, "\n[snapshot cut here"):])})
	for _, part := range []string{out, rest} {
		for i := 0; i+8 <= len(value); i++ {
			if strings.Contains(part, value[i:i+8]) {
				t.Fatalf("a piece of the value (%q) shows:\n%.300s\n…\n%s", value[i:i+8], part, part[max(0, len(part)-300):])
			}
		}
	}
	if !strings.Contains(out, "t[redacted") {
		t.Errorf("the title's value is not masked:\n%.300s", out)
	}
}
