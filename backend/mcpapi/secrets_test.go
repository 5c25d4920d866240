package mcpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
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

// The API's database tools mask the workspace's variable values in what
// they return, in every form the agents' own database tools mask.
func TestDatabaseToolsMaskVariableValues(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	const value = `CANARY-db/7+&= x"<y>`
	if _, err := e.ws.Variables.Set(context.Background(), "DB_SECRET", value); err != nil {
		t.Fatal(err)
	}
	mustCall(t, c, "create_agent", map[string]any{"name": "Keeper", "soul": "# Keep"}, nil)
	jsonOnce, _ := json.Marshal(map[string]string{"token": value})
	jsonTwice, _ := json.Marshal(map[string]string{"body": string(jsonOnce)})
	forms := map[string]string{
		"raw":         value,
		"query":       url.QueryEscape(value),
		"path":        url.PathEscape(value),
		"hex":         hex.EncodeToString([]byte(value)),
		"HEX":         strings.ToUpper(hex.EncodeToString([]byte(value))),
		"base64":      base64.StdEncoding.EncodeToString([]byte(value)),
		"json":        string(jsonOnce),
		"json twice":  string(jsonTwice),
		"split lines": value[:9] + "\n" + value[9:],
	}
	for _, db := range []struct{ query, exec, list string }{
		{"db_query", "db_execute", "list_tables"},
		{"space_db_query", "space_db_execute", "list_space_tables"},
	} {
		args := func(m map[string]any) map[string]any {
			if db.query == "db_query" {
				m["agent"] = "@keeper"
			}
			return m
		}
		mustCall(t, c, db.exec, args(map[string]any{"sql": "CREATE TABLE leak (form TEXT, v TEXT, note TEXT DEFAULT '" + strings.ReplaceAll(value, "'", "''") + "')"}), nil)
		for name, v := range forms {
			mustCall(t, c, db.exec, args(map[string]any{"sql": "INSERT INTO leak (form, v) VALUES (?, ?)", "args": []any{name, v}}), nil)
		}
		text, isErr := call(t, c, db.query, args(map[string]any{"sql": "SELECT form, v, CAST(v AS BLOB) AS b FROM leak ORDER BY form"}))
		if isErr || strings.Count(text, "[redacted") < len(forms) {
			t.Fatalf("%s: got %q (error %v), want every form masked", db.query, text, isErr)
		}
		tables, isErr := call(t, c, db.list, args(map[string]any{}))
		if isErr || !strings.Contains(tables, "leak") {
			t.Fatalf("%s: got %q (error %v)", db.list, tables, isErr)
		}
		for _, out := range []string{text, tables} {
			if strings.Contains(out, "CANARY") || strings.Contains(out, "43414e415259") || strings.Contains(out, "Q0FOQVJZ") {
				t.Errorf("%s: the value reached the client: %s", db.query, out)
			}
		}
	}
}

// Transcripts reach MCP clients masked in every form: the run's input, the
// model's text and a tool's output are masked when recorded, before any
// encoding, so get_run and list_runs (whose JSON writes & as \u0026) carry
// no form of the value.
func TestTranscriptsReachClientsMasked(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	const value = `CANARY-run/7+&= x"<y>`
	if _, err := e.ws.Variables.Set(context.Background(), "RUN_SECRET", value); err != nil {
		t.Fatal(err)
	}
	mustCall(t, c, "create_agent", map[string]any{"name": "Teller"}, nil)
	jsonOnce, _ := json.Marshal(map[string]string{"token": value})
	jsonTwice, _ := json.Marshal(map[string]string{"body": string(jsonOnce)})
	forms := []string{value, url.QueryEscape(value), url.PathEscape(value), hex.EncodeToString([]byte(value)),
		strings.ToUpper(hex.EncodeToString([]byte(value))), base64.StdEncoding.EncodeToString([]byte(value)),
		string(jsonOnce), string(jsonTwice), value[:9] + "\n" + value[9:]}
	all := strings.Join(forms, "\n")
	e.fake.Script(llmtest.Text("Here is what I saw:\n" + all))
	var run mcpapi.RunView
	mustCall(t, c, "send_message", map[string]any{"agent": "@teller", "message": "Remember these:\n" + all, "wait_seconds": 60}, &run)
	if run.Status != "done" {
		t.Fatalf("run = %s, want done", run.Status)
	}
	got, _ := call(t, c, "get_run", map[string]any{"run_id": run.ID})
	list, _ := call(t, c, "list_runs", map[string]any{"agent": "@teller"})
	for name, out := range map[string]string{"get_run": got, "list_runs": list} {
		if !strings.Contains(out, "[redacted") {
			t.Errorf("%s shows no masked value: %s", name, out)
		}
		for _, leak := range []string{"CANARY", "43414e415259", "43414E415259", "Q0FOQVJZ"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s: a form of the value reached the client (%s): %s", name, leak, out)
			}
		}
	}
}
