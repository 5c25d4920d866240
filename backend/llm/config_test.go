package llm_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
)

func TestRegistryNothingConfigured(t *testing.T) {
	r := llm.NewRegistry(llm.Config{}, map[string]string{"openai": "  "})
	if got := r.Configured(); len(got) != 0 {
		t.Errorf("Configured: got %+v, want none", got)
	}
	_, err := r.Get("")
	if !errors.Is(err, llm.ErrNotConfigured) {
		t.Fatalf("Get(\"\"): got %v, want ErrNotConfigured", err)
	}
	for _, w := range []string{"no model provider is configured", "Settings → Models", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OLLAMA_HOST"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q: want it to mention %q", err, w)
		}
	}
	cases := []struct{ provider, hint string }{
		{"anthropic", "ANTHROPIC_API_KEY"},
		{"openai", "OPENAI_API_KEY"},
		{"ollama", "OLLAMA_HOST"},
		{"mistral", "unknown model provider"},
	}
	for _, tc := range cases {
		_, err := r.Get(tc.provider)
		if !errors.Is(err, llm.ErrNotConfigured) || !strings.Contains(err.Error(), tc.hint) {
			t.Errorf("Get(%q): got %v, want ErrNotConfigured mentioning %q", tc.provider, err, tc.hint)
		}
	}
}

func TestRegistryAppKeyOverridesEnv(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("a"), llmtest.Text("b"), llmtest.Text("c"), llmtest.Text("d"))
	cfg := llm.Config{
		AnthropicKey: "env-anthropic", AnthropicBaseURL: srv.AnthropicURL(),
		OpenAIKey: "env-openai", OpenAIBaseURL: srv.OpenAIURL(),
	}
	cases := []struct {
		name       string
		keys       map[string]string
		wantSource string
		wantKey    map[string]string // header value by provider
	}{
		{"env", nil, "env", map[string]string{"anthropic": "env-anthropic", "openai": "Bearer env-openai"}},
		{"app", map[string]string{"anthropic": "app-anthropic", "openai": "app-openai"}, "app",
			map[string]string{"anthropic": "app-anthropic", "openai": "Bearer app-openai"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := llm.NewRegistry(cfg, tc.keys)
			for _, info := range r.Configured() {
				if info.Source != tc.wantSource || len(info.Models) == 0 || info.Models[0] != llm.DefaultModel(info.Name) {
					t.Errorf("Configured %s: got %+v, want source %q and the default model first", info.Name, info, tc.wantSource)
				}
			}
			for _, name := range []string{"anthropic", "openai"} {
				p, err := r.Get(name)
				if err != nil {
					t.Fatalf("Get(%s): %v", name, err)
				}
				before := len(srv.Requests())
				if _, err := p.Chat(context.Background(), llm.Request{Model: llm.DefaultModel(name), Messages: []llm.Message{userText("hi")}}, nil); err != nil {
					t.Fatalf("%s Chat: %v", name, err)
				}
				got := srv.Requests()[before]
				header := got.Header.Get("Authorization")
				if name == "anthropic" {
					header = got.Header.Get("X-Api-Key")
				}
				if header != tc.wantKey[name] {
					t.Errorf("%s key sent: got %q, want %q", name, header, tc.wantKey[name])
				}
			}
		})
	}
}

func TestRegistryDefaultAndOllama(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script(llmtest.Text("local answer"))
	host := strings.TrimPrefix(srv.URL(), "http://")
	r := llm.NewRegistry(llm.Config{OllamaHost: host}, nil)
	got := r.Configured()
	if len(got) != 1 || got[0].Name != "ollama" || got[0].Source != "local" {
		t.Fatalf("Configured: got %+v, want ollama from local", got)
	}
	p, err := r.Get("")
	if err != nil {
		t.Fatalf("Get(\"\"): %v", err)
	}
	if p.Name() != "ollama" {
		t.Errorf("Name: got %q, want ollama", p.Name())
	}
	resp, err := p.Chat(context.Background(), llm.Request{Model: "qwen3", Messages: []llm.Message{userText("hi")}}, nil)
	if err != nil || resp.Text() != "local answer" {
		t.Fatalf("Chat: got %q, %v", resp.Text(), err)
	}
	if path := srv.Requests()[0].Path; path != "/v1/chat/completions" {
		t.Errorf("path: got %q, want /v1/chat/completions", path)
	}
}

func TestRegistryOrder(t *testing.T) {
	r := llm.NewRegistry(llm.Config{OpenAIKey: "o", OllamaHost: "localhost"}, map[string]string{"anthropic": "a"})
	var names []string
	for _, info := range r.Configured() {
		names = append(names, info.Name)
	}
	if want := []string{"anthropic", "openai", "ollama"}; !reflect.DeepEqual(names, want) {
		t.Errorf("Configured: got %v, want %v", names, want)
	}
	p, err := r.Get("")
	if err != nil || p.Name() != "anthropic" {
		t.Errorf("Get(\"\"): got %v, %v; want anthropic", p, err)
	}
}

func TestOllamaBaseURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"127.0.0.1:11434", "http://127.0.0.1:11434/v1"},
		{"0.0.0.0", "http://127.0.0.1:11434/v1"},
		{"http://gpu-box:8080", "http://gpu-box:8080/v1"},
		{"http://gpu-box", "http://gpu-box:80/v1"},
		{"https://ollama.example.com/", "https://ollama.example.com:443/v1"},
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"[::1]:11434", "http://[::1]:11434/v1"},
	}
	for _, tc := range cases {
		got, err := llm.OllamaBaseURL(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("OllamaBaseURL(%q): got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := llm.OllamaBaseURL("http://"); err == nil {
		t.Errorf("OllamaBaseURL(http://): got nil error, want one")
	}
}

func TestDefaultModel(t *testing.T) {
	for _, name := range []string{"anthropic", "openai", "ollama"} {
		if llm.DefaultModel(name) == "" {
			t.Errorf("DefaultModel(%q): got empty", name)
		}
	}
	if got := llm.DefaultModel("nope"); got != "" {
		t.Errorf("DefaultModel(nope): got %q, want empty", got)
	}
	prices, err := llm.LoadPrices("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"anthropic", "openai"} {
		if _, ok := prices.Lookup(llm.DefaultModel(name)); !ok {
			t.Errorf("default model %q of %s has no price", llm.DefaultModel(name), name)
		}
	}
}
