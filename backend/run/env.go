package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

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
		Souls: soulWriter{s.agents}, Agents: caller,
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
	_, err := w.agents.Update(ctx, agentID, agent.Update{Soul: &soul})
	return err
}

// agentCaller lets a run call another agent (call_agent): the callee runs in a
// new session linked to the caller, inline, and its answer is the tool result.
type agentCaller struct {
	s   *Service
	run *Run

	mu    sync.Mutex
	child string // the run started by the latest call
}

func (c *agentCaller) CallAgent(ctx context.Context, handle, message string) (string, error) {
	s := c.s
	bg := context.WithoutCancel(ctx)
	target, err := s.agents.ByHandle(bg, strings.TrimSpace(handle))
	if err != nil {
		return "", err
	}
	if target.Builtin != "" {
		// A built-in agent (the Rerun agent, the Foreman) holds tools no
		// coworker may have (the API's, write_brain_page), most of them
		// without a card: it answers the person only.
		return "", fmt.Errorf("@%s is built into Rerun and works only for the person, in its own chat; do it with your own tools, or tell the person what to ask it", target.Handle)
	}
	if c.run.Depth+1 > s.cfg.MaxDepth {
		return "", fmt.Errorf("calls between agents are limited to %d levels; answer with what you have", s.cfg.MaxDepth)
	}
	// Refuse cycles: the target must not be the caller or any run above it.
	for id := c.run.ID; id != ""; {
		up, err := s.Get(bg, id)
		if err != nil {
			return "", err
		}
		if up.AgentID == target.ID {
			return "", fmt.Errorf("@%s is already working on this request further up the chain (a cycle); do not call it again", target.Handle)
		}
		id = up.ParentRunID
	}
	caller, _ := s.agents.Get(bg, c.run.AgentID)
	sess, err := s.NewSession(bg, target.ID, SourceAgent, c.run.ID)
	if err != nil {
		return "", err
	}
	child, err := s.Start(bg, target.ID, sess.ID, SourceAgent, message, StartOptions{From: "@" + caller.Handle, ParentRunID: c.run.ID, Depth: c.run.Depth + 1})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.child = child.ID
	c.mu.Unlock()
	childCtx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.active[child.ID] = cancel
	s.mu.Unlock()
	s.execute(childCtx, child) // inline: the caller's worker waits, so nested calls cannot starve the pool
	cancel(nil)
	s.mu.Lock()
	delete(s.active, child.ID)
	s.mu.Unlock()
	done, err := s.Get(bg, child.ID)
	if err != nil {
		return "", err
	}
	switch done.Status {
	case Done:
		return done.Output, nil
	case Paused:
		return "", errWaiting{child: child.ID, handle: target.Handle}
	case Running:
		return "", errors.New("stopped before @" + target.Handle + " answered")
	default:
		return "", fmt.Errorf("@%s did not finish (%s): %s", target.Handle, done.Status, done.Error)
	}
}
