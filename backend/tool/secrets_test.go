package tool

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

// An agent cannot store a variable's value or a credential where agents
// read it: its soul, a skill, a memory, a Brain page.
func TestSecretsRefusedInWhatAgentsRead(t *testing.T) {
	env, _, _ := storesEnv(t)
	box, err := secret.NewBox(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	vars, err := secret.NewVariables(storetest.Open(t), box, "ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vars.Set(context.Background(), "GITHUB_TOKEN", "tok-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	env.Vars = vars
	souls := &fakeSouls{}
	env.Souls = souls
	env.AgentHandle = "ada"
	const skillMD = "---\nname: deploy\ndescription: Deploys.\n---\n"
	ghp := "ghp_" + strings.Repeat("a1", 18)
	tests := []struct {
		name, tool string
		input      map[string]any
		want       string
	}{
		{"soul, credential", "update_soul", map[string]any{"soul": "# Me\ntoken " + ghp}, "soul holds what looks like a GitHub token (ghp_a1…); a soul never carries credentials"},
		{"soul, value", "update_soul", map[string]any{"soul": "# Me\ntoken tok-0123456789abcdef"}, "write ${GITHUB_TOKEN} instead"},
		{"skill", "upsert_skill", map[string]any{"name": "deploy", "skill_md": skillMD + "Use AKIAABCDEFGHIJKLMNOP."}, "skill_md holds what looks like an AWS access key"},
		{"memory, value", "remember", map[string]any{"text": "the token is tok-0123456789abcdef"}, "a memory never carries a secret's value"},
		{"memory, credential", "remember", map[string]any{"text": "the key is sk-proj-abc123def456ghi789"}, "a memory never carries credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := call(t, env, tt.tool, tt.input)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want an invalid error saying %q", err, tt.want)
			}
		})
	}
	if souls.soul != "" {
		t.Errorf("a soul was stored: %q", souls.soul)
	}

	b := brain.New(storetest.Open(t), "ws", nil)
	tl, _ := Find(BrainTools(b, true), "propose_brain_edit")
	for _, body := range []string{"key xoxb-123456789012-abc", "token tok-0123456789abcdef"} {
		input := []byte(`{"title":"Keys","body":"` + body + `","base_version":0,"reason":"so we know"}`)
		_, err := tl.Run(context.Background(), env, input)
		if !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("Brain page with %q: err = %v, want a refusal", body, err)
		}
		if _, err := b.Get(context.Background(), "Keys"); err == nil {
			t.Fatalf("the page with %q was written", body)
		}
	}
	if _, _, err := tl.Approve(context.Background(), []byte(`{"title":"Keys","body":"key xoxb-123456789012-abc","base_version":0,"reason":"r"}`)); !errors.Is(err, secret.ErrCredentialLike) {
		t.Errorf("card for a page with a credential: err = %v, want it refused before the card", err)
	}
}
