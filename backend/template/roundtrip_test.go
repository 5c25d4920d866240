package template_test

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Canaries planted in the source workspace: none may leave it.
const (
	plantedMemory = "The founder's locker code is 4417 (planted-memory-canary)"
	zendeskValue  = "zd-planted-9f83e2a1b7c6"
	githubValue   = "ghp_PLANTED0123456789abcdefghijklmnopqrstu"
	slackValue    = "xoxb-planted-0192837465-canary"
)

// source is an agent set up the way people set them up, with secrets
// planted where they tend to end up.
type source struct {
	ws    *workspace.Workspace
	agent agent.Agent
	token string // its webhook trigger's token
}

func plantAgent(t *testing.T) source {
	t.Helper()
	ctx := context.Background()
	ws := openWorkspace(t)
	for name, value := range map[string]string{"ZENDESK_KEY": zendeskValue, "GITHUB_TOKEN": githubValue, "SLACK_BOT_TOKEN": slackValue} {
		if _, err := ws.Variables.Set(ctx, name, value); err != nil {
			t.Fatal(err)
		}
	}
	boxes, _ := ws.Boxes.List(ctx)
	a, err := ws.Agents.Create(ctx, agent.NewAgent{Name: "Support Triage", BoxID: boxes[0].ID,
		Soul:     "# Support triage\nYou sort support tickets. The Zendesk key is " + zendeskValue + ".\n",
		Provider: "openai", Model: "gpt-4o-mini",
		Capabilities: []string{"files", "shell", "skills", "human", "web", "connectors"},
		AskFirst:     map[string]bool{"files": true, "web": false}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Memory.Remember(ctx, a.ID, plantedMemory, memory.Source{}, memory.RememberOptions{}); err != nil {
		t.Fatal(err)
	}
	skillMD := "---\nname: triage\ndescription: Sort incoming tickets by urgency. Use when a ticket arrives.\n---\n# Triage\nLook the customer up with ${ZENDESK_KEY}.\n"
	if _, err := ws.Skills.Upsert(ctx, a.ID, "triage", skillMD, map[string][]byte{"references/policy.md": []byte("Refunds over $100 need approval.\n")}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2031, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, n := range []schedule.NewSchedule{
		{AgentID: a.ID, Name: "Morning digest", Instruction: "Summarise yesterday's tickets. Key: " + zendeskValue,
			Spec: schedule.Spec{Kind: schedule.KindCron, Cron: "0 9 * * 1-5", Timezone: "Europe/Berlin"}, CatchUp: schedule.CatchUpSkip},
		{AgentID: a.ID, Name: "Launch day", Instruction: "Post the launch note.",
			Spec: schedule.Spec{Kind: schedule.KindOnce, At: &at, Timezone: "UTC"}},
	} {
		if _, err := ws.Schedules.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	token, _, err := ws.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: "New ticket",
		Instruction: "Triage the ticket in the payload.", Methods: []string{"POST", "PUT"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"github", "slack"} {
		if _, err := ws.Connectors.Install(ctx, a.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ws.Connectors.AddCustom(ctx, a.ID, connector.Custom{Name: "Internal CRM", URL: "https://crm.example/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${CRM_TOKEN}"}}); err != nil {
		t.Fatal(err)
	}
	files := filepath.Join(ws.Agents.Dir(a.ID), "files")
	for rel, data := range map[string][]byte{
		"notes.txt":     []byte("Our webhook: http://127.0.0.1:7777/hooks/" + token + "\nEscalate to Dana.\n"),
		"data/logo.bin": {0x89, 'P', 'N', 'G', 0, 1, 2, 0xff},
		"dump.bin":      append([]byte{0xff, 0xfe, 0}, []byte("key="+zendeskValue)...),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(files, rel)), 0o700)
		if err := os.WriteFile(filepath.Join(files, rel), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return source{ws: ws, agent: a, token: token}
}

// strip is the source agent as a template reproduces it: values written
// out become references, credentials are removed, automations are paused,
// binary files holding a secret and custom servers stay behind.
func strip(v agentView, token string) agentView {
	v.Soul = strings.ReplaceAll(v.Soul, zendeskValue, "${ZENDESK_KEY}")
	v.Files["notes.txt"] = strings.ReplaceAll(v.Files["notes.txt"], token, "[credential removed]")
	delete(v.Files, "dump.bin")
	for i := range v.Schedules {
		v.Schedules[i].Instruction = strings.ReplaceAll(v.Schedules[i].Instruction, zendeskValue, "${ZENDESK_KEY}")
		v.Schedules[i].Enabled = false
	}
	for i := range v.Triggers {
		v.Triggers[i].Enabled = false
	}
	v.Apps = slices.DeleteFunc(v.Apps, func(s string) bool { return strings.HasPrefix(s, "custom:") })
	return v
}

func TestRoundTripAgentToTemplateToFreshWorkspace(t *testing.T) {
	ctx := context.Background()
	src := plantAgent(t)

	preview, err := src.ws.Templates.Preview(ctx, src.agent.ID)
	if err != nil {
		t.Fatal(err)
	}
	in, out := strings.Join(preview.Included, "\n"), strings.Join(preview.LeftOut, "\n")
	for _, want := range []string{"Soul (11 words)", "Skill triage (+1 file)", "Scheduled task “Morning digest”", "Webhook trigger “New ticket”", "App GitHub", "Files: 2"} {
		if !strings.Contains(in, want) {
			t.Errorf("preview's included lacks %q:\n%s", want, in)
		}
	}
	for _, want := range []string{"Memories", "Custom MCP server Internal CRM", "files/dump.bin: a binary file holding a credential", "Webhook URLs"} {
		if !strings.Contains(out, want) {
			t.Errorf("preview's left out lacks %q:\n%s", want, out)
		}
	}

	tpl, err := src.ws.Templates.FromAgent(ctx, src.agent.ID, template.Patch{Description: ptr("Sorts support tickets.")})
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := src.ws.Templates.Export(ctx, tpl.ID)
	if err != nil {
		t.Fatal(err)
	}
	mustNotHold(t, pkg, map[string]string{"planted memory": "locker code", "memory canary": "planted-memory-canary",
		"ZENDESK_KEY value": zendeskValue, "GITHUB_TOKEN value": githubValue, "SLACK_BOT_TOKEN value": slackValue,
		"trigger token": src.token, "trigger token's secret part": src.token[len("rrh_"):]})

	fresh := openWorkspace(t)
	imported, err := fresh.Templates.Import(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := fresh.Templates.Install(ctx, imported.ID, template.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := viewAgent(t, fresh, inst.Agent.ID)
	if want := strip(viewAgent(t, src.ws, src.agent.ID), src.token); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", "  ")
		w, _ := json.MarshalIndent(want, "", "  ")
		t.Errorf("installed agent differs from the source minus what is stripped:\ngot  %s\nwant %s", g, w)
	}
	var notes []string
	list, _ := fresh.Notify.List(ctx, notify.ListOptions{AgentID: inst.Agent.ID})
	for _, n := range list {
		if n.Kind == notify.Info {
			notes = append(notes, n.Title+": "+n.Body)
		}
	}
	golden := struct {
		Agent         agentView `json:"agent"`
		Cards         []string  `json:"cards"`
		OpenCards     []string  `json:"open_cards"`
		Notifications []string  `json:"notifications"`
		Template      any       `json:"template_json"`
	}{got, inst.Cards, openCards(t, fresh, inst.Agent.ID), notes, nil}
	json.Unmarshal(entries(t, pkg)["template.json"], &golden.Template)
	b, _ := json.MarshalIndent(golden, "", "  ")
	path := filepath.Join("testdata", "roundtrip.golden.json")
	if *update {
		os.WriteFile(path, append(b, '\n'), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (go test -update to create): %v", err)
	}
	if string(want) != string(b)+"\n" {
		t.Errorf("installed agent changed; review and run go test -update\n%s", b)
	}

	// Answering the credential card fills the variable and ends its run.
	ps, _ := fresh.Runs.Pauses(ctx, runFilter(inst.Agent.ID))
	for _, p := range ps {
		if p.Kind == "credential" {
			if _, err := fresh.Runs.Answer(ctx, p.ID, json.RawMessage(`{"value":"zd-new-value-1234"}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if v, _ := fresh.Variables.Lookup("ZENDESK_KEY"); v != "zd-new-value-1234" {
		t.Errorf("ZENDESK_KEY after the card = %q", v)
	}
}

func TestInstallMakesHandlesUniqueAndAsksOnlyForWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	src := plantAgent(t)
	tpl, err := src.ws.Templates.FromAgent(ctx, src.agent.ID, template.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	// GITHUB_TOKEN and ZENDESK_KEY stay set here; Slack's token goes.
	if err := src.ws.Variables.Delete(ctx, "SLACK_BOT_TOKEN"); err != nil {
		t.Fatal(err)
	}
	inst, err := src.ws.Templates.Install(ctx, tpl.ID, template.InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Agent.Handle != "support-triage-2" {
		t.Errorf("second agent's handle = %q, want support-triage-2", inst.Agent.Handle)
	}
	// Only Slack's token is missing: only Slack asks.
	if got, want := openCards(t, src.ws, inst.Agent.ID), []string{"connector: slack"}; !slices.Equal(got, want) {
		t.Errorf("open cards = %v, want %v", got, want)
	}
	named, err := src.ws.Templates.Install(ctx, tpl.ID, template.InstallOptions{Name: "Night shift"})
	if err != nil {
		t.Fatal(err)
	}
	if named.Agent.Name != "Night shift" || named.Agent.Handle != "night-shift" {
		t.Errorf("named install = %q @%s", named.Agent.Name, named.Agent.Handle)
	}
}

func TestFailedInstallLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	src := plantAgent(t)
	tpl, err := src.ws.Templates.FromAgent(ctx, src.agent.ID, template.Patch{})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := src.ws.Agents.List(ctx)
	// The agent, its skills and files are made; then the disk "fails" at
	// the first scheduled task.
	if _, err := src.ws.DB.ExecContext(ctx, `CREATE TRIGGER fail_schedules BEFORE INSERT ON schedules
		BEGIN SELECT RAISE(ABORT, 'disk full (test)'); END`); err != nil {
		t.Fatal(err)
	}
	if _, err := src.ws.Templates.Install(ctx, tpl.ID, template.InstallOptions{Name: "Doomed"}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("install = %v, want the schedule's failure", err)
	}
	after, _ := src.ws.Agents.List(ctx)
	if len(after) != len(before) {
		t.Fatalf("%d agents after a failed install, want %d", len(after), len(before))
	}
	dirs, _ := os.ReadDir(filepath.Join(src.ws.Dir, "agents"))
	if len(dirs) != len(before) {
		t.Errorf("%d agent folders after a failed install, want %d", len(dirs), len(before))
	}
	var versions int
	src.ws.DB.QueryRowContext(ctx, `SELECT count(*) FROM skill_versions WHERE agent_id NOT IN (SELECT id FROM agents)`).Scan(&versions)
	if versions != 0 {
		t.Errorf("%d skill versions of the removed agent are left", versions)
	}
}
