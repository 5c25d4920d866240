package template_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

func TestAuthoringABlankTemplate(t *testing.T) {
	ws := openWorkspace(t)
	ctx := context.Background()
	if _, err := ws.Templates.Create(ctx, template.Patch{}); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "name") {
		t.Fatalf("blank without a name: %v, want an error naming name", err)
	}
	tpl, err := ws.Templates.Create(ctx, template.Patch{Name: ptr(" Inbox helper ")})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Name != "Inbox helper" || tpl.Status != template.StatusDraft || tpl.Price != template.PriceFree || tpl.SchemaVersion != 1 ||
		!slices.Equal(tpl.Capabilities, agent.DefaultCapabilities()) || len(tpl.AskFirst) != len(agent.AskFirstFamilies) {
		t.Fatalf("blank template = %+v", tpl)
	}

	for _, tc := range []struct {
		name string
		p    template.Patch
		want string
	}{
		{"price", template.Patch{Price: ptr("cheap")}, `price "cheap"`},
		{"capability", template.Patch{Capabilities: &[]string{"teleport"}}, "capabilities"},
		{"ask first", template.Patch{AskFirst: map[string]bool{"browser": true}}, "ask_first"},
		{"app", template.Patch{Connectors: &[]template.Connector{{CatalogID: "myspace"}}}, "no app \"myspace\" in the catalog"},
		{"variable", template.Patch{Variables: &[]template.Variable{{Name: "api key"}}}, "variables[0].name"},
		{"variable value", template.Patch{Variables: &[]template.Variable{{Name: "OPENAI_API_KEY", Help: "sk-proj-1234567890abcdefghij"}}}, "looks like an OpenAI"},
		{"soul with a key", template.Patch{Soul: ptr("Use ghp_0123456789abcdefghijklmnopqrstuvwxyz.")}, "soul (soul.md) holds what looks like a GitHub token"},
		{"trigger method", template.Patch{Triggers: &[]template.Trigger{{Name: "Hook", Instruction: "x", Methods: []string{"TRACE"}}}}, `trigger "Hook": method`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ws.Templates.Update(ctx, tpl.ID, tc.p); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}

	tpl, err = ws.Templates.Update(ctx, tpl.ID, template.Patch{Soul: ptr("# Helper\nAnswer with ${MAIL_KEY}."),
		Connectors: &[]template.Connector{{CatalogID: "GitHub"}}, Model: &template.Model{Provider: "anthropic", Model: "claude-sonnet-4-5"},
		Variables: &[]template.Variable{{Name: "${MAIL_KEY}", Help: "The mail API key.", URL: "https://mail.example/keys"}}})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Connectors[0] != (template.Connector{CatalogID: "github", Name: "GitHub"}) || tpl.Variables[0].Name != "MAIL_KEY" {
		t.Fatalf("app and variable = %+v %+v, want the catalog's id and name, and the bare name", tpl.Connectors, tpl.Variables)
	}

	sk, err := ws.Templates.UpsertSkill(ctx, tpl.ID, goodSkill, map[string][]byte{"examples/one.md": []byte("Dear …")})
	if err != nil {
		t.Fatal(err)
	}
	if sk.Name != "reply" || !slices.Equal(sk.Files, []string{"examples/one.md"}) {
		t.Fatalf("skill = %+v", sk)
	}
	if _, err := ws.Templates.UpsertSkill(ctx, tpl.ID, "no front matter", nil); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "skill_md") {
		t.Fatalf("bad SKILL.md: %v", err)
	}
	if _, err := ws.Templates.UpsertSkill(ctx, tpl.ID, goodSkill, map[string][]byte{"../x": []byte("y")}); !errors.Is(err, fault.ErrInvalid) {
		t.Fatalf("a reference file leaving the folder: %v", err)
	}
	if _, err := ws.Templates.UpsertSchedule(ctx, tpl.ID, template.Schedule{Name: "Digest", Instruction: "Sum up.", Cron: "61 * * * *"}); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), `schedule "Digest"`) {
		t.Fatalf("bad cron: %v, want an error naming the schedule", err)
	}
	sch, err := ws.Templates.UpsertSchedule(ctx, tpl.ID, template.Schedule{Name: "Digest", Instruction: "Sum up.", Cron: "@daily"})
	if err != nil || sch.Kind != "cron" || sch.Cron != "@daily" {
		t.Fatalf("schedule = %+v, %v", sch, err)
	}
	if err := ws.Templates.UpsertFile(ctx, tpl.ID, "notes/faq.md", []byte("Hours: 9-5")); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"absolute file":   func() error { return ws.Templates.UpsertFile(ctx, tpl.ID, "/etc/passwd", []byte("x")) },
		"file with a key": func() error { return ws.Templates.UpsertFile(ctx, tpl.ID, "keys.txt", []byte("AKIAIOSFODNN7EXAMPLE")) },
		"missing file":    func() error { return ws.Templates.DeleteFile(ctx, tpl.ID, "nope.md") },
		"missing skill":   func() error { return ws.Templates.DeleteSkill(ctx, tpl.ID, "nope") },
	} {
		if err := call(); err == nil || !fault.Is(err) {
			t.Errorf("%s: %v, want a refusal", name, err)
		}
	}

	// Submitting asks for a description; then it is submitted, and any
	// change makes it a draft again.
	if _, err := ws.Templates.Submit(ctx, tpl.ID); !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), "description") {
		t.Fatalf("submit without a description: %v", err)
	}
	if _, err := ws.Templates.Update(ctx, tpl.ID, template.Patch{Description: ptr("Answers the support inbox.")}); err != nil {
		t.Fatal(err)
	}
	tpl, err = ws.Templates.Submit(ctx, tpl.ID)
	if err != nil || tpl.Status != template.StatusSubmitted {
		t.Fatalf("submit: %s %v", tpl.Status, err)
	}
	if err := ws.Templates.DeleteFile(ctx, tpl.ID, "notes/faq.md"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Templates.DeleteSchedule(ctx, tpl.ID, "digest"); err != nil {
		t.Fatal(err)
	}
	tpl, _ = ws.Templates.Get(ctx, tpl.ID)
	if tpl.Status != template.StatusDraft || len(tpl.Files) != 0 || len(tpl.Schedules) != 0 || len(tpl.Skills) != 1 {
		t.Fatalf("after changes: status %s, files %v, schedules %v, skills %v", tpl.Status, tpl.Files, tpl.Schedules, tpl.Skills)
	}

	// What is made in the app exports into a package that imports the same.
	pkg, err := ws.Templates.Export(ctx, tpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ws.Templates.Import(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	if back.ID == tpl.ID || back.Soul != tpl.Soul || !slices.Equal(back.Skills[0].Files, tpl.Skills[0].Files) || back.Description != tpl.Description {
		t.Fatalf("imported %+v, want the same as %+v", back, tpl)
	}

	if err := ws.Templates.Delete(ctx, tpl.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws.Dir, "templates", tpl.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("deleted template's folder: %v", err)
	}
	if _, err := ws.Templates.Get(ctx, tpl.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("get a deleted template: %v", err)
	}
}

func TestSavingAnAgentKeepsItsFilesWithinTheLimit(t *testing.T) {
	ws := openWorkspace(t)
	ctx := context.Background()
	boxes, _ := ws.Boxes.List(ctx)
	a, err := ws.Agents.Create(ctx, agent.NewAgent{Name: "Archivist", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(ws.Agents.Dir(a.ID), "files")
	os.WriteFile(filepath.Join(dir, "a-small.txt"), []byte("keep me"), 0o600)
	os.WriteFile(filepath.Join(dir, "b-huge.bin"), bytes.Repeat([]byte{0xff}, template.MaxAgentFilesBytes), 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "c-link"))

	p, err := ws.Templates.Preview(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Included, "Files: 1 (7 bytes)") || !strings.Contains(strings.Join(p.LeftOut, "\n"), "Files over the 5 MiB a template carries: b-huge.bin") {
		t.Fatalf("preview = %+v", p)
	}
	tpl, err := ws.Templates.FromAgent(ctx, a.ID, template.Patch{Name: ptr("Archive keeper")})
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Name != "Archive keeper" || !slices.Equal(tpl.Files, []string{"a-small.txt"}) {
		t.Fatalf("template = %q with files %v, want only a-small.txt", tpl.Name, tpl.Files)
	}
}
