package workspace_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/memory"
)

// An agent exported with its memories, soul history and skills imports
// into another workspace; the handle it had there is taken, so it gets a
// new one; no variable's value travels.
func TestExportImportAgentWithMemory(t *testing.T) {
	ctx := context.Background()
	fake := llmtest.New(t)
	h := servedHome(t, fake)
	src, _ := h.Workspace(h.Current())
	a, err := src.Agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: firstBox(t, src), Soul: "v1", Capabilities: []string{"memory"}})
	if err != nil {
		t.Fatal(err)
	}
	soul := "v2 uses ghp_exportcanary0123456789"
	src.Variables.Set(ctx, "GITHUB_TOKEN", "ghp_exportcanary0123456789")
	if _, err := src.Agents.Update(ctx, a.ID, agent.Update{Soul: &soul}); err != nil {
		t.Fatal(err)
	}
	old, _ := src.Memory.Remember(ctx, a.ID, "Invoices go out in EUR", memory.Source{}, memory.RememberOptions{})
	if _, err := src.Memory.Remember(ctx, a.ID, "Invoices go out in USD now", memory.Source{}, memory.RememberOptions{Supersedes: old.Memory.ID}); err != nil {
		t.Fatal(err)
	}
	src.Skills.Upsert(ctx, a.ID, "invoices", "---\nname: invoices\ndescription: How to send invoices\n---\nBody.\n", nil)
	data, err := src.AgentFiles.Export(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "ghp_exportcanary") {
		t.Fatal("the export carries a variable's value")
	}

	info, _ := h.Create(ctx, "Other")
	dst, _ := h.Workspace(info.ID)
	dst.Agents.Create(ctx, agent.NewAgent{Name: "Ada", BoxID: firstBox(t, dst)}) // takes @ada
	got, err := dst.AgentFiles.Import(ctx, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Handle == "ada" || got.Name != "Ada" {
		t.Fatalf("imported @%s %q, want a new handle and the name Ada", got.Handle, got.Name)
	}
	souls, _ := dst.Agents.Souls(ctx, got.ID)
	if len(souls) != 2 || souls[1].Body != "v1" || !strings.Contains(souls[0].Body, "[redacted:GITHUB_TOKEN]") {
		t.Fatalf("imported souls = %+v, want v1 and the masked v2", souls)
	}
	mems, _ := dst.Memory.List(ctx, got.ID, memory.ListOptions{IncludeRetired: true})
	states := map[string]string{}
	for _, m := range mems {
		states[m.Text] = string(m.State)
	}
	if len(mems) != 2 || states["Invoices go out in EUR"] != "superseded" || states["Invoices go out in USD now"] != "active" {
		t.Fatalf("imported memories = %v, want the EUR one superseded by the USD one", states)
	}
	if sk, _ := dst.Skills.List(ctx, got.ID); len(sk) != 1 {
		t.Fatalf("imported skills = %d, want 1", len(sk))
	}
	if tl, _ := dst.Templates.List(ctx); len(tl) != 0 {
		t.Errorf("the import left %d templates in the library", len(tl))
	}
}
