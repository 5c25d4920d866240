package agent

import (
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Capability is a family of tools the user switches on or off per agent.
type Capability struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description"`
	// Default says whether a new agent starts with it on.
	Default bool `json:"default"`
}

// Capabilities lists the tool families, in the order the UI shows them.
var Capabilities = []Capability{
	{"files", "Files", "Read and write its own folder and the workspace's shared folder.", true},
	{"shell", "Shell", "Run commands on this computer, inside its own folder.", false},
	{"browser", "Browser", "Drive its own Chromium browser; you can watch and take over.", true},
	{"database", "Database", "Query and change its own database and the shared database.", true},
	{"memory", "Memory", "Remember facts and recall them later.", true},
	{"skills", "Skills", "Load written procedures when a task matches them.", true},
	{"soul", "Soul", "Rewrite its own soul as it learns.", false},
	{"agents", "Coworkers", "Call other coworkers of the workspace by @handle.", true},
	{"human", "Human in the loop", "Ask you questions, approvals and credentials; notify you.", true},
	{"web", "Web fetch", "Fetch web pages and APIs.", true},
	{"connectors", "Apps and MCP servers", "Use the apps and MCP servers installed on it.", true},
}

// DefaultCapabilities are the families a new agent starts with.
func DefaultCapabilities() []string {
	var out []string
	for _, c := range Capabilities {
		if c.Default {
			out = append(out, c.ID)
		}
	}
	return out
}

// normalizeCapabilities checks every id is a known family and returns them
// deduplicated in catalog order.
func normalizeCapabilities(ids []string) ([]string, error) {
	known := make([]string, len(Capabilities))
	for i, c := range Capabilities {
		known[i] = c.ID
	}
	for _, id := range ids {
		if !slices.Contains(known, id) {
			return nil, fault.Invalid("unknown capability %q; known ones are %v", id, known)
		}
	}
	out := []string{}
	for _, k := range known {
		if slices.Contains(ids, k) {
			out = append(out, k)
		}
	}
	return out, nil
}
