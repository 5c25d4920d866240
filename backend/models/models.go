// Package models owns the choice of model for the runs of a workspace: the
// providers configured from the environment, the keys entered in Settings →
// Models (kept as workspace variables), the base URLs and prices this
// computer shares between its workspaces (<data-dir>/models.json,
// prices.json), and the pricing of each call.
package models

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Service picks the model for each run of one workspace and prices its calls.
// The providers come from the environment; keys entered in Settings → Models
// are the workspace's variables ANTHROPIC_API_KEY and OPENAI_API_KEY and win
// over the environment's; base URLs entered there are this computer's
// (<data-dir>/models.json) and shared by every workspace.
type Service struct {
	shared *Shared
	vars   *secret.Variables

	mu    sync.Mutex
	reg   *llm.Registry
	built builtFrom // what reg was made from
}

// builtFrom is what a registry depends on: when the saved settings or a key
// variable change, the next call builds a new one.
type builtFrom struct {
	version uint64
	keys    [2]string // by keyVariables order
}

// keyVariables are the variables holding the provider keys entered in the
// app, by provider. Ollama has no key.
var keyVariables = []struct{ provider, variable string }{
	{llm.ProviderAnthropic, "ANTHROPIC_API_KEY"},
	{llm.ProviderOpenAI, "OPENAI_API_KEY"},
}

func keyVariable(provider string) string {
	for _, k := range keyVariables {
		if k.provider == provider {
			return k.variable
		}
	}
	return ""
}

// Shared is what Settings → Models saves for the whole computer: the base
// URLs, the prices and the environment's configuration. One is shared by the
// Service of every workspace of a data directory.
type Shared struct {
	env    llm.Config
	path   string
	prices *llm.Prices

	mu      sync.Mutex
	saved   map[string]savedProvider // by provider name
	version uint64                   // bumped on every change of saved
}

// savedProvider is one provider in models.json. APIKey is only ever read: it
// is where keys were kept (sealed) before they became workspace variables,
// and MoveSealedKeys moves any it finds into them.
type savedProvider struct {
	APIKey  string `json:"api_key,omitempty"`
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
	{"anthropic", "Anthropic", "Claude models. Paste an API key from console.anthropic.com (kept in this workspace's variables as ANTHROPIC_API_KEY), or set ANTHROPIC_API_KEY in the environment."},
	{"openai", "OpenAI-compatible", "OpenAI, OpenRouter, LM Studio or vLLM. Paste a key (kept in this workspace's variables as OPENAI_API_KEY) and a base URL for other services, or set OPENAI_API_KEY / OPENAI_BASE_URL in the environment."},
	{"ollama", "Ollama", "Models running on this computer. Start Ollama and set its address (default http://127.0.0.1:11434), or set OLLAMA_HOST."},
}

// OpenShared reads the settings of the data directory dataDir over the
// environment's configuration env.
func OpenShared(dataDir string, env llm.Config) (*Shared, error) {
	prices, err := llm.LoadPrices(filepath.Join(dataDir, "prices.json"))
	if err != nil {
		return nil, err
	}
	m := &Shared{env: env, path: filepath.Join(dataDir, "models.json"), prices: prices, saved: map[string]savedProvider{}}
	b, err := os.ReadFile(m.path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", m.path, err)
	}
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m.saved); err != nil {
			return nil, fmt.Errorf("read %s: %w (fix or delete the file)", m.path, err)
		}
	}
	return m, nil
}

// config is the environment's configuration with the saved base URLs over
// it, and the version it is of.
func (m *Shared) config() (llm.Config, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cfg := m.env
	for name, sp := range m.saved {
		if sp.BaseURL == "" {
			continue
		}
		switch name {
		case llm.ProviderAnthropic:
			cfg.AnthropicBaseURL = sp.BaseURL
		case llm.ProviderOpenAI:
			cfg.OpenAIBaseURL = sp.BaseURL
		case llm.ProviderOllama:
			cfg.OllamaHost = sp.BaseURL
		}
	}
	return cfg, m.version
}

func (m *Shared) baseURL(provider string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.saved[provider].BaseURL
}

// change saves the result of edit applied to a copy of the saved settings.
func (m *Shared) change(edit func(map[string]savedProvider)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	next := maps.Clone(m.saved)
	edit(next)
	for name, sp := range next {
		if sp == (savedProvider{}) {
			delete(next, name)
		}
	}
	b, _ := json.MarshalIndent(next, "", "  ")
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("save model settings: %w", err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		return fmt.Errorf("save model settings: %w", err)
	}
	m.saved = next
	m.version++
	return nil
}

// sealedKeys returns the keys still sealed in models.json, by provider.
func (m *Shared) sealedKeys() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for name, sp := range m.saved {
		if sp.APIKey != "" {
			out[name] = sp.APIKey
		}
	}
	return out
}

// Deps are what a workspace's Service reads: the computer's settings and
// the workspace's variables, where the keys entered in the app are kept.
type Deps struct {
	Shared    *Shared
	Variables *secret.Variables
}

// New returns the Service of one workspace.
func New(d Deps) *Service {
	return &Service{shared: d.Shared, vars: d.Variables}
}

// registry returns the registry for the current settings and key variables,
// building a new one when either changed since the last call.
func (m *Service) registry() *llm.Registry {
	cfg, version := m.shared.config()
	from := builtFrom{version: version}
	keys := map[string]string{}
	for i, k := range keyVariables {
		if v, ok := m.vars.Lookup(k.variable); ok {
			from.keys[i], keys[k.provider] = v, v
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.reg == nil || m.built != from {
		m.reg, m.built = llm.NewRegistry(cfg, keys), from
	}
	return m.reg
}

// Configured lists the providers a run can use now.
func (m *Service) Configured() []llm.ProviderInfo { return m.registry().Configured() }

// Pick implements run.Models: the wanted provider and model, or the first
// configured provider's default model.
func (m *Service) Pick(provider, model string) (llm.Provider, string, string, error) {
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
func (m *Service) Cost(model string, u llm.Usage) (float64, bool) {
	return m.shared.prices.Cost(model, u)
}

// Settings lists every known provider, configured or not.
func (m *Service) Settings() []ProviderSetting {
	configured := map[string]llm.ProviderInfo{}
	for _, p := range m.registry().Configured() {
		configured[p.Name] = p
	}
	var out []ProviderSetting
	for _, k := range knownProviders {
		ps := ProviderSetting{Name: k.name, Label: k.label, Hint: k.hint, BaseURL: m.shared.baseURL(k.name)}
		if p, ok := configured[k.name]; ok {
			ps.Configured, ps.Source = true, p.Source
		}
		out = append(out, ps)
	}
	return out
}

func checkProvider(provider string) error {
	if !slices.ContainsFunc(knownProviders, func(k struct{ name, label, hint string }) bool { return k.name == provider }) {
		return fault.NotFound("no model provider %q; use anthropic, openai or ollama", provider)
	}
	return nil
}

// Save stores a key entered in the app for provider as this workspace's
// variable (an empty key keeps the one there is) and, when baseURL is not
// nil, the provider's base URL for every workspace ("" removes it).
func (m *Service) Save(ctx context.Context, provider, apiKey string, baseURL *string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	apiKey = strings.TrimSpace(apiKey)
	if len(apiKey) > 4096 || strings.ContainsAny(apiKey, " \n\r\t") {
		return fault.Invalid("that does not look like an API key (it has spaces or is very long); paste the key alone")
	}
	variable := keyVariable(provider)
	if apiKey != "" && variable == "" {
		return fault.Invalid("%s takes no API key; set only its address", provider)
	}
	var url string
	if baseURL != nil {
		url = strings.TrimSpace(*baseURL)
		if url != "" && !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
			return fault.Invalid("base URL %q must start with http:// or https://", url)
		}
	}
	if apiKey != "" {
		if _, err := m.vars.Set(ctx, variable, apiKey); err != nil {
			return fmt.Errorf("save %s key: %w", provider, err)
		}
	}
	if baseURL == nil {
		return nil
	}
	return m.shared.change(func(saved map[string]savedProvider) {
		sp := saved[provider]
		sp.BaseURL = url
		saved[provider] = sp
	})
}

// Forget removes the key entered in the app for provider from this
// workspace's variables; for Ollama, which has no key, it removes the saved
// address. Base URLs of the other providers stay (they are every
// workspace's).
func (m *Service) Forget(ctx context.Context, provider string) error {
	if err := checkProvider(provider); err != nil {
		return err
	}
	variable := keyVariable(provider)
	if variable == "" {
		return m.shared.change(func(saved map[string]savedProvider) { delete(saved, provider) })
	}
	if err := m.vars.Delete(ctx, variable); err != nil && !errors.Is(err, fault.ErrNotFound) {
		return fmt.Errorf("forget %s key: %w", provider, err)
	}
	return nil
}

// MoveSealedKeys moves the provider keys that older versions sealed in
// models.json into the variables of every open workspace (by workspace id;
// unless one is set there already), then drops them from models.json. A key
// that opens with none of boxes stays where it is, and is reported.
func (m *Shared) MoveSealedKeys(ctx context.Context, boxes []*secret.Box, workspaces map[string]*secret.Variables, log *slog.Logger) error {
	sealed := m.sealedKeys()
	if len(sealed) == 0 {
		return nil
	}
	moved := map[string]bool{}
	for provider, s := range sealed {
		variable := keyVariable(provider)
		if variable == "" {
			moved[provider] = true // a key for a provider that takes none was never used
			continue
		}
		key, err := openSealed(boxes, s, provider)
		if err != nil {
			log.Warn("a saved model key could not be opened; enter it again in Settings → Models", "provider", provider, "err", err)
			continue
		}
		ok := true
		for id, vars := range workspaces {
			if vars.Has(variable) {
				continue
			}
			if _, err := vars.Set(ctx, variable, key); err != nil {
				log.Warn("move a saved model key into workspace variables", "provider", provider, "workspace", id, "err", err)
				ok = false
			}
		}
		moved[provider] = ok
	}
	err := m.change(func(saved map[string]savedProvider) {
		for provider, done := range moved {
			if done {
				sp := saved[provider]
				sp.APIKey = ""
				saved[provider] = sp
			}
		}
	})
	if err != nil {
		return fmt.Errorf("move saved model keys into variables: %w", err)
	}
	for provider, done := range moved {
		if done {
			log.Info("moved a saved model key into workspace variables", "provider", provider)
		}
	}
	return nil
}

func openSealed(boxes []*secret.Box, sealed, label string) (string, error) {
	err := errors.New("no key to open it with")
	for _, b := range boxes {
		var plain string
		if plain, err = b.Open(sealed, label); err == nil {
			return plain, nil
		}
	}
	return "", err
}
