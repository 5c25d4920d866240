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

// claudeBin is the Claude Code CLI: $RERUN_CLAUDE, or the copy installed
// with `npm install @anthropic-ai/claude-code` in build/claude-code.
func claudeBin(t *testing.T) string {
	if p := os.Getenv("RERUN_CLAUDE"); p != "" {
		return p
	}
	p, _ := filepath.Abs("../../build/claude-code/node_modules/.bin/claude")
	if _, err := os.Stat(p); err != nil {
		t.Skip("no Claude Code CLI: npm install @anthropic-ai/claude-code in build/claude-code, or set RERUN_CLAUDE")
	}
	return p
}

// The real Claude Code CLI, set up with the README's command (user scope,
// the key from RERUN_KEY), connects and makes tool calls that take effect,
// its model being the scripted fake speaking the Anthropic Messages API.
func TestClaudeCodeCLI(t *testing.T) {
	bin := claudeBin(t)
	e := newEnv(t)
	model := llmtest.New(t)
	// Claude Code's model works through the steps one tool call a turn,
	// counting the tool results it has been sent so far.
	steps := []llmtest.ToolCall{
		{Name: "mcp__rerun__create_agent", Args: `{"name":"Scout"}`},
		{Name: "mcp__rerun__upsert_skill", Args: `{"agent":"@scout","skill_md":"---\nname: digest\ndescription: Write the morning digest.\n---\nList what changed overnight."}`},
		{Name: "mcp__rerun__upsert_schedule", Args: `{"agent":"@scout","name":"Morning","instruction":"Write the digest.","cron":"0 8 * * *","timezone":"Europe/Berlin"}`},
		{Name: "mcp__rerun__send_message", Args: `{"agent":"@scout","message":"Say hello.","wait_seconds":30}`},
	}
	model.SetFallback(func(req llmtest.Request) llmtest.Reply {
		if !strings.Contains(string(req.Body), "Create an agent named Scout") {
			return llmtest.Text("ok") // Claude Code's own side requests
		}
		done := 0
		for _, m := range req.Messages {
			done += len(m.ToolResults)
		}
		if done < len(steps) {
			return llmtest.Tools(steps[done])
		}
		return llmtest.Text("All set up.")
	})
	e.fake.Script(llmtest.Text("Hello from Scout.")) // @scout's own model
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"ANTHROPIC_BASE_URL="+model.AnthropicURL(), "ANTHROPIC_API_KEY=sk-ant-test", "RERUN_KEY="+e.key,
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(context.Background(), bin, args...)
		cmd.Env, cmd.Dir = env, home
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run("mcp", "add", "--scope", "user", "--transport", "http", "rerun", e.srv.URL+mcpapi.Path,
		"--header", "Authorization: Bearer ${RERUN_KEY}")
	if out := run("mcp", "list"); !strings.Contains(out, "rerun") || !strings.Contains(out, "Connected") {
		t.Fatalf("claude mcp list:\n%s", out)
	}
	out := run("-p", "Create an agent named Scout", "--allowedTools", "mcp__rerun__*")
	if _, err := e.ws.Agents.ByHandle(context.Background(), "scout"); err != nil {
		var seen []string
		for _, r := range model.Requests() {
			last := r.Messages[len(r.Messages)-1]
			seen = append(seen, fmt.Sprintf("%s tools=%d last=%.80q results=%d", r.Path, len(r.Tools), last.Text, len(last.ToolResults)))
		}
		t.Fatalf("claude -p made no agent @scout: %v\noutput: %s\nmodel requests:\n%s", err, out, strings.Join(seen, "\n"))
	}
	c := e.client(e.key)
	if text, _ := call(t, c, "list_skills", map[string]any{"agent": "@scout"}); !strings.Contains(text, "digest") {
		t.Errorf("the skill Claude Code added is missing: %s", text)
	}
	if text, _ := call(t, c, "list_schedules", map[string]any{"agent": "@scout"}); !strings.Contains(text, "Morning") {
		t.Errorf("the schedule Claude Code added is missing: %s", text)
	}
	var runs struct{ Runs []mcpapi.RunView }
	mustCall(t, c, "list_runs", map[string]any{"agent": "@scout", "source": "api"}, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Output != "Hello from Scout." {
		t.Errorf("the run Claude Code started: %+v, want one answered", runs.Runs)
	}
}
