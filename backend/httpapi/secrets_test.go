package httpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
)

// The app refuses credentials in what agents read with a code its confirm
// dialog acts on; the person's confirmation lets a look-alike through, never
// a variable's value.
func TestSecretsRefusedInStoredText(t *testing.T) {
	e := newEnv(t)
	base := "/api/workspaces/" + e.ws
	w, _ := e.home.Workspace(e.ws)
	if _, err := w.Variables.Set(context.Background(), "GITHUB_TOKEN", "tok-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	var a agent.Agent
	if got := e.do(t, "POST", base+"/agents", `{"name":"Keeper","box_id":"`+e.box+`","soul":"v1"}`, &a); got != 201 {
		t.Fatalf("create agent: %d", got)
	}
	var out struct{ Error, Code string }
	const lookAlike = `{"soul":"the sample key AKIAIOSFODNN7EXAMPLE from the docs"}`
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID, lookAlike, &out); got != 400 || out.Code != "credential_like" ||
		!strings.Contains(out.Error, "the soul holds what looks like an AWS access key (AKIAIO…); a soul never carries credentials") {
		t.Errorf("credential in a soul: %d %+v, want 400 credential_like", got, out)
	}
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID+"?allow_credential_like=true", lookAlike, &a); got != 200 || !strings.Contains(a.Soul, "AKIAIOSFODNN7EXAMPLE") {
		t.Errorf("confirmed look-alike: %d %q, want it stored", got, a.Soul)
	}
	out.Code = ""
	if got := e.do(t, "PATCH", base+"/agents/"+a.ID+"?allow_credential_like=true", `{"soul":"tok-0123456789abcdef"}`, &out); got != 400 || out.Code != "" ||
		!strings.Contains(out.Error, "write ${GITHUB_TOKEN} instead") {
		t.Errorf("variable value in a soul: %d %+v, want 400 saying to write ${GITHUB_TOKEN}", got, out)
	}
	for name, req := range map[string][2]string{
		"skill":    {"PUT", base + "/agents/" + a.ID + "/skills/deploy"},
		"memory":   {"POST", base + "/agents/" + a.ID + "/memories"},
		"brain":    {"POST", base + "/brain"},
		"schedule": {"POST", base + "/agents/" + a.ID + "/schedules"},
		"trigger":  {"POST", base + "/agents/" + a.ID + "/triggers"},
	} {
		body := map[string]string{
			"skill":    `{"skill_md":"---\nname: deploy\ndescription: d\n---\nuse ghp_` + strings.Repeat("a1", 18) + `"}`,
			"memory":   `{"text":"key sk-proj-abc123def456ghi789"}`,
			"brain":    `{"title":"Keys","body":"xoxb-123456789012-abc"}`,
			"schedule": `{"name":"Daily","instruction":"use tok-0123456789abcdef","kind":"cron","cron":"@daily"}`,
			"trigger":  `{"name":"Hook","instruction":"whsec_abc123def456ghi789"}`,
		}[name]
		out = struct{ Error, Code string }{}
		if got := e.do(t, req[0], req[1], body, &out); got != 400 || !strings.Contains(out.Error, "never carries") {
			t.Errorf("%s: %d %+v, want 400 refusing the secret", name, got, out)
		}
	}
}
