package mcpapi_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
)

// codexBin is the Codex CLI: $RERUN_CODEX, or the copy installed with
// `npm install @openai/codex` in build/codex (make codex).
func codexBin(t *testing.T) string {
	if p := os.Getenv("RERUN_CODEX"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../build/codex/node_modules/.bin/codex")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no Codex CLI: npm install @openai/codex in build/codex, or set RERUN_CODEX")
	}
	return p
}

// The real Codex CLI, set up with the README's ~/.codex/config.toml (the
// key from RERUN_KEY through bearer_token_env_var), makes tool calls that
// take effect. Its model is the scripted fake speaking OpenAI's Responses
// API, the only wire format Codex uses.
func TestCodexCLI(t *testing.T) {
	bin := codexBin(t)
	e := newEnv(t)
	model := llmtest.New(t)
	steps := []struct{ tool, args string }{
		{"create_agent", `{"name":"Scout"}`},
		{"upsert_skill", `{"agent":"@scout","skill_md":"---\nname: digest\ndescription: Write the morning digest.\n---\nList what changed overnight."}`},
		{"upsert_schedule", `{"agent":"@scout","name":"Morning","instruction":"Write the digest.","cron":"0 8 * * *","timezone":"Europe/Berlin"}`},
		{"send_message", `{"agent":"@scout","message":"Say hello.","wait_seconds":30}`},
	}
	model.SetFallback(func(req llmtest.Request) llmtest.Reply {
		if !strings.Contains(string(req.Body), "Create an agent named Scout") {
			return llmtest.Text("ok") // Codex's own side requests
		}
		done := 0
		for _, m := range req.Messages {
			done += len(m.ToolResults)
		}
		if done >= len(steps) {
			return llmtest.Text("All set up.")
		}
		// Codex offers each MCP server's tools in a namespace of its own.
		for _, tool := range req.Tools {
			if tool.Namespace == "mcp__rerun" && tool.Name == steps[done].tool {
				return llmtest.Tools(llmtest.ToolCall{Name: tool.Name, Namespace: tool.Namespace, Args: steps[done].args})
			}
		}
		var names []string
		for _, tool := range req.Tools {
			names = append(names, tool.Namespace+"/"+tool.Name)
		}
		return llmtest.Text(fmt.Sprintf("no tool for %s among %v", steps[done].tool, names))
	})
	e.fake.Script(llmtest.Text("Hello from Scout.")) // @scout's own model

	home := t.TempDir()
	config := fmt.Sprintf(`model = "gpt-test"
model_provider = "fake"
approval_policy = "never"

[model_providers.fake]
name = "fake"
base_url = %q
env_key = "OPENAI_API_KEY"
wire_api = "responses"

[mcp_servers.rerun]
url = %q
bearer_token_env_var = "RERUN_KEY"
`, model.OpenAIURL(), e.srv.URL+mcpapi.Path)
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"),
		"OPENAI_API_KEY=sk-test", "RERUN_KEY="+e.key, "NO_COLOR=1")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), bin, args...)
		cmd.Env, cmd.Dir = env, home
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("codex %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("mcp", "list"); !strings.Contains(out, "rerun") {
		t.Fatalf("codex mcp list:\n%s", out)
	}
	out := run("exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "Create an agent named Scout")
	if _, err := e.ws.Agents.ByHandle(context.Background(), "scout"); err != nil {
		var seen []string
		for _, r := range model.Requests() {
			last := r.Messages[len(r.Messages)-1]
			seen = append(seen, fmt.Sprintf("%s tools=%d last=%.80q results=%d", r.Path, len(r.Tools), last.Text, len(last.ToolResults)))
		}
		t.Fatalf("codex exec made no agent @scout: %v\noutput: %s\nmodel requests:\n%s", err, out, strings.Join(seen, "\n"))
	}
	c := e.client(e.key)
	if text, _ := call(t, c, "list_skills", map[string]any{"agent": "@scout"}); !strings.Contains(text, "digest") {
		t.Errorf("the skill Codex added is missing: %s\ncodex output: %s", text, out)
	}
	if text, _ := call(t, c, "list_schedules", map[string]any{"agent": "@scout"}); !strings.Contains(text, "Morning") {
		t.Errorf("the schedule Codex added is missing: %s", text)
	}
	var runs struct{ Runs []mcpapi.RunView }
	mustCall(t, c, "list_runs", map[string]any{"agent": "@scout", "source": "api"}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Output != "Hello from Scout." {
		t.Errorf("the run Codex started: %+v, want one answered", runs.Runs)
	}
}
