package connector

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

var agentToolRE = regexp.MustCompile(`^[a-z0-9_]{1,64}$`)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name, slug, tool string
		taken            []string
		want             string
	}{
		{"plain", "github", "create_issue", nil, "github__create_issue"},
		{"hyphens and case", "notion", "API-post-search", nil, "notion__api_post_search"},
		{"dots and spaces", "acme", "files.read all", nil, "acme__files_read_all"},
		{"unicode", "acme", "überprüfen", nil, "acme___berpr_fen"},
		{"clash gets a hash", "acme", "get-env", []string{"acme__get_env"}, "acme__get_env_"},
		{"too long is cut with a hash", "acme", long, nil, "acme__xxxx"},
		{"empty", "acme", "", nil, "acme___"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			taken := map[string]bool{}
			for _, n := range tc.taken {
				taken[n] = true
			}
			got := toolName(tc.slug, tc.tool, taken)
			if !strings.HasPrefix(got, tc.want) || !agentToolRE.MatchString(got) || taken[got] {
				t.Errorf("got %q, want %q… matching [a-z0-9_]{1,64} and not taken", got, tc.want)
			}
			if again := toolName(tc.slug, tc.tool, taken); again != got {
				t.Errorf("not stable: %q then %q", got, again)
			}
		})
	}
}

func TestCustomSlug(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Acme Tools", "acme_tools"},
		{"  my--server!! ", "my_server"},
		{"123 go", "mcp_123_go"},
		{"!!!", ""},
		{"A very long server name that goes on", "a_very_long_server_name"},
	}
	for _, tc := range tests {
		if got := customSlug(tc.in); got != tc.want {
			t.Errorf("customSlug(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDefinitionHash(t *testing.T) {
	a := mcp.NewTool("greet", mcp.WithDescription("Hi."), mcp.WithString("name", mcp.Required()), mcp.WithNumber("times"))
	b := mcp.NewTool("greet", mcp.WithDescription("Hi."), mcp.WithNumber("times"), mcp.WithString("name", mcp.Required()))
	_, ha, err := definitionOf(a)
	if err != nil {
		t.Fatal(err)
	}
	if _, hb, _ := definitionOf(b); hb != ha {
		t.Errorf("the order properties were declared in changed the hash")
	}
	c := mcp.NewTool("greet", mcp.WithDescription("Hi!"), mcp.WithString("name", mcp.Required()), mcp.WithNumber("times"))
	if _, hc, _ := definitionOf(c); hc == ha {
		t.Error("a changed description kept the hash")
	}
	d := mcp.NewTool("greet", mcp.WithDescription("Hi."), mcp.WithString("name"), mcp.WithNumber("times"))
	if _, hd, _ := definitionOf(d); hd == ha {
		t.Error("a changed schema kept the hash")
	}
}

func FuzzToolName(f *testing.F) {
	for _, s := range []string{"echo", "API-post-search", "", "ü", strings.Repeat("a_", 50)} {
		f.Add("acme", s)
	}
	f.Fuzz(func(t *testing.T, name, tool string) {
		slug := customSlug(name)
		if slug == "" {
			slug = "x"
		}
		got := toolName(slug, tool, map[string]bool{})
		if !agentToolRE.MatchString(got) || !strings.HasPrefix(got, slug+"__") && len(slug)+2 <= 64 {
			t.Errorf("toolName(%q, %q) = %q", slug, tool, got)
		}
	})
}
