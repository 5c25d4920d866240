// Package envconfig is the one place Rerun reads its environment variables.
//
// Every other package takes its settings as arguments or Config fields; only
// main (and tests) call in here.
package envconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
)

// Home is RERUN_HOME: the data directory, overriding the OS default.
func Home() string { return os.Getenv("RERUN_HOME") }

// DefaultDataDir is where Rerun keeps its workspaces when neither --data-dir nor
// RERUN_HOME says otherwise: $XDG_DATA_HOME/rerun (~/.local/share/rerun) on
// Linux and BSDs, ~/Library/Application Support/Rerun on macOS, %AppData%\Rerun
// on Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "plan9":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(dir, "Rerun"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "rerun"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "rerun"), nil
}

// DataDir resolves the data directory: the flag value if set, else RERUN_HOME,
// else DefaultDataDir.
func DataDir(flag string) (string, error) {
	if flag != "" {
		return filepath.Abs(flag)
	}
	if h := Home(); h != "" {
		return filepath.Abs(h)
	}
	return DefaultDataDir()
}

// LLM is the model configuration from the environment: ANTHROPIC_API_KEY,
// ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL and OLLAMA_HOST (a bare
// host:port gets http://).
func LLM() llm.Config {
	ollama := strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	if ollama != "" && !strings.Contains(ollama, "://") {
		ollama = "http://" + ollama
	}
	return llm.Config{
		AnthropicKey:     strings.TrimSpace(os.Getenv("ANTHROPIC_API_KEY")),
		AnthropicBaseURL: strings.TrimSpace(os.Getenv("ANTHROPIC_BASE_URL")),
		OpenAIKey:        strings.TrimSpace(os.Getenv("OPENAI_API_KEY")),
		OpenAIBaseURL:    strings.TrimSpace(os.Getenv("OPENAI_BASE_URL")),
		OllamaHost:       ollama,
	}
}

// Workers is RERUN_WORKERS: how many runs execute at once (0: the default).
func Workers() int {
	n, _ := strconv.Atoi(os.Getenv("RERUN_WORKERS"))
	return n
}

// Chrome is RERUN_CHROME: the Chromium or Chrome the agents' browsers run (a
// path, or a name looked up in PATH). Empty: the usual places of this OS.
func Chrome() string { return strings.TrimSpace(os.Getenv("RERUN_CHROME")) }

// Embedder is the embeddings endpoint for recall by meaning:
// RERUN_EMBED_BASE_URL (any OpenAI-compatible /v1, Ollama's
// http://localhost:11434/v1 included), RERUN_EMBED_API_KEY and
// RERUN_EMBED_MODEL. With neither a key nor a base URL, memories are recalled
// by keywords only.
func Embedder() (baseURL, apiKey, model string) {
	return strings.TrimSpace(os.Getenv("RERUN_EMBED_BASE_URL")),
		strings.TrimSpace(os.Getenv("RERUN_EMBED_API_KEY")),
		strings.TrimSpace(os.Getenv("RERUN_EMBED_MODEL"))
}

// Keychain is RERUN_KEYCHAIN: whether the key that seals the workspace
// variables may be kept in the OS keychain. On unless set to off (or 0, false,
// no): headless servers, CI and tests keep it in <data-dir>/secret.key.
func Keychain() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("RERUN_KEYCHAIN"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// Timezone is the user's IANA time zone name, for schedules that name none:
// TZ when it names a zone (":Europe/Berlin" and zoneinfo paths too), else
// the zone /etc/localtime links to, else "UTC". time.Local cannot say: it
// is named "Local", which means nothing on another device the workspace
// syncs to.
func Timezone() string { return timezone(os.Getenv("TZ"), "/etc/localtime") }

func timezone(tz, localtime string) string {
	candidates := []string{strings.TrimPrefix(strings.TrimSpace(tz), ":")}
	if target, err := os.Readlink(localtime); err == nil {
		candidates = append(candidates, target)
	}
	for _, c := range candidates {
		// A path such as /usr/share/zoneinfo/Europe/Berlin names the zone
		// after its zoneinfo folder.
		if _, name, ok := strings.Cut(c, "zoneinfo/"); ok {
			c = name
		}
		if c == "" || strings.HasPrefix(c, "/") || strings.EqualFold(c, "local") {
			continue
		}
		if _, err := time.LoadLocation(c); err == nil {
			return c
		}
	}
	return "UTC"
}

// DefaultUpdateFeed is the release feed "Check for updates" reads when
// RERUN_UPDATE_FEED is unset: the newest GitHub release's feed.json (and
// feed.json.sig beside it).
const DefaultUpdateFeed = "https://github.com/rerun-build/rerun-desktop/releases/latest/download/feed.json"

// UpdateFeed is RERUN_UPDATE_FEED: the URL of the release feed, "off" for
// no checks (the tests), unset for DefaultUpdateFeed.
func UpdateFeed() string {
	if v, ok := os.LookupEnv("RERUN_UPDATE_FEED"); ok {
		return strings.TrimSpace(v)
	}
	return DefaultUpdateFeed
}

// DefaultMCPRegistry is the MCP registry the Apps catalog searches when
// RERUN_MCP_REGISTRY is unset: the official one.
const DefaultMCPRegistry = "https://registry.modelcontextprotocol.io"

// MCPRegistry is RERUN_MCP_REGISTRY: the base URL of the MCP registry the
// Apps catalog searches beside its built-in apps (a company's own
// sub-registry), "off" for none, unset for DefaultMCPRegistry. The
// person's choice in Settings → General wins over it.
func MCPRegistry() string {
	if v, ok := os.LookupEnv("RERUN_MCP_REGISTRY"); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return DefaultMCPRegistry
}

// BackupPassphrase is RERUN_BACKUP_PASSPHRASE: the passphrase `rerun backup`
// and `rerun restore` use when no --passphrase-file is given ("": ask).
func BackupPassphrase() string { return os.Getenv("RERUN_BACKUP_PASSPHRASE") }
