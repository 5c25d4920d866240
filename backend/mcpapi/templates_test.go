package mcpapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

func TestTemplateTools(t *testing.T) {
	e := newEnv(t)
	c := e.client(e.key)
	ctx := context.Background()

	var tpl template.Template
	mustCall(t, c, "create_template", map[string]any{"name": "Inbox helper", "category": "Support"}, &tpl)
	if tpl.ID == "" || tpl.Status != "draft" || tpl.Category != "Support" {
		t.Fatalf("create_template = %+v", tpl)
	}
	mustCall(t, c, "update_template", map[string]any{"template": "inbox helper", "description": "Answers the support inbox.",
		"soul": "# Helper\nReply kindly.", "model": map[string]any{"provider": "anthropic", "model": "claude-sonnet-4-5"},
		"capabilities": []string{"files", "skills", "connectors"}, "ask_first": map[string]any{"files": true},
		"connectors": []string{"GitHub"}, "variables": []map[string]any{{"name": "MAIL_KEY", "help": "The mail API key."}}}, &tpl)
	if tpl.Soul != "# Helper\nReply kindly." || tpl.Model.Model != "claude-sonnet-4-5" || len(tpl.Connectors) != 1 || tpl.Connectors[0].CatalogID != "github" ||
		!tpl.AskFirst["files"] || len(tpl.Variables) != 1 {
		t.Fatalf("update_template = %+v", tpl)
	}
	mustCall(t, c, "upsert_template_skill", map[string]any{"template": tpl.ID,
		"skill_md": "---\nname: reply\ndescription: Reply to a customer. Use when a mail needs an answer.\n---\nBe kind.\n",
		"files":    map[string]any{"examples/one.md": "Dear customer"}}, nil)
	var sch struct {
		Schedule template.Schedule
		Created  bool
	}
	mustCall(t, c, "upsert_template_schedule", map[string]any{"template": tpl.ID, "name": "Digest", "instruction": "Sum up the inbox.", "cron": "0 9 * * 1-5"}, &sch)
	if !sch.Created || sch.Schedule.Kind != "cron" || sch.Schedule.Timezone != "" {
		t.Fatalf("new schedule = %+v", sch)
	}
	mustCall(t, c, "upsert_template_schedule", map[string]any{"template": tpl.ID, "name": "digest", "timezone": "Europe/Berlin"}, &sch)
	if sch.Created || sch.Schedule.Cron != "0 9 * * 1-5" || sch.Schedule.Timezone != "Europe/Berlin" || sch.Schedule.Instruction != "Sum up the inbox." {
		t.Fatalf("changed schedule = %+v, want only its time zone changed", sch)
	}
	mustCall(t, c, "upsert_template_file", map[string]any{"template": tpl.ID, "path": "notes/faq.md", "content": "Hours: 9-5"}, nil)

	mustCall(t, c, "get_template", map[string]any{"template": tpl.ID}, &tpl)
	if len(tpl.Skills) != 1 || tpl.Skills[0].Files[0] != "examples/one.md" || len(tpl.Schedules) != 1 || tpl.Files[0] != "notes/faq.md" {
		t.Fatalf("get_template = %+v", tpl)
	}
	var f struct{ File, Content string }
	mustCall(t, c, "get_template", map[string]any{"template": tpl.ID, "file": "notes/faq.md"}, &f)
	if f.Content != "Hours: 9-5" {
		t.Errorf("file content = %q", f.Content)
	}
	mustCall(t, c, "get_template", map[string]any{"template": tpl.ID, "skill": "reply"}, &f)
	if !strings.Contains(f.Content, "Be kind.") {
		t.Errorf("SKILL.md = %q", f.Content)
	}
	var list struct{ Templates []mcpapi.TemplateSummary }
	mustCall(t, c, "list_templates", nil, &list)
	if len(list.Templates) != 1 || list.Templates[0].Skills[0] != "reply" || list.Templates[0].Connectors[0] != "github" || list.Templates[0].Files != 1 {
		t.Fatalf("list_templates = %+v", list)
	}

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		want       string
	}{
		{"blank without a name", "create_template", map[string]any{"category": "x"}, "name: a blank template needs a name"},
		{"unknown agent", "create_template", map[string]any{"from_agent": "@nobody"}, "from_agent: no agent"},
		{"unknown template", "get_template", map[string]any{"template": "nope"}, "template: no template"},
		{"bad price", "update_template", map[string]any{"template": tpl.ID, "price": "cheap"}, `price "cheap" is not a price label; use "free" or "paid"`},
		{"unknown app", "update_template", map[string]any{"template": tpl.ID, "connectors": []string{"myspace"}}, "search_connectors shows them"},
		{"bad variable", "update_template", map[string]any{"template": tpl.ID, "variables": []map[string]any{{"name": "mail key"}}}, "variables[0].name"},
		{"a key in the soul", "update_template", map[string]any{"template": tpl.ID, "soul": "key: sk-ant-api03-abcdef0123456789"}, "write ${NAME}"},
		{"a value argument", "update_template", map[string]any{"template": tpl.ID, "api_key": "x"}, "looks like a credential"},
		{"bad cron", "upsert_template_schedule", map[string]any{"template": tpl.ID, "name": "Digest", "cron": "every day"}, `schedule "Digest"`},
		{"new schedule without instruction", "upsert_template_schedule", map[string]any{"template": tpl.ID, "name": "Other", "cron": "@daily"}, "instruction:"},
		{"bad skill", "upsert_template_skill", map[string]any{"template": tpl.ID, "skill_md": "hello"}, "skill_md:"},
		{"file leaving files/", "upsert_template_file", map[string]any{"template": tpl.ID, "path": "../x", "content": "y"}, `path "../x" points outside its folder`},
		{"file with a token", "upsert_template_file", map[string]any{"template": tpl.ID, "path": "t.txt", "content": "xoxb-1234567890-abcdefgh"}, "Slack token"},
		{"missing file", "delete_template_file", map[string]any{"template": tpl.ID, "path": "nope.md"}, "no file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, isErr := call(t, c, tc.tool, tc.args)
			if !isErr || !strings.Contains(text, tc.want) {
				t.Errorf("%s: isError=%v %q, want an error containing %q", tc.tool, isErr, text, tc.want)
			}
		})
	}

	var sub struct {
		Template mcpapi.TemplateSummary
		Next     string
	}
	mustCall(t, c, "submit_template", map[string]any{"template": tpl.ID}, &sub)
	if sub.Template.Status != "submitted" || !strings.Contains(sub.Next, "export") {
		t.Fatalf("submit_template = %+v", sub)
	}
	mustCall(t, c, "delete_template_file", map[string]any{"template": tpl.ID, "path": "notes/faq.md"}, nil)
	mustCall(t, c, "delete_template_schedule", map[string]any{"template": tpl.ID, "name": "Digest"}, nil)
	mustCall(t, c, "delete_template_skill", map[string]any{"template": tpl.ID, "name": "reply"}, nil)
	mustCall(t, c, "get_template", map[string]any{"template": tpl.ID}, &tpl)
	if tpl.Status != "draft" || len(tpl.Files)+len(tpl.Schedules)+len(tpl.Skills) != 0 {
		t.Fatalf("after the deletes: %+v", tpl)
	}

	boxes, _ := e.ws.Boxes.List(ctx)
	a, err := e.ws.Agents.Create(ctx, agent.NewAgent{Name: "Closer", BoxID: boxes[0].ID, Soul: "# Close deals"})
	if err != nil {
		t.Fatal(err)
	}
	var copied template.Template
	mustCall(t, c, "create_template", map[string]any{"from_agent": "@" + a.Handle, "name": "Deal closer"}, &copied)
	if copied.Name != "Deal closer" || copied.Soul != "# Close deals" {
		t.Fatalf("from_agent = %+v", copied)
	}
	mustCall(t, c, "delete_template", map[string]any{"template": tpl.ID}, nil)
	mustCall(t, c, "list_templates", nil, &list)
	if len(list.Templates) != 1 || list.Templates[0].ID != copied.ID {
		t.Fatalf("after delete_template: %+v", list)
	}
}
