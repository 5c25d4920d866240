package models_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

func open(t *testing.T, dir string) *workspace.Home {
	t.Helper()
	h, err := workspace.Open(context.Background(), workspace.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Keys that older versions sealed in models.json move into every
// workspace's variables at the next start, and leave the file.
func TestSealedProviderKeysMoveIntoVariables(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	h := open(t, dir)
	first := h.Current()
	second, err := h.Create(ctx, "Other")
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := h.Workspace(second.ID)
	if _, err := w2.Variables.Set(ctx, "OPENAI_API_KEY", "sk-own-of-second"); err != nil {
		t.Fatal(err)
	}
	h.Close()

	// What an older version wrote: keys sealed with secret.key, labelled by
	// provider, beside base URLs.
	box, err := secret.OpenBox(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]map[string]string{
		"anthropic": {"api_key": box.Seal("sk-ant-moved", "anthropic")},
		"openai":    {"api_key": box.Seal("sk-openai-moved", "openai"), "base_url": "http://127.0.0.1:9/v1"},
		"ollama":    {"base_url": "http://127.0.0.1:11434"},
	}
	b, _ := json.Marshal(old)
	if err := os.WriteFile(filepath.Join(dir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}

	h = open(t, dir)
	defer h.Close()
	for _, tc := range []struct {
		name, ws, variable, want string
	}{
		{"anthropic into the first", first, "ANTHROPIC_API_KEY", "sk-ant-moved"},
		{"openai into the first", first, "OPENAI_API_KEY", "sk-openai-moved"},
		{"anthropic into the second", second.ID, "ANTHROPIC_API_KEY", "sk-ant-moved"},
		{"a variable already set stays", second.ID, "OPENAI_API_KEY", "sk-own-of-second"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := h.Workspace(tc.ws)
			if got, ok := w.Variables.Lookup(tc.variable); !ok || got != tc.want {
				t.Errorf("%s = %q (set %v), want %q", tc.variable, got, ok, tc.want)
			}
		})
	}
	saved, _ := os.ReadFile(filepath.Join(dir, "models.json"))
	if bytes.Contains(saved, []byte("api_key")) {
		t.Errorf("models.json still holds keys: %s", saved)
	}
	if !bytes.Contains(saved, []byte("http://127.0.0.1:9/v1")) || !bytes.Contains(saved, []byte("http://127.0.0.1:11434")) {
		t.Errorf("models.json lost its base URLs: %s", saved)
	}
	w, _ := h.Workspace(first)
	settings := w.Models.Settings()
	if !settings[0].Configured || settings[0].Source != "app" || settings[1].BaseURL != "http://127.0.0.1:9/v1" {
		t.Errorf("settings after the move = %+v", settings)
	}
}

// Each workspace picks models with its own provider keys; the environment
// still serves those without one, and a changed key is used at once.
func TestModelsPerWorkspace(t *testing.T) {
	ctx := context.Background()
	h, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(), LLM: llm.Config{OpenAIKey: "sk-from-env"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	other, _ := h.Create(ctx, "Other")
	a, _ := h.Workspace(h.Current())
	b, _ := h.Workspace(other.ID)

	if err := a.Models.Save(ctx, "anthropic", "sk-ant-of-a", nil); err != nil {
		t.Fatal(err)
	}
	sources := func(w *workspace.Workspace) string {
		var out []string
		for _, p := range w.Models.Configured() {
			out = append(out, p.Name+":"+p.Source)
		}
		return strings.Join(out, ",")
	}
	if got := sources(a); got != "anthropic:app,openai:env" {
		t.Errorf("providers of a = %s, want anthropic:app,openai:env", got)
	}
	if got := sources(b); got != "openai:env" {
		t.Errorf("providers of b = %s, want openai:env (a's key is a's)", got)
	}
	if _, provider, _, err := b.Models.Pick("", ""); err != nil || provider != "openai" {
		t.Errorf("b picks %q, %v; want openai from the environment", provider, err)
	}

	// A key set as a variable (Settings → Variables) counts as entered in
	// the app, and wins over the environment.
	if _, err := b.Variables.Set(ctx, "OPENAI_API_KEY", "sk-openai-of-b"); err != nil {
		t.Fatal(err)
	}
	if got := sources(b); got != "openai:app" {
		t.Errorf("providers of b after setting the variable = %s, want openai:app", got)
	}
	if err := b.Models.Forget(ctx, "openai"); err != nil {
		t.Fatal(err)
	}
	if b.Variables.Has("OPENAI_API_KEY") {
		t.Error("forget left the variable")
	}
	if got := sources(b); got != "openai:env" {
		t.Errorf("providers of b after forgetting = %s, want openai:env", got)
	}
	if err := a.Models.Save(ctx, "ollama", "some-key", nil); err == nil {
		t.Error("saved a key for ollama, which takes none")
	}
	url := "http://127.0.0.1:11434"
	if err := a.Models.Save(ctx, "ollama", "", &url); err != nil {
		t.Fatal(err)
	}
	if got := sources(b); got != "openai:env,ollama:local" {
		t.Errorf("providers of b after a set Ollama's address = %s, want it for every workspace", got)
	}
}
