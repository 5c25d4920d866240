package tool

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestCatalogSchemas(t *testing.T) {
	known := map[string]bool{}
	for _, c := range agent.Capabilities {
		known[c.ID] = true
	}
	names := map[string]bool{}
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for _, tl := range Catalog() {
		t.Run(tl.Name, func(t *testing.T) {
			if !snake.MatchString(tl.Name) {
				t.Errorf("name %q is not snake_case", tl.Name)
			}
			if names[tl.Name] {
				t.Errorf("name %q is used twice", tl.Name)
			}
			names[tl.Name] = true
			if !known[tl.Family] {
				t.Errorf("family %q is not a capability id of agent.Capabilities", tl.Family)
			}
			if len(tl.Description) < 40 || tl.Run == nil {
				t.Errorf("description %q is too short or Run is nil", tl.Description)
			}
			var s struct {
				Type                 string                     `json:"type"`
				Properties           map[string]json.RawMessage `json:"properties"`
				Required             []string                   `json:"required"`
				AdditionalProperties *bool                      `json:"additionalProperties"`
			}
			if err := json.Unmarshal(tl.Schema, &s); err != nil {
				t.Fatalf("schema is not valid JSON: %v\n%s", err, tl.Schema)
			}
			if s.Type != "object" {
				t.Errorf("schema type is %q, want object", s.Type)
			}
			if s.Properties == nil || s.Required == nil {
				t.Errorf("schema must list properties and required (even if empty)")
			}
			if s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("schema must set additionalProperties false")
			}
			for _, r := range s.Required {
				if _, ok := s.Properties[r]; !ok {
					t.Errorf("required %q is not a property", r)
				}
			}
			for name, p := range s.Properties {
				var prop struct {
					Type        any    `json:"type"`
					Description string `json:"description"`
				}
				if err := json.Unmarshal(p, &prop); err != nil || prop.Type == nil || prop.Description == "" {
					t.Errorf("property %q needs a type and a description: %s", name, p)
				}
			}
		})
	}
}

// The schemas and descriptions the model sees, reviewed as one file.
func TestCatalogGolden(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("run_command names the platform's shell")
	}
	var b bytes.Buffer
	for _, tl := range Catalog() {
		var schema bytes.Buffer
		json.Indent(&schema, tl.Schema, "", "  ")
		b.WriteString("## " + tl.Name + " (" + tl.Family + ")\n\n" + tl.Description + "\n\n" + schema.String() + "\n\n")
	}
	b.WriteString("## Guide(all)\n\n" + Guide([]string{"files", "shell", "database", "memory", "skills", "soul", "agents", "web", "connectors"}) + "\n")
	golden := filepath.Join("testdata", "catalog.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCatalogGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("catalog differs from %s; review the change and run go test -run TestCatalogGolden -update", golden)
	}
}

func TestForCapabilities(t *testing.T) {
	names := func(tools []Tool) string {
		var out []string
		for _, t := range tools {
			out = append(out, t.Name)
		}
		return strings.Join(out, " ")
	}
	tests := []struct {
		name string
		caps []string
		want string
	}{
		{"none", nil, ""},
		{"files", []string{"files"}, "read_file write_file append_file list_files search_files delete_file"},
		{"catalog order whatever the input order", []string{"web", "agents", "soul"}, "update_soul call_agent fetch_url"},
		{"database", []string{"database"}, "list_tables db_query db_execute list_space_tables space_db_query space_db_execute"},
		{"shell", []string{"shell"}, "run_command"},
		{"memory", []string{"memory"}, "remember recall forget"},
		{"skills", []string{"skills"}, "list_skills load_skill read_skill_file upsert_skill"},
		{"families implemented elsewhere add nothing", []string{"browser", "connectors", "nope"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names(ForCapabilities(tt.caps)); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("all", func(t *testing.T) {
		var ids []string
		for _, c := range agent.Capabilities {
			ids = append(ids, c.ID)
		}
		if got, want := len(ForCapabilities(ids)), len(Catalog()); got != want {
			t.Errorf("got %d tools for every capability, want the whole catalog (%d)", got, want)
		}
	})
}

func TestFind(t *testing.T) {
	tools := ForCapabilities([]string{"web", "soul"})
	if tl, ok := Find(tools, "fetch_url"); !ok || tl.Name != "fetch_url" {
		t.Errorf("Find(fetch_url) = %q, %v; want the tool", tl.Name, ok)
	}
	if _, ok := Find(tools, "read_file"); ok {
		t.Errorf("Find(read_file) found a tool of a family that is off")
	}
}

func TestGuide(t *testing.T) {
	tests := []struct {
		name    string
		caps    []string
		want    []string
		notWant []string
	}{
		{"none", nil, nil, []string{"##"}},
		{"files", []string{"files"}, []string{"## Files", "shared/"}, []string{"## Shell", "## Databases"}},
		{"database", []string{"database", "browser"}, []string{"## Databases", "db_query (read-only", "space_db_query"}, []string{"## Files"}},
		{"memory and skills", []string{"skills", "memory"}, []string{"## Memory", "replaces", "## Skills", "load_skill"}, []string{"## Files"}},
		{"several in catalog order", []string{"web", "shell"}, []string{"## Shell", "## Web"}, nil},
		{"connectors", []string{"connectors"}, []string{"## Apps and MCP servers", "<app>__<tool>", "search_apps", "request_connector", "BLOCKED"}, []string{"## Web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Guide(tt.caps)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("guide %q lacks %q", got, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("guide %q holds %q", got, w)
				}
			}
		})
	}
	if g := Guide([]string{"web", "shell"}); strings.Index(g, "## Shell") > strings.Index(g, "## Web") {
		t.Errorf("guide sections are not in catalog order: %q", g)
	}
	if tools := ForCapabilities([]string{"files"}); !slices.ContainsFunc(tools, func(t Tool) bool { return t.Name == "read_file" }) {
		t.Errorf("files tools missing read_file")
	}
}
