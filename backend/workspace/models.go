package workspace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Models is the model configuration of this computer: providers from the
// environment plus keys entered in Settings → Models (sealed in
// <data-dir>/models.json under <data-dir>/secret.key). It picks the model for
// each run and prices its calls.
type Models struct {
	env    llm.Config
	path   string
	box    *secret.Box
	prices *llm.Prices

	mu    sync.Mutex
	saved map[string]savedProvider // by provider name
	reg   *llm.Registry
}

type savedProvider struct {
	APIKey  string `json:"api_key,omitempty"` // sealed
	BaseURL string `json:"base_url,omitempty"`
}

// ProviderSetting is one row of Settings → Models. It never carries a key.
type ProviderSetting struct {
	Name       string `json:"name"`
	Label      string `json:"label"`
	Configured bool   `json:"configured"`
	Source     string `json:"source"` // "", "env", "app", "local"
	Hint       string `json:"hint"`
	BaseURL    string `json:"base_url"`
}

var knownProviders = []struct{ name, label, hint string }{
	{"anthropic", "Anthropic", "Claude models. Paste an API key from console.anthropic.com, or set ANTHROPIC_API_KEY."},
	{"openai", "OpenAI-compatible", "OpenAI, OpenRouter, LM Studio or vLLM. Paste a key (and a base URL for other services), or set OPENAI_API_KEY / OPENAI_BASE_URL."},
	{"ollama", "Ollama", "Models running on this computer. Start Ollama and set its address (default http://127.0.0.1:11434), or set OLLAMA_HOST."},
}

func openModels(dataDir string, env llm.Config) (*Models, error) {
	box, err := secret.OpenBox(filepath.Join(dataDir, "secret.key"))
	if err != nil {
		return nil, err
	}
	prices, err := llm.LoadPrices(filepath.Join(dataDir, "prices.json"))
	if err != nil {
		return nil, err
	}
	m := &Models{env: env, path: filepath.Join(dataDir, "models.json"), box: box, prices: prices, saved: map[string]savedProvider{}}
	b, err := os.ReadFile(m.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", m.path, err)
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m.saved); err != nil {
			return nil, fmt.Errorf("read %s: %w (fix or delete the file)", m.path, err)
		}
	}
	m.rebuild()
	return m, nil
}

// rebuild makes the registry from the environment and the saved settings;
// settings made in the app win over the environment. m.mu is held (or m not
// yet shared).
func (m *Models) rebuild() {
	cfg := m.env
	keys := map[string]string{}
	for name, sp := range m.saved {
		if sp.APIKey != "" {
			if k, err := m.box.Open(sp.APIKey, name); err == nil {
				keys[name] = k
			}
		}
		switch name {
		case "anthropic":
			if sp.BaseURL != "" {
				cfg.AnthropicBaseURL = sp.BaseURL
			}
		case "openai":
			if sp.BaseURL != "" {
				cfg.OpenAIBaseURL = sp.BaseURL
			}
		case "ollama":
			if sp.BaseURL != "" {
				cfg.OllamaHost = sp.BaseURL
			}
		}
	}
	m.reg = llm.NewRegistry(cfg, keys)
}

func (m *Models) registry() *llm.Registry {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reg
}

// Configured lists the providers a run can use now.
func (m *Models) Configured() []llm.ProviderInfo { return m.registry().Configured() }

// Pick implements run.Models: the wanted provider and model, or the first
// configured provider's default model.
func (m *Models) Pick(provider, model string) (llm.Provider, string, string, error) {
	reg := m.registry()
	if provider == "" {
		list := reg.Configured()
		if len(list) == 0 {
			_, err := reg.Get("")
			if err == nil {
				err = llm.ErrNotConfigured
			}
			return nil, "", "", err
		}
		provider = list[0].Name
	}
	p, err := reg.Get(provider)
	if err != nil {
		return nil, "", "", err
	}
	if model == "" {
		model = llm.DefaultModel(provider)
	}
	return p, provider, model, nil
}

// Cost implements run.Models.
func (m *Models) Cost(model string, u llm.Usage) (float64, bool) { return m.prices.Cost(model, u) }

// Settings lists every known provider, configured or not.
func (m *Models) Settings() []ProviderSetting {
	m.mu.Lock()
	saved := m.saved
	m.mu.Unlock()
	configured := map[string]llm.ProviderInfo{}
	for _, p := range m.registry().Configured() {
		configured[p.Name] = p
	}
	var out []ProviderSetting
	for _, k := range knownProviders {
		ps := ProviderSetting{Name: k.name, Label: k.label, Hint: k.hint, BaseURL: saved[k.name].BaseURL}
		if p, ok := configured[k.name]; ok {
			ps.Configured, ps.Source = true, p.Source
		}
		out = append(out, ps)
	}
	return out
}

// Save stores a key and/or base URL entered in the app for provider; an
// empty key keeps the saved one.
func (m *Models) Save(provider, apiKey, baseURL string) error {
	if !slices.ContainsFunc(knownProviders, func(k struct{ name, label, hint string }) bool { return k.name == provider }) {
		return fault.NotFound("no model provider %q; use anthropic, openai or ollama", provider)
	}
	apiKey, baseURL = strings.TrimSpace(apiKey), strings.TrimSpace(baseURL)
	if baseURL != "" && !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return fault.Invalid("base URL %q must start with http:// or https://", baseURL)
	}
	if len(apiKey) > 4096 || strings.ContainsAny(apiKey, " \n\r\t") {
		return fault.Invalid("that does not look like an API key (it has spaces or is very long); paste the key alone")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]savedProvider{}
	for k, v := range m.saved {
		next[k] = v
	}
	sp := next[provider]
	if apiKey != "" {
		sp.APIKey = m.box.Seal(apiKey, provider)
	}
	sp.BaseURL = baseURL
	next[provider] = sp
	if err := m.write(next); err != nil {
		return err
	}
	m.saved = next
	m.rebuild()
	return nil
}

// Forget removes what the app saved for provider.
func (m *Models) Forget(provider string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := map[string]savedProvider{}
	for k, v := range m.saved {
		if k != provider {
			next[k] = v
		}
	}
	if err := m.write(next); err != nil {
		return err
	}
	m.saved = next
	m.rebuild()
	return nil
}

func (m *Models) write(saved map[string]savedProvider) error {
	b, _ := json.MarshalIndent(saved, "", "  ")
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("save model settings: %w", err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		return fmt.Errorf("save model settings: %w", err)
	}
	return nil
}
