package run

import (
	"context"
	"path/filepath"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

func (s *Service) toolEnv(a agent.Agent, r *Run, caller *agentCaller) *tool.Env {
	dir := s.agents.Dir(a.ID)
	env := &tool.Env{
		AgentID: a.ID, AgentName: a.Name, AgentHandle: a.Handle,
		FilesDir: filepath.Join(dir, "files"), SharedDir: s.sharedDir,
		AgentDB: filepath.Join(dir, "agent.db"), SharedDB: s.sharedDB,
		NoNetwork: !a.Network,
		Souls:     soulWriter{s.agents}, Agents: caller,
		// The tool call being executed is the run's latest step.
		RunID: r.ID, Step: func() int { return r.Steps },
	}
	if s.memory != nil {
		env.Memories = memories{s.memory, s}
	}
	if s.vars != nil {
		env.Vars = s.vars
	}
	if s.notifier != nil {
		env.Notifier = notifier{s, r}
	}
	if s.skills != nil {
		env.Skills = skills{s.skills, s}
	}
	return env
}

// memories is the memory service as the tools see it: the agent's own
// writes (and recalls, which move strengths) refresh an open Memory tab.
type memories struct {
	*memory.Service
	s *Service
}

func (m memories) Remember(ctx context.Context, agentID, text string, src memory.Source, opts memory.RememberOptions) (memory.Remembered, error) {
	out, err := m.Service.Remember(ctx, agentID, text, src, opts)
	if err == nil {
		m.s.changed("memory.changed", agentID)
	}
	return out, err
}

func (m memories) Recall(ctx context.Context, agentID, query string, k int) ([]memory.Scored, error) {
	out, err := m.Service.Recall(ctx, agentID, query, k)
	if len(out) > 0 {
		m.s.changed("memory.changed", agentID)
	}
	return out, err
}

func (m memories) Forget(ctx context.Context, id string) error {
	mem, err := m.Service.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := m.Service.Forget(ctx, id); err != nil {
		return err
	}
	m.s.changed("memory.changed", mem.AgentID)
	return nil
}

// skills is the skill service as the tools see it: upsert_skill refreshes
// an open Skills tab.
type skills struct {
	*skill.Service
	s *Service
}

func (k skills) Upsert(ctx context.Context, agentID, name, skillMD string, files map[string][]byte) (skill.Skill, error) {
	out, err := k.Service.Upsert(ctx, agentID, name, skillMD, files)
	if err == nil {
		k.s.changed("skill.changed", agentID)
	}
	return out, err
}

// notifier is the notify tool's way to the person.
type notifier struct {
	s   *Service
	run *Run
}

func (n notifier) Notify(ctx context.Context, kind, title, body string) error {
	return n.s.notifier.Notify(ctx, Notice{AgentID: n.run.AgentID, RunID: n.run.ID, Kind: kind,
		Title: title, Body: body, Automated: n.s.automated(ctx, *n.run)})
}

type soulWriter struct{ agents *agent.Service }

func (w soulWriter) UpdateSoul(ctx context.Context, agentID, soul string) error {
	_, err := w.agents.Update(ctx, agentID, agent.Update{Soul: &soul, SoulAuthor: agent.SoulByAgent})
	return err
}
