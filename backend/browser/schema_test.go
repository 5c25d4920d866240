package browser

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

func TestToolSchemas(t *testing.T) {
	m, err := New(Config{AgentsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	known := false
	for _, c := range agent.Capabilities {
		known = known || c.ID == Family
	}
	if !known {
		t.Fatalf("family %q is not a capability id of agent.Capabilities", Family)
	}
	names := map[string]bool{}
	snake := regexp.MustCompile(`^browser(_[a-z0-9]+)+$`)
	for _, tl := range m.Tools() {
		t.Run(tl.Name, func(t *testing.T) {
			if !snake.MatchString(tl.Name) || names[tl.Name] {
				t.Errorf("name %q is not browser_snake_case or is used twice", tl.Name)
			}
			names[tl.Name] = true
			if tl.Family != Family || len(tl.Description) < 40 || tl.Run == nil {
				t.Errorf("family %q, description %q, Run set %v", tl.Family, tl.Description, tl.Run != nil)
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
			if s.Type != "object" || s.Properties == nil || s.Required == nil || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("schema must be an object with properties, required and additionalProperties false: %s", tl.Schema)
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
	if len(names) != 12 {
		t.Errorf("%d tools, want the 12 browser tools", len(names))
	}
}

// The schemas, descriptions and guide the model sees, reviewed as one file.
func TestToolsGolden(t *testing.T) {
	m, err := New(Config{AgentsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, tl := range append(m.Tools(), m.TakeoverTool("agent")) {
		var schema bytes.Buffer
		json.Indent(&schema, tl.Schema, "", "  ")
		b.WriteString("## " + tl.Name + " (" + tl.Family + ")\n\n" + tl.Description + "\n\n" + schema.String() + "\n\n")
	}
	b.WriteString("## Guide\n\n" + Guide + "\n")
	golden := filepath.Join("testdata", "tools.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestToolsGolden -update)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("tools differ from %s; review the change and run go test -run TestToolsGolden -update", golden)
	}
}
