package httpapi_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
)

// FuzzAgentJSON throws arbitrary bodies at agent create and update. Whatever
// arrives, the answer is a client error or success — never a 500 or a crash —
// and a refused update leaves the stored agent exactly as it was.
func FuzzAgentJSON(f *testing.F) {
	for _, s := range []string{
		`{"name":"Scout"}`,
		`{"name":"Scout","handle":"scout","soul":"# hi","capabilities":["files","shell"]}`,
		`{"name":"","provider":"anthropic","model":"claude"}`,
		`{"soul":"\u0000\ud800"}`,
		`{"capabilities":null}`,
		`{"box_id":"bx_nope"}`,
		`{"handle":"x"}`,
		`{"name":["a"]}`,
		`{"name":"a"}{"name":"b"}`,
		`null`, `[]`, `"x"`, `{`, ``, `{"name":"` + strings.Repeat("é", 100) + `"}`,
	} {
		f.Add(s)
	}
	e := newEnv(f)
	base := "/api/workspaces/" + e.ws
	var keep agent.Agent
	if got := e.do(f, "POST", base+"/agents", `{"name":"Keeper","soul":"original","box_id":"`+e.box+`"}`, &keep); got != 201 {
		f.Fatalf("seed agent: %d", got)
	}
	f.Fuzz(func(t *testing.T, body string) {
		created := strings.Replace(body, `"box_id":"bx_nope"`, `"box_id":"`+e.box+`"`, 1)
		var a agent.Agent
		switch got := e.do(t, "POST", base+"/agents", created, &a); got {
		case 201:
			if err := agent.ValidateHandle(a.Handle); err != nil {
				t.Errorf("created agent with invalid handle %q", a.Handle)
			}
			e.do(t, "DELETE", base+"/agents/"+a.ID, "", nil)
		case 400, 404, 409, 413:
		default:
			t.Errorf("create with %q: status %d", body, got)
		}

		before := keep
		w, _ := e.home.Workspace(e.ws)
		before, _ = w.Agents.Get(context.Background(), keep.ID)
		var upd agent.Agent
		switch got := e.do(t, "PATCH", base+"/agents/"+keep.ID, body, &upd); got {
		case 200:
			if upd.Handle != keep.Handle {
				t.Errorf("update with %q changed the handle to %q", body, upd.Handle)
			}
		case 400, 404, 409, 413:
			after, _ := w.Agents.Get(context.Background(), keep.ID)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("refused update %q changed the agent:\n%+v\n%+v", body, before, after)
			}
		default:
			t.Errorf("update with %q: status %d", body, got)
		}
	})
}
