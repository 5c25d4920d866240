package run_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// acmeCatalog is a catalog of one app whose server URL and key come from
// variables (as Composio's do), so it can point at an in-test server.
const acmeCatalog = `version: 1
apps:
  - id: acme
    name: Acme
    category: developer
    description: Files tickets in Acme.
    keywords: [tickets]
    homepage: https://acme.example
    auth: api_key
    transport:
      type: http
      url: "${ACME_URL}"
      headers:
        Authorization: "Bearer ${ACME_API_KEY}"
    variables:
      - name: ACME_URL
        label: Server URL
        help: The MCP server's address.
      - name: ACME_API_KEY
        label: API key
        help: Your Acme key.
    skill: |
      ---
      name: acme
      description: File tickets with the Acme app.
      ---
      # Acme app

      Call acme__echo with a message to check the line.
`

// withApps is a runtime with real variables, skills and the apps of
// catalog: the agents' apps reach its runs.
func withApps(t *testing.T, catalog string) (*fixture, *secret.Variables, *connector.Service) {
	t.Helper()
	f := base(t)
	vars := f.variables()
	var cat *connector.Catalog
	if catalog != "" {
		var err error
		if cat, err = connector.ParseCatalog([]byte(catalog)); err != nil {
			t.Fatal(err)
		}
	}
	apps, err := connector.New(connector.Deps{DB: f.db, Workspace: "ws", Vars: vars, Catalog: cat, Bus: f.bus},
		connector.Config{AgentsDir: filepath.Join(f.dir, "agents")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { apps.Close() })
	f.vars, f.apps = vars, apps
	f.skills = skill.New(f.db, skill.Config{AgentsDir: filepath.Join(f.dir, "agents")})
	f.svc = f.serve(newModels(t, f.fake, "anthropic"), run.Config{})
	return f, vars, apps
}

// resultIn is the content of the result of call id in the first of reqs
// that carries it.
func resultIn(reqs []llmtest.Request, id string) string {
	for _, r := range reqs {
		if out := toolResult(r, id); out != "" {
			return out
		}
	}
	return ""
}

func offered(r llmtest.Request, name string) bool {
	return slices.ContainsFunc(r.Tools, func(t llmtest.Tool) bool { return t.Name == name })
}

// A custom MCP server's tool reaches the model as <app>__<tool>: the
// ${VAR} of its header is resolved for the server, and the value is
// masked in the result the model reads. The app's skill is in the index.
func TestAppToolReachesTheModel(t *testing.T) {
	ctx := context.Background()
	f, vars, apps := withApps(t, "")
	srv := connectortest.New(t)
	a := f.agent("Clerk", "connectors", "skills")
	if _, err := vars.Set(ctx, "TICKETS_TOKEN", "s3cret-ticket-token"); err != nil {
		t.Fatal(err)
	}
	if _, err := apps.AddCustom(ctx, a.ID, connector.Custom{Name: "Tickets", URL: srv.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TICKETS_TOKEN}"}}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "e1", Name: "tickets__echo", Args: `{"message":"hello"}`}), llmtest.Text("Echoed."))
	r := f.say(a, "echo hello")
	if r.Status != run.Done {
		t.Fatalf("run = %s %s", r.Status, r.Error)
	}
	reqs := f.fake.Requests()
	if !offered(reqs[0], "tickets__echo") || !offered(reqs[0], "search_apps") {
		t.Errorf("tools offered = %+v, want tickets__echo and search_apps", reqs[0].Tools)
	}
	for _, want := range []string{"## Apps and MCP servers", "- tickets: Tools of Tickets"} {
		if !strings.Contains(reqs[0].System, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if got := srv.AuthHeader(); got != "Bearer s3cret-ticket-token" {
		t.Errorf("server got Authorization %q, want the resolved variable", got)
	}
	out := resultIn(reqs, "e1")
	if !strings.Contains(out, "echo: hello") || !strings.Contains(out, "[redacted:TICKETS_TOKEN]") || strings.Contains(out, "s3cret") {
		t.Errorf("the model read %q, want the echo with the token masked", out)
	}

	// Without the capability, no app tool and no app skill.
	b := f.agent("Plain", "skills")
	if _, err := apps.AddCustom(ctx, b.ID, connector.Custom{Name: "Tickets", URL: srv.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${TICKETS_TOKEN}"}}); err != nil {
		t.Fatal(err)
	}
	f.fake.Script(llmtest.Text("Hi."))
	f.say(b, "hi")
	last := f.fake.Requests()[len(f.fake.Requests())-1]
	if offered(last, "tickets__echo") || offered(last, "search_apps") || strings.Contains(last.System, "tickets:") {
		t.Errorf("an agent without the connectors capability got its app: tools %+v", last.Tools)
	}
}

// The agent finds an app in the catalog and asks for it: the card carries
// the app's setup form, its answer lands in the app's variables, the app
// is tested, and the agent reads which tools it has — already offered in
// the same run — and can load the app's skill.
func TestRequestConnectorSetsUpACatalogApp(t *testing.T) {
	ctx := context.Background()
	f, vars, apps := withApps(t, acmeCatalog)
	srv := connectortest.New(t)
	a := f.agent("Clerk", "connectors", "skills", "human")
	f.fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "s1", Name: "search_apps", Args: `{"query":"tickets"}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "request_connector", Args: `{"connector":"acme","description":"To file the bug you reported."}`}),
	)
	r := f.say(a, "file a ticket")
	if r.Status != run.Paused {
		t.Fatalf("run = %s %s, want paused on the card", r.Status, r.Error)
	}
	if out := resultIn(f.fake.Requests(), "s1"); !strings.Contains(out, "- acme: Acme (developer; sign-in: api_key)") {
		t.Errorf("search_apps = %q, want the acme app", out)
	}
	p := f.openPause(r.ID)
	var card pause.ConnectorRequest
	json.Unmarshal(p.Request, &card)
	var fields []string
	for _, fl := range card.Fields {
		fields = append(fields, fl.Name+":"+fl.Type)
	}
	if card.Connector != "acme" || strings.Join(fields, ",") != "api_key:secret,url:secret" || !strings.Contains(card.Description, "To file the bug") {
		t.Fatalf("card = %+v, want the acme form (api_key, url) with the agent's reason", card)
	}
	list, _ := apps.List(ctx, a.ID)
	if len(list) != 1 || list[0].CatalogID != "acme" || list[0].Status != connector.StatusNeedsSignIn {
		t.Fatalf("installed = %+v, want acme declared, waiting for the sign-in", list)
	}

	f.fake.Script(
		llmtest.Tools(
			llmtest.ToolCall{ID: "e1", Name: "acme__echo", Args: `{"message":"ticket"}`},
			llmtest.ToolCall{ID: "k1", Name: "load_skill", Args: `{"name":"acme"}`},
		),
		llmtest.Tools(llmtest.ToolCall{ID: "c2", Name: "request_connector", Args: `{"connector":"Acme"}`}),
		llmtest.Text("Filed."),
	)
	values, _ := json.Marshal(map[string]any{"values": map[string]string{"url": srv.URL + "/mcp", "api_key": "acme-key-42"}})
	r = f.answer(p, string(values))
	if r.Status != run.Done {
		t.Fatalf("run = %s %s", r.Status, r.Error)
	}
	if v, _ := vars.Lookup("ACME_API_KEY"); v != "acme-key-42" {
		t.Errorf("ACME_API_KEY = %q, want the card's value", v)
	}
	reqs := f.fake.Requests()
	res := resultIn(reqs, "c1")
	if !strings.Contains(res, "Acme is connected") || !strings.Contains(res, "acme__echo") || !strings.Contains(res, "load_skill") || strings.Contains(res, "acme-key-42") {
		t.Errorf("request_connector result = %q, want the app connected with its tools", res)
	}
	if !offered(reqs[2], "acme__echo") || !strings.Contains(reqs[2].System, "- acme: File tickets with the Acme app.") {
		t.Errorf("after the card the run lacks the app's tool or skill: tools %+v", reqs[2].Tools)
	}
	if out := resultIn(reqs, "e1"); out != "echo: ticket (Authorization: Bearer [redacted:ACME_API_KEY])" {
		t.Errorf("acme__echo = %q", out)
	}
	if out := resultIn(reqs, "k1"); !strings.Contains(out, "Call acme__echo with a message") {
		t.Errorf("load_skill acme = %q, want the app's skill", out)
	}
	// An app with nothing left to fill needs no card.
	if out := resultIn(reqs, "c2"); !strings.Contains(out, "No card needed: Acme is already set up. Acme is connected.") {
		t.Errorf("request_connector on a set-up app = %q", out)
	}
	if ps, _ := f.svc.Pauses(ctx, run.PauseFilter{RunID: r.ID}); len(ps) != 1 {
		t.Errorf("%d cards raised, want only the first", len(ps))
	}
}

// A card naming no app is the agent's own form, as before.
func TestRequestConnectorForAnUnknownIntegration(t *testing.T) {
	f, _, apps := withApps(t, acmeCatalog)
	a := f.agent("Clerk", "connectors", "human")
	f.fake.Script(llmtest.Tools(llmtest.ToolCall{ID: "c1", Name: "request_connector",
		Args: `{"connector":"Intranet","fields":[{"name":"token","type":"secret","required":true}]}`}))
	r := f.say(a, "connect the intranet")
	var card pause.ConnectorRequest
	json.Unmarshal(f.openPause(r.ID).Request, &card)
	if card.Connector != "Intranet" || len(card.Fields) != 1 || card.Fields[0].Name != "token" {
		t.Errorf("card = %+v, want the agent's own form", card)
	}
	if list, _ := apps.List(context.Background(), a.ID); len(list) != 0 {
		t.Errorf("installed %+v, want nothing", list)
	}
}
