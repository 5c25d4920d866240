package connector_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

func TestInstallCatalogAppReturnsItsForm(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	events, stop := f.bus.Subscribe()
	defer stop()

	inst, err := f.svc.Install(ctx, agentA, "slack")
	if err != nil {
		t.Fatal(err)
	}
	c := inst.Connector
	if c.CatalogID != "slack" || c.Slug != "slack" || c.Auth != connector.AuthAPIKey || c.Status != connector.StatusNeedsSignIn {
		t.Fatalf("got %+v", c)
	}
	if !slices.Equal(c.Missing, []string{"SLACK_BOT_TOKEN"}) {
		t.Errorf("missing %v", c.Missing)
	}
	if ev := <-events; ev.Kind != connector.KindCreated || ev.ID != c.ID || ev.Agent != agentA {
		t.Errorf("got event %+v", ev)
	}
	form := inst.Form
	if form == nil || form.Connector != "slack" || len(form.Fields) != 1 {
		t.Fatalf("got form %+v", form)
	}
	// The card is valid as it is, and each secret field is stored by the
	// card's own rule in the variable the app references.
	req := *form
	if err := req.Check(); err != nil {
		t.Fatalf("the form is not a valid connector card: %v", err)
	}
	for _, fl := range form.Fields {
		if fl.Type != pause.FieldSecret || !fl.Required || fl.Help == "" {
			t.Errorf("field %+v", fl)
		}
		if v := form.SecretVariable(fl.Name); !slices.Contains(c.Variables, v) {
			t.Errorf("field %s is stored in %s, which the app does not reference (%v)", fl.Name, v, c.Variables)
		}
	}
	if strings.Contains(form.Fields[0].Help, "https://api.slack.com/apps") == false {
		t.Errorf("help %q does not say where to get the token", form.Fields[0].Help)
	}

	// Installing again returns the same app.
	again, err := f.svc.Install(ctx, agentA, "slack")
	if err != nil || again.Connector.ID != c.ID {
		t.Errorf("second install: got %v, %v; want the same app", again.Connector.ID, err)
	}
	// Per agent: B has nothing.
	if list, _ := f.svc.List(ctx, agentB); len(list) != 0 {
		t.Errorf("agent B has %d apps", len(list))
	}

	// Not filled: refused; filled: the form asks for nothing more.
	c, err = f.svc.SignIn(ctx, c.ID, map[string]string{"bot_token": ""})
	if err == nil {
		t.Fatal("a form without its required field was accepted")
	}
	c, err = f.svc.SignIn(ctx, inst.Connector.ID, map[string]string{"bot_token": "xoxb-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Missing) != 0 || c.Status != connector.StatusUntested {
		t.Errorf("after sign-in: missing %v status %q", c.Missing, c.Status)
	}
	refill, _ := f.svc.Form(ctx, c.ID)
	for _, fl := range refill.Fields {
		if fl.Required || fl.Placeholder == "" {
			t.Errorf("a field already set should be optional with a placeholder: %+v", fl)
		}
	}
	if _, err := f.svc.SignIn(ctx, c.ID, map[string]string{"password": "x"}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("unknown field: got %v", err)
	}
}

func TestInstallErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	tests := []struct {
		name    string
		agent   string
		app     string
		wantErr error
	}{
		{"unknown app", agentA, "no-such-app", fault.ErrNotFound},
		{"unknown agent", "ag_nobody", "github", fault.ErrNotFound},
		{"bad agent id", "../x", "github", fault.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := f.svc.Install(ctx, tc.agent, tc.app); !errors.Is(err, tc.wantErr) {
				t.Errorf("got %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestAddCustomValidation(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	if _, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "Mine", URL: "https://mcp.example.com/mcp"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Install(ctx, agentA, "time"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		custom  connector.Custom
		wantErr error
		want    string
	}{
		{"no name", connector.Custom{URL: "https://x.example/mcp"}, fault.ErrInvalid, "name"},
		{"only symbols in name", connector.Custom{Name: "!!!", URL: "https://x.example/mcp"}, fault.ErrInvalid, "letters"},
		{"both url and command", connector.Custom{Name: "a", URL: "https://x.example/mcp", Command: "npx"}, fault.ErrInvalid, "not both"},
		{"neither", connector.Custom{Name: "a"}, fault.ErrInvalid, "either"},
		{"ftp url", connector.Custom{Name: "a", URL: "ftp://x.example/mcp"}, fault.ErrInvalid, "https://"},
		{"literal token in a header", connector.Custom{Name: "a", URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": "Bearer abc123"}}, fault.ErrInvalid, "workspace variable"},
		{"literal key in env", connector.Custom{Name: "a", Command: "npx", Env: map[string]string{"OPENAI_API_KEY": "sk-123"}}, fault.ErrInvalid, "workspace variable"},
		{"header with a line break", connector.Custom{Name: "a", URL: "https://x.example/mcp", Headers: map[string]string{"X-Team": "a\r\nEvil: 1"}}, fault.ErrInvalid, "line break"},
		{"bad env name", connector.Custom{Name: "a", Command: "npx", Env: map[string]string{"A-B": "1"}}, fault.ErrInvalid, "environment variable name"},
		{"malformed reference", connector.Custom{Name: "a", URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN"}}, fault.ErrInvalid, "not closed"},
		{"lower-case variable", connector.Custom{Name: "a", URL: "https://x.example/mcp", Headers: map[string]string{"Authorization": "Bearer ${token}"}}, fault.ErrInvalid, "UPPER_CASE"},
		{"oauth on a command", connector.Custom{Name: "a", Command: "npx", OAuth: true}, fault.ErrInvalid, "remote"},
		{"prefix taken", connector.Custom{Name: "MINE", URL: "https://y.example/mcp"}, fault.ErrConflict, "mine"},
		{"catalog app's prefix taken", connector.Custom{Name: "Time", Command: "npx"}, fault.ErrConflict, "time"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.svc.AddCustom(ctx, agentA, tc.custom)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %v mentioning %q", err, tc.wantErr, tc.want)
			}
		})
	}
	// A local server on plain http is fine, with a variable reference.
	inst, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "Local dev", URL: "http://127.0.0.1:3000/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${LOCAL_DEV_TOKEN}", "X-Team": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Connector.Transport.Headers["Authorization"] != "Bearer ${LOCAL_DEV_TOKEN}" || inst.Connector.Auth != connector.AuthAPIKey {
		t.Errorf("got %+v", inst.Connector)
	}
}

func TestUninstallAndListAll(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	a, err := f.svc.Install(ctx, agentA, "time")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Install(ctx, agentB, "time"); err != nil {
		t.Fatal(err)
	}
	if all, _ := f.svc.List(ctx, ""); len(all) != 2 {
		t.Fatalf("workspace lists %d apps, want 2", len(all))
	}
	if err := f.svc.Uninstall(ctx, a.Connector.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Uninstall(ctx, a.Connector.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("second uninstall: got %v", err)
	}
	if list, _ := f.svc.List(ctx, agentA); len(list) != 0 {
		t.Errorf("agent A still has %d apps", len(list))
	}
	if list, _ := f.svc.List(ctx, agentB); len(list) != 1 {
		t.Errorf("agent B has %d apps, want its own 1", len(list))
	}
}

func TestSkillsOfInstalledApps(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, connector.Config{})
	ts := newTestServer()
	srv := ts.serveHTTP(t, "")
	if _, err := f.svc.Install(ctx, agentA, "brave-search"); err != nil {
		t.Fatal(err)
	}
	inst, err := f.svc.AddCustom(ctx, agentA, connector.Custom{Name: "Acme Tools", URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Test(ctx, inst.Connector.ID); err != nil {
		t.Fatal(err)
	}
	// Not signed in: neither its tools nor its skill are offered.
	if got := f.svc.Skills(agentA); len(got) != 1 || got[0].Name != "acme-tools" {
		t.Fatalf("before sign-in: got skills %+v, want only acme-tools", got)
	}
	f.set(t, "BRAVE_SEARCH_API_KEY", "brave-key")
	got := f.svc.Skills(agentA)
	if len(got) != 2 || got[0].Name != "brave-search" || got[1].Name != "acme-tools" || got[0].Description == "" {
		t.Fatalf("got skills %+v", got)
	}
	if len(f.svc.Skills(agentB)) != 0 {
		t.Error("agent B sees agent A's app skills")
	}
	sk, err := f.svc.LoadSkill(ctx, agentA, "brave-search")
	if err != nil || !strings.Contains(sk.Body, "brave_search__brave_web_search") {
		t.Errorf("got %v, %v", sk.Body, err)
	}
	custom, err := f.svc.LoadSkill(ctx, agentA, "acme-tools")
	if err != nil || !strings.Contains(custom.Body, "acme_tools__greet") || !strings.Contains(custom.Body, "Greets someone") {
		t.Errorf("custom skill: got %q, %v", custom.Body, err)
	}
	if _, err := f.svc.LoadSkill(ctx, agentA, "github"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("uninstalled app's skill: got %v", err)
	}
}
