package mcpapi_test

import (
	"context"
	"strings"
	"testing"
)

// What agents read refuses credentials and variable values through the
// API, with the template tools' wording; the API cannot override.
func TestSecretsRefusedInStoredText(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	if _, err := e.ws.Variables.Set(context.Background(), "GITHUB_TOKEN", "tok-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	mustCall(t, c, "create_agent", map[string]any{"name": "Keeper", "soul": "# Keep"}, nil)
	ghp := "ghp_" + strings.Repeat("a1", 18)
	const skill = "---\nname: deploy\ndescription: Deploys.\n---\nRun it."
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"create_agent soul", "create_agent", map[string]any{"name": "Leaky", "soul": "token " + ghp}, "soul holds what looks like a GitHub token (ghp_a1…); a soul never carries credentials: remove it, and write ${NAME} where the agent needs a variable"},
		{"update_agent soul", "update_agent", map[string]any{"agent": "@keeper", "soul": "key AKIAABCDEFGHIJKLMNOP"}, "looks like an AWS access key"},
		{"update_agent soul with a value", "update_agent", map[string]any{"agent": "@keeper", "soul": "use tok-0123456789abcdef"}, "write ${GITHUB_TOKEN} instead"},
		{"upsert_skill skill_md", "upsert_skill", map[string]any{"agent": "@keeper", "skill_md": skill + " sk-proj-abc123def456ghi789"}, "skill_md holds what looks like an OpenAI or Anthropic API key"},
		{"upsert_skill files", "upsert_skill", map[string]any{"agent": "@keeper", "skill_md": skill, "files": map[string]any{"ref.md": "xoxb-123456789012-abc"}}, "skill file ref.md holds what looks like a Slack token"},
		{"upsert_schedule instruction", "upsert_schedule", map[string]any{"agent": "@keeper", "name": "Daily", "cron": "@daily", "instruction": "use sk_live_abc123def456ghi789jk"}, "instruction holds what looks like a Stripe secret key"},
		{"upsert_trigger instruction", "upsert_trigger", map[string]any{"agent": "@keeper", "name": "Hook", "instruction": "verify with whsec_abc123def456ghi789"}, "instruction holds what looks like a webhook signing secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, isErr := call(t, c, tt.tool, tt.args)
			if !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("%s: got %q (error %v), want an error saying %q", tt.tool, text, isErr, tt.want)
			}
		})
	}
	a, err := e.ws.Agents.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, ag := range a {
		if ag.Name == "Leaky" {
			t.Error("the agent with a token in its soul was created")
		}
	}
}
