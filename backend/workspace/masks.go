package workspace

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
