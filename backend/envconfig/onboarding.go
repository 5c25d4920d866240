package envconfig

import (
	"os"
	"strings"
)

// Onboarding reports whether a workspace created on first start begins
// with the Foreman's onboarding: yes unless RERUN_ONBOARDING is "off" (or
// "0", "false", "no"), which the e2e tests set.
func Onboarding() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv("RERUN_ONBOARDING"))) {
	case "off", "0", "false", "no":
		return false
	}
	return true
}

// Firecrawl is the Firecrawl API key and base URL the Foreman reads
// websites with: FIRECRAWL_API_KEY (none: it uses its browser) and
// FIRECRAWL_BASE_URL ("" is https://api.firecrawl.dev).
func Firecrawl() (apiKey, baseURL string) {
	return strings.TrimSpace(os.Getenv("FIRECRAWL_API_KEY")), strings.TrimSpace(os.Getenv("FIRECRAWL_BASE_URL"))
}
