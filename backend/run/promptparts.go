package run

import (
	"context"
	"fmt"
	"regexp"
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
	memories []string // matched facts, "[id] text"
	brain    []prompt.BrainPage
	// shown are the ids of the memories in the prompt, true once the run
	// cited one (and so reinforced it).
	shown map[string]bool
}

// memoryID finds the ids a model's text cites.
var memoryID = regexp.MustCompile(`\bmem_[a-z0-9]+\b`)

// useCited reinforces the memories of the prompt that text cites by id,
// each once per run: a memory shown at the start gains strength when the
// run uses it, not for being shown.
func (s *Service) useCited(ctx context.Context, agentID string, p *promptParts, text string) {
	if len(p.shown) == 0 || !strings.Contains(text, "mem_") {
		return
	}
	var ids []string
	for _, id := range memoryID.FindAllString(text, -1) {
		if used, ok := p.shown[id]; ok && !used {
			p.shown[id] = true
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	if _, err := s.memory.Use(ctx, agentID, ids...); err != nil {
		s.log.Warn("reinforce the memories a run cited", "agent", agentID, "err", err)
		return
	}
	s.changed("memory.changed", agentID)
}

// promptExtra recalls the memories relevant to the run's input (when the
// agent has the memory capability) and reads its skill index (skills). A
// failure costs the prompt that part, not the run.
func (s *Service) promptExtra(ctx context.Context, a agent.Agent, r *Run) promptParts {
	var p promptParts
	if s.memory != nil && slices.Contains(a.Capabilities, "memory") && strings.TrimSpace(r.Input) != "" {
		// Matched, not recalled: being shown does not reinforce (useCited).
		found, err := s.memory.Match(ctx, a.ID, r.Input, recallAtStart)
		if err != nil {
			s.log.Warn("match memories for the prompt", "run", r.ID, "err", err)
		}
		p.shown = map[string]bool{}
		for _, m := range found {
			p.memories = append(p.memories, fmt.Sprintf("[%s] %s", m.ID, m.Text))
			p.shown[m.ID] = false
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
