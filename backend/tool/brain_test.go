package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func TestBrainToolsSchemasAndProposals(t *testing.T) {
	ctx := context.Background()
	b := brain.New(storetest.Open(t), "ws", nil)
	tools := BrainTools(b, true)
	for _, tl := range tools {
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.Schema, &s); err != nil || s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema %s (%v)", tl.Name, tl.Schema, err)
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tl.Name, r)
			}
		}
	}
	if len(BrainTools(b, false)) != 1 {
		t.Errorf("without propose: want read_brain_page only")
	}
	propose, _ := Find(tools, "propose_brain_edit")
	if propose.Approve == nil || propose.Family != BrainFamily {
		t.Fatalf("propose_brain_edit must wait for approval (Approve set) in the %s family", BrainFamily)
	}
	env := &Env{AgentHandle: "scout"}
	in := func(title, body string, base int) json.RawMessage {
		raw, _ := json.Marshal(map[string]any{"title": title, "body": body, "base_version": base, "reason": "learned it"})
		return raw
	}

	// A new page: the card adds it; approved, it is written by the agent.
	title, detail, err := propose.Approve(ctx, in("Tone", "Warm.", 0))
	if err != nil || title != "Add Brain page “Tone”" || !strings.Contains(detail, "+Warm.") {
		t.Fatalf("new page card: %q %q %v", title, detail, err)
	}
	if out, err := propose.Run(ctx, env, in("Tone", "Warm.", 0)); err != nil || !strings.Contains(out, "version 1") {
		t.Fatalf("write approved new page: %q %v", out, err)
	}
	if p, _ := b.Get(ctx, "tone"); p.UpdatedBy != "agent:@scout" {
		t.Errorf("written by %q, want agent:@scout", p.UpdatedBy)
	}
	tests := []struct {
		name  string
		input json.RawMessage
		kind  error
		want  string
	}{
		{"stale base", in("Tone", "Cold.", 3), fault.ErrConflict, "at version 1, and you started from version 3"},
		{"same text", in("tone", "Warm.", 1), fault.ErrInvalid, "already says exactly this"},
		{"gone page", in("Pricing", "x", 2), fault.ErrNotFound, "base_version 0"},
		{"empty body", in("Tone", " ", 1), fault.ErrInvalid, "body is empty"},
		{"unknown argument", json.RawMessage(`{"title":"Tone","body":"x","base_version":1,"reason":"r","force":true}`), fault.ErrInvalid, "force"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := propose.Approve(ctx, tt.input)
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %v saying %q", err, tt.kind, tt.want)
			}
		})
	}
	// Approved, but the person edited the page meantime: nothing written.
	if _, _, err := propose.Approve(ctx, in("Tone", "Cool.", 1)); err != nil {
		t.Fatal(err)
	}
	body := "Warm and brief."
	if _, err := b.Update(ctx, "tone", brain.Change{Body: &body, By: brain.Person}); err != nil {
		t.Fatal(err)
	}
	if _, err := propose.Run(ctx, env, in("Tone", "Cool.", 1)); !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("approved after a person's edit: got %v, want a conflict", err)
	}
	if p, _ := b.Get(ctx, "tone"); p.Body != body {
		t.Errorf("the person's edit was overwritten: %q", p.Body)
	}
	read, _ := Find(tools, "read_brain_page")
	if out, err := read.Run(ctx, env, json.RawMessage(`{"title":"TONE"}`)); err != nil || !strings.Contains(out, "Warm and brief.") {
		t.Errorf("read: %q %v", out, err)
	}
}

// A proposal that names the page by its slug edits that page, under its
// own title: an approved edit never renames a page.
func TestProposalBySlugEditsThePageWithoutRenamingIt(t *testing.T) {
	ctx := context.Background()
	b := brain.New(storetest.Open(t), "ws", nil)
	p, err := b.Create(ctx, brain.NewPage{Title: "What we sell", Body: "Bikes.", By: brain.Person})
	if err != nil {
		t.Fatal(err)
	}
	propose, _ := Find(BrainTools(b, true), "propose_brain_edit")
	raw, _ := json.Marshal(map[string]any{"title": p.Slug, "body": "Bikes and repairs.", "base_version": 1, "reason": "they repair too"})
	if title, _, err := propose.Approve(ctx, raw); err != nil || !strings.Contains(title, "“What we sell”") {
		t.Fatalf("card: %q %v, want an edit of “What we sell”", title, err)
	}
	if _, err := propose.Run(ctx, &Env{AgentHandle: "scout"}, raw); err != nil {
		t.Fatal(err)
	}
	got, _ := b.Get(ctx, p.ID)
	if got.Title != "What we sell" || got.Body != "Bikes and repairs." || got.Version != 2 {
		t.Errorf("page after the approved edit = %q %q v%d, want the same title with the new body at v2", got.Title, got.Body, got.Version)
	}
}
