package browser

import (
	"bytes"
	"context"
	"strconv"
	"strings"
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
