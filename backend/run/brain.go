package run

import (
	"context"
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/prompt"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// withBrain adds the Brain's tool source to sources.
func withBrain(sources []ToolSource, b *brain.Service, vars Variables) []ToolSource {
	if b == nil {
		return sources
	}
	check, _ := vars.(tool.StoredChecker) // nil: the credential shapes only
	return append(slices.Clip(sources), brainSource{b, check})
}

// brainSource gives every agent read_brain_page while the Brain has pages,
// and agents with the memory capability propose_brain_edit, whose calls
// always wait for a person's approval.
type brainSource struct {
	brain *brain.Service
	check tool.StoredChecker // refuses a variable's value before any card
}

func (src brainSource) Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error) {
	propose := canPropose(a)
	tools := tool.BrainToolsChecked(src.brain, propose, src.check)
	list, err := src.brain.List(ctx)
	if err != nil || len(list) == 0 {
		tools = slices.DeleteFunc(tools, func(t tool.Tool) bool { return t.Name == "read_brain_page" })
	}
	return tools, err
}

func canPropose(a agent.Agent) bool { return slices.Contains(a.Capabilities, tool.BrainFamily) }

// brainPages are the Brain's pages for the prompt; a failure costs the
// prompt its Brain, not the run.
func (s *Service) brainPages(ctx context.Context, r *Run) []prompt.BrainPage {
	if s.brain == nil {
		return nil
	}
	pages, err := s.brain.Pages(ctx)
	if err != nil {
		s.log.Warn("read the Brain for the prompt", "run", r.ID, "err", err)
		return nil
	}
	out := make([]prompt.BrainPage, len(pages))
	for i, p := range pages {
		out[i] = prompt.BrainPage{Title: p.Title, Version: p.Version, Summary: p.Summary.Summary, Body: p.Body}
	}
	return out
}
