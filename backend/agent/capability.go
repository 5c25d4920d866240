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

// AskFirstFamilies are the tool families whose tools act on something (run a
// command, change a database, send a request, write a file…), so a person may
// want to approve each use. The runtime decides per call whether it acts: a
// query or a GET is never held.
var AskFirstFamilies = []string{"files", "shell", "database", "web", "soul", "agents", "memory", "skills"}

// defaultAskFirst is on for what is hard to undo: shell commands, database
// changes and web POSTs.
var defaultAskFirst = map[string]bool{"shell": true, "database": true, "web": true}

// AskFirst says, per family, whether the agent must get a person's approval
// before a tool of that family acts.
type AskFirst map[string]bool

// DefaultAskFirst is the policy of a new agent.
func DefaultAskFirst() AskFirst {
	out := AskFirst{}
	for _, f := range AskFirstFamilies {
		out[f] = defaultAskFirst[f]
	}
	return out
}

// merge applies a partial policy on top of p, refusing unknown families.
func (p AskFirst) merge(change map[string]bool) (AskFirst, error) {
	out := DefaultAskFirst()
	for k, v := range p {
		if slices.Contains(AskFirstFamilies, k) {
			out[k] = v
		}
	}
	for k, v := range change {
		if !slices.Contains(AskFirstFamilies, k) {
			return nil, fault.Invalid("%q has no ask-first switch; the families with one are %v", k, AskFirstFamilies)
		}
		out[k] = v
	}
	return out, nil
}
