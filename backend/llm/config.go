package llm

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Provider ids.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
	ProviderOllama    = "ollama"
)

// ErrNotConfigured is returned (wrapped, with what to do) by Registry.Get
// for a provider that has no key or host.
var ErrNotConfigured = errors.New("model provider not configured")

// notConfiguredError is an ErrNotConfigured whose text is only what to do,
// so it reads well where it is shown as it is (a run's error, the chat).
type notConfiguredError struct{ msg string }

func (e notConfiguredError) Error() string        { return e.msg }
func (e notConfiguredError) Is(target error) bool { return target == ErrNotConfigured }

func notConfigured(msg string) error { return notConfiguredError{msg} }

// Config is the model setup from the environment, filled by the caller
// (backend/envconfig); this package reads no environment variables.
type Config struct {
	AnthropicKey     string // ANTHROPIC_API_KEY
	AnthropicBaseURL string // ANTHROPIC_BASE_URL; default the public API
	OpenAIKey        string // OPENAI_API_KEY
	OpenAIBaseURL    string // OPENAI_BASE_URL; default the public API
	// OllamaHost is OLLAMA_HOST: "host:port", "http://host:port" or just a
	// host (port 11434). Setting it makes the "ollama" provider available.
	OllamaHost string
	// Retry tunes the retries of every provider; zero means the defaults.
	Retry Retry
}

// ProviderInfo describes a configured provider for the Settings screen.
type ProviderInfo struct {
	Name   string   `json:"name"`   // provider id, for Get
	Label  string   `json:"label"`  // for people
	Models []string `json:"models"` // suggested model ids, the default first
	Source string   `json:"source"` // "env", "app" (key entered in the app) or "local"
}

// Registry hands out the configured providers, each wrapped in WithRetry.
type Registry struct {
	cfg  Config
	keys map[string]string

	mu        sync.Mutex
	providers map[string]Provider
}

// NewRegistry returns a Registry for cfg. keys are the API keys entered in
// the app, by provider id; a non-empty one wins over the environment's.
func NewRegistry(cfg Config, keys map[string]string) *Registry {
	k := make(map[string]string, len(keys))
	for name, v := range keys {
		if v = strings.TrimSpace(v); v != "" {
			k[name] = v
		}
	}
	return &Registry{cfg: cfg, keys: k, providers: map[string]Provider{}}
}

// key returns provider's key and where it came from ("" when none).
func (r *Registry) key(provider, env string) (key, source string) {
	if k := r.keys[provider]; k != "" {
		return k, "app"
	}
	if env = strings.TrimSpace(env); env != "" {
		return env, "env"
	}
	return "", ""
}

// Configured lists the providers that can be used, in order of preference:
// anthropic, openai, ollama. It does not touch the network: a configured
// Ollama host may still be down.
func (r *Registry) Configured() []ProviderInfo {
	var out []ProviderInfo
	if _, src := r.key(ProviderAnthropic, r.cfg.AnthropicKey); src != "" {
		out = append(out, ProviderInfo{Name: ProviderAnthropic, Label: "Anthropic", Models: slices.Clone(suggestedModels[ProviderAnthropic]), Source: src})
	}
	if _, src := r.key(ProviderOpenAI, r.cfg.OpenAIKey); src != "" {
		out = append(out, ProviderInfo{Name: ProviderOpenAI, Label: "OpenAI", Models: slices.Clone(suggestedModels[ProviderOpenAI]), Source: src})
	}
	if strings.TrimSpace(r.cfg.OllamaHost) != "" {
		out = append(out, ProviderInfo{Name: ProviderOllama, Label: "Ollama (local)", Models: slices.Clone(suggestedModels[ProviderOllama]), Source: "local"})
	}
	return out
}

// Get returns the named provider, wrapped in WithRetry. An empty name means
// the first configured one (see Configured). A provider without a key or
// host gives an error wrapping ErrNotConfigured that says how to set it up.
func (r *Registry) Get(provider string) (Provider, error) {
	if provider == "" {
		conf := r.Configured()
		if len(conf) == 0 {
			return nil, notConfigured("no model provider is configured: add an Anthropic or OpenAI key in Settings → Models, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or start Ollama and set OLLAMA_HOST")
		}
		provider = conf[0].Name
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.providers[provider]; ok {
		return p, nil
	}
	var p Provider
	switch provider {
	case ProviderAnthropic:
		key, _ := r.key(ProviderAnthropic, r.cfg.AnthropicKey)
		if key == "" {
			return nil, notConfigured("Anthropic has no API key: add one in Settings → Models or set ANTHROPIC_API_KEY")
		}
		p = NewAnthropic(AnthropicConfig{APIKey: key, BaseURL: r.cfg.AnthropicBaseURL})
	case ProviderOpenAI:
		key, _ := r.key(ProviderOpenAI, r.cfg.OpenAIKey)
		if key == "" {
			return nil, notConfigured("OpenAI has no API key: add one in Settings → Models or set OPENAI_API_KEY")
		}
		p = NewOpenAI(OpenAIConfig{APIKey: key, BaseURL: r.cfg.OpenAIBaseURL})
	case ProviderOllama:
		if strings.TrimSpace(r.cfg.OllamaHost) == "" {
			return nil, notConfigured("Ollama is not set up: start Ollama (ollama serve) and set OLLAMA_HOST, e.g. OLLAMA_HOST=127.0.0.1:11434")
		}
		base, err := OllamaBaseURL(r.cfg.OllamaHost)
		if err != nil {
			return nil, err
		}
		p = NewOpenAI(OpenAIConfig{Name: ProviderOllama, APIKey: "ollama", BaseURL: base})
	default:
		return nil, notConfigured(fmt.Sprintf("unknown model provider %q; use anthropic, openai or ollama", provider))
	}
	p = WithRetry(p, r.cfg.Retry)
	r.providers[provider] = p
	return p, nil
}

// OllamaBaseURL turns an OLLAMA_HOST value into the base URL of Ollama's
// OpenAI-compatible API, reading it as Ollama does: a bare host gets port
// 11434, an explicit http:// or https:// URL its scheme's port, and a
// bind-all address means this machine ("0.0.0.0" → http://127.0.0.1:11434/v1).
func OllamaBaseURL(host string) (string, error) {
	host = strings.TrimSpace(host)
	defaultPort := "11434"
	scheme, rest, ok := strings.Cut(host, "://")
	switch {
	case !ok:
		scheme, rest = "http", host
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	u, err := url.Parse(scheme + "://" + rest)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("OLLAMA_HOST %q is not a host: use host:port, e.g. 127.0.0.1:11434", host)
	}
	h, port := u.Hostname(), u.Port()
	if h == "" || h == "0.0.0.0" || h == "::" {
		// A bind-all address is where Ollama listens, not where to call it.
		h = "127.0.0.1"
	}
	if port == "" {
		port = defaultPort
	}
	u.Host = net.JoinHostPort(h, port)
	u.Path = strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(u.Path, "/v1") {
		u.Path += "/v1"
	}
	return u.String(), nil
}

// suggestedModels are offered in the model picker, the default first.
var suggestedModels = map[string][]string{
	ProviderAnthropic: {"claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5"},
	ProviderOpenAI:    {"gpt-5-mini", "gpt-5", "gpt-4.1", "gpt-4.1-mini", "o4-mini"},
	ProviderOllama:    {"qwen3", "llama3.2", "gpt-oss:20b"},
}

// DefaultModel is the model an agent uses when it names none; "" for an
// unknown provider.
func DefaultModel(provider string) string {
	if m := suggestedModels[provider]; len(m) > 0 {
		return m[0]
	}
	return ""
}
