package workspace

import "github.com/rerun-build/rerun-desktop/backend/secret"

// appSecrets are the app's own secrets from its configuration: no agent
// references them, but a command may still find one (in a file, a process's
// environment), so every workspace masks them like its variables.
func (c Config) appSecrets() map[string]string {
	return map[string]string{
		"OPENAI_API_KEY":      c.LLM.OpenAIKey,
		"ANTHROPIC_API_KEY":   c.LLM.AnthropicKey,
		"FIRECRAWL_API_KEY":   c.FirecrawlAPIKey,
		"RERUN_EMBED_API_KEY": c.EmbedAPIKey,
	}
}

// maskRelay has vars mask the secrets of the workspace's relay link (none
// when l is nil: unlinked).
func maskRelay(vars *secret.Variables, l *relayLink) {
	if vars == nil {
		return
	}
	var values map[string]string
	if l != nil {
		values = map[string]string{"RELAY_SECRET": l.Secret, "RELAY_SYNC_KEY": string(l.SyncKey)}
	}
	vars.Mask("relay", values)
}
