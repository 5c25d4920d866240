package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/prompt"
)

// recallAtStart is how many memories relevant to a run's input go in its
// prompt.
const recallAtStart = 5

// promptParts are the parts of the system prompt gathered once per run.
type promptParts struct {
	skills   string   // the skill index
	memories []string // recalled facts, "[id] text"
	brain    []prompt.BrainPage
}

// promptExtra recalls the memories relevant to the run's input (when the
// agent has the memory capability) and reads its skill index (skills). A
// failure costs the prompt that part, not the run.
func (s *Service) promptExtra(ctx context.Context, a agent.Agent, r *Run) promptParts {
	var p promptParts
	if s.memory != nil && slices.Contains(a.Capabilities, "memory") && strings.TrimSpace(r.Input) != "" {
		found, err := s.memory.Recall(ctx, a.ID, r.Input, recallAtStart)
		if err != nil {
			s.log.Warn("recall memories for the prompt", "run", r.ID, "err", err)
		}
		for _, m := range found {
			p.memories = append(p.memories, fmt.Sprintf("[%s] %s", m.ID, m.Text))
		}
		if len(found) > 0 {
			s.changed("memory.changed", a.ID) // strengths moved
		}
	}
	if s.skills != nil && slices.Contains(a.Capabilities, "skills") {
		idx, err := s.skillIndex(ctx, a) // its own skills and its apps'
		if err != nil {
			s.log.Warn("read skill index for the prompt", "run", r.ID, "err", err)
		}
		p.skills = idx
	}
	p.brain = s.brainPages(ctx, r) // every agent reads the Brain
	return p
}

// changed tells the UI an agent's memories or skills changed.
func (s *Service) changed(kind, agentID string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: agentID, Agent: agentID})
	}
}

func (s *Service) variableNames() []string {
	if s.vars == nil {
		return nil
	}
	return s.vars.Names()
}

// system assembles the agent's system prompt.
func (s *Service) system(ctx context.Context, a agent.Agent, extra promptParts) string {
	boxName := ""
	if b, err := s.boxes.Get(ctx, a.BoxID); err == nil {
		boxName = b.Name
	}
	return prompt.System(prompt.Input{
		Name: a.Name, Handle: a.Handle, Box: boxName, Soul: a.Soul,
		Guide: s.guide(a), Skills: extra.skills, Memories: extra.memories, Variables: s.variableNames(),
		Brain: extra.brain, BrainPropose: s.brain != nil && canPropose(a),
		Now: s.cfg.Now().In(s.cfg.Location),
	})
}
