package run

import (
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// SourceGuide is a ToolSource that also writes the capability guide of the
// tools it gives an agent: a few markdown lines, or "" when it gives none.
type SourceGuide interface {
	ToolSource
	Guide(a agent.Agent) string
}

// guide is the capability guide of the agent's prompt: package tool's
// families, then what each source that writes one adds.
func (s *Service) guide(a agent.Agent) string {
	parts := []string{tool.Guide(a.Capabilities)}
	for _, src := range s.sources {
		if g, ok := src.(SourceGuide); ok {
			parts = append(parts, g.Guide(a))
		}
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "\n\n")
}
