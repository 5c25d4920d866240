package connector_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

func TestCatalogEntriesAreWellFormed(t *testing.T) {
	cat, err := connector.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	if cat.Version < 1 {
		t.Errorf("catalog version %d, want ≥ 1", cat.Version)
	}
	if n := len(cat.Apps); n < 30 {
		t.Errorf("catalog has %d apps, want at least 30", n)
	}
	ids := map[string]bool{}
	for _, a := range cat.Apps {
		t.Run(a.ID, func(t *testing.T) {
			if ids[a.ID] {
				t.Errorf("id %q repeated", a.ID)
			}
			ids[a.ID] = true
			// The setup card's secret field for each variable is stored in
			// exactly that variable by the card's own storage rule.
			form := pause.ConnectorRequest{Connector: a.ID}
			prefix := strings.ToUpper(strings.ReplaceAll(a.ID, "-", "_")) + "_"
			for _, v := range a.Variables {
				field := strings.ToLower(strings.TrimPrefix(v.Name, prefix))
				if got := form.SecretVariable(field); got != v.Name {
					t.Errorf("field %q is stored in %s, want %s", field, got, v.Name)
				}
			}
			sk, err := skill.Parse([]byte(a.Skill))
			if err != nil {
				t.Fatalf("skill does not parse: %v", err)
			}
			if sk.Name != a.ID || sk.Description == "" {
				t.Errorf("skill name %q description %q, want name %q and a description", sk.Name, sk.Description, a.ID)
			}
			switch a.Transport.Type {
			case connector.TransportStdio:
				if !slices.Contains([]string{"npx", "uvx"}, a.Transport.Command) {
					t.Errorf("command %q, want npx or uvx (a package people install from a registry)", a.Transport.Command)
				}
				if a.Transport.Command == "npx" && (len(a.Transport.Args) == 0 || a.Transport.Args[0] != "-y") {
					t.Errorf("npx args %q must start with -y so it never waits for a prompt", a.Transport.Args)
				}
			case connector.TransportHTTP, connector.TransportSSE:
				if !strings.HasPrefix(a.Transport.URL, "https://") && !strings.HasPrefix(a.Transport.URL, "${") {
					t.Errorf("url %q is not https", a.Transport.URL)
				}
			}
		})
	}
	composio, ok := cat.Get("composio")
	if !ok {
		t.Fatal("no composio entry")
	}
	var names []string
	for _, v := range composio.Variables {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"COMPOSIO_MCP_URL", "COMPOSIO_API_KEY"}) || composio.Transport.URL != "${COMPOSIO_MCP_URL}" {
		t.Errorf("composio variables %v url %q, want COMPOSIO_MCP_URL (the URL) and COMPOSIO_API_KEY", names, composio.Transport.URL)
	}
}

func TestCatalogCheckRefusesBrokenEntries(t *testing.T) {
	entry := func(edit string) string {
		base := `version: 1
apps:
  - id: demo
    name: Demo
    category: developer
    description: A demo.
    homepage: https://example.com
    auth: api_key
    transport:
      type: stdio
      command: npx
      args: ["-y", "demo-mcp"]
      env:
        DEMO_KEY: ${DEMO_API_KEY}
    variables:
      - name: DEMO_API_KEY
        label: Key
        help: The key.
    skill: |
      ---
      name: demo
      description: Demo app.
      ---
      Use demo__run.
`
		if edit == "" {
			return base
		}
		parts := strings.SplitN(edit, "=>", 2)
		return strings.Replace(base, parts[0], parts[1], 1)
	}
	if _, err := connector.ParseCatalog([]byte(entry(""))); err != nil {
		t.Fatalf("the base entry must be valid: %v", err)
	}
	tests := []struct {
		name, edit, want string
	}{
		{"undeclared variable", "${DEMO_API_KEY}=>${DEMO_OTHER}", "not in variables"},
		{"variable without the app prefix", "name: DEMO_API_KEY=>name: API_KEY", "must be DEMO_"},
		{"bad id", "id: demo=>id: Demo_App", "id must be"},
		{"unknown category", "category: developer=>category: toys", "category"},
		{"skill named otherwise", "      name: demo\n=>      name: other\n", "skill name"},
		{"skill without front matter", "      ---\n      name: demo=>      name: demo", "skill"},
		{"skill not naming a tool", "Use demo__run.=>Use it.", "never names a tool"},
		{"stdio without command", "command: npx=>command: \"\"", "needs a command"},
		{"remote with plain http", "type: stdio\n      command: npx\n      args: [\"-y\", \"demo-mcp\"]\n      env:\n        DEMO_KEY: ${DEMO_API_KEY}=>type: http\n      url: http://example.com/mcp\n      headers:\n        X-Key: ${DEMO_API_KEY}", "https://"},
		{"unknown auth", "auth: api_key=>auth: magic", "auth"},
		{"unknown field", "category: developer=>category: developer\n    colour: red", "colour"},
		{"malformed reference", "${DEMO_API_KEY}=>${DEMO_API_KEY", "not closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := entry(tc.edit)
			if text == entry("") {
				t.Fatalf("edit %q changed nothing", tc.edit)
			}
			_, err := connector.ParseCatalog([]byte(text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
	dup := entry("") + strings.SplitN(entry(""), "apps:\n", 2)[1]
	if _, err := connector.ParseCatalog([]byte(dup)); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate id: got %v, want an error saying it appears twice", err)
	}
}

func TestSearch(t *testing.T) {
	cat, err := connector.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		query     string
		wantFirst string
		wantIn    []string
		wantNone  bool
	}{
		{query: "github", wantFirst: "github"},
		{query: "GitHub", wantFirst: "github"},
		{query: "stri", wantFirst: "stripe"},
		{query: "payments", wantFirst: "stripe"},
		{query: "jira", wantFirst: "atlassian"},
		{query: "gmail", wantFirst: "gmail", wantIn: []string{"composio"}},
		{query: "web search", wantIn: []string{"brave-search", "exa", "tavily"}},
		{query: "browser", wantIn: []string{"playwright"}},
		{query: "database sql", wantIn: []string{"postgres", "supabase"}},
		{query: "no-such-thing-anywhere", wantNone: true},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := cat.Search(tc.query, 0)
			var ids []string
			for _, a := range got {
				ids = append(ids, a.ID)
			}
			if tc.wantNone {
				if len(ids) != 0 {
					t.Errorf("got %v, want nothing", ids)
				}
				return
			}
			if len(ids) == 0 {
				t.Fatalf("got nothing, want results")
			}
			if tc.wantFirst != "" && ids[0] != tc.wantFirst {
				t.Errorf("got first %q (%v), want %q", ids[0], ids, tc.wantFirst)
			}
			for _, w := range tc.wantIn {
				if !slices.Contains(ids, w) {
					t.Errorf("got %v, want it to include %q", ids, w)
				}
			}
		})
	}
	if all := cat.Search("", 0); len(all) != len(cat.Apps) {
		t.Errorf("empty query: got %d apps, want all %d", len(all), len(cat.Apps))
	}
	if some := cat.Search("", 5); len(some) != 5 {
		t.Errorf("limit 5: got %d apps", len(some))
	}
}

func TestFind(t *testing.T) {
	cat, err := connector.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	for ref, want := range map[string]string{"github": "github", "GitHub": "github", " hugging face ": "hugging-face",
		"Hugging-Face": "hugging-face", "git hub": "", "": ""} {
		if a, ok := cat.Find(ref); a.ID != want || ok != (want != "") {
			t.Errorf("Find(%q) = %q, %v; want %q", ref, a.ID, ok, want)
		}
	}
}
