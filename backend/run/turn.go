package run

import (
	"context"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/llm"
)

// loop alternates model turns and tool calls until the model answers without
// calling a tool. It returns how the run ends and its closing step.
func (s *Service) loop(ctx context.Context, r *Run) (Status, string, any) {
	bg := context.WithoutCancel(ctx)
	a, err := s.agents.Get(bg, r.AgentID)
	if err != nil {
		return Failed, "", ErrorData{"the agent no longer exists"}
	}
	sess, err := s.Session(bg, r.SessionID)
	if err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	s.testAnsweredApps(bg, r) // an app set up from a card offers its tools to this run already
	tools := s.toolsFor(bg, a)
	specs := make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = llm.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.Schema}
	}
	caller := &agentCaller{s: s, run: r}
	env := s.toolEnv(a, r, caller)
	if err := s.settle(ctx, r, tools, env, caller); err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	if ctx.Err() != nil {
		// Stopped while an approved action ran: the rest of the card is
		// settled at the next start, which knows which actions started.
		st, closing := s.stopped(ctx)
		return st, "", closing
	}
	if err := s.closeInterrupted(bg, r); err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	// Recalled once, before the first turn, and kept for the whole run: the
	// prompt stays the same from turn to turn, and a recall reinforces.
	extra := s.promptExtra(bg, a, r)

	wantProvider, wantModel := a.Provider, a.Model
	if sess.Provider != "" || sess.Model != "" {
		wantProvider, wantModel = sess.Provider, sess.Model
	}
	for {
		if ctx.Err() != nil {
			st, closing := s.stopped(ctx)
			return st, "", closing
		}
		if r.Steps >= s.cfg.MaxSteps {
			return Failed, "", ErrorData{fmt.Sprintf("the run reached its limit of %d steps and was stopped; ask again to continue", s.cfg.MaxSteps)}
		}
		p, providerName, model, err := s.models.Pick(wantProvider, wantModel)
		if err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		msgs, err := s.history(ctx, r, p, providerName, model)
		if err != nil {
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{err.Error()}
		}
		system := s.system(bg, a, extra)
		started := s.now()
		resp, err := p.Chat(ctx, llm.Request{Model: model, System: system, Messages: msgs, Tools: specs, MaxTokens: s.cfg.MaxTokens},
			func(d llm.Delta) {
				if s.bus != nil && d.Text != "" {
					s.bus.Publish(event.Change{Workspace: s.workspace, Kind: event.KindDelta, ID: r.ID, Agent: r.AgentID, Session: r.SessionID, Text: d.Text})
				}
			})
		if err != nil {
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{fmt.Sprintf("the model call failed: %v", err)}
		}
		usd, known := s.models.Cost(model, resp.Usage)
		md := ModelData{Text: resp.Text(), StopReason: resp.StopReason, Provider: providerName, Model: model, Usage: resp.Usage, CostKnown: known, ToolCalls: []ToolCall{}}
		for _, c := range resp.ToolCalls() {
			md.ToolCalls = append(md.ToolCalls, ToolCall{ID: c.ToolCallID, Name: c.ToolName, Input: c.Input})
		}
		if err := s.record(bg, r, StepModel, md, started, &stepCost{resp.Usage, usd, known, providerName, model}); err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		if len(md.ToolCalls) == 0 {
			return Done, md.Text, nil
		}
		switch t, err := s.runTools(ctx, r, a, tools, env, caller, md); {
		case err != nil:
			return Failed, "", ErrorData{err.Error()}
		case t != turnDone:
			return Paused, md.Text, nil
		}
	}
}

// closeInterrupted records a result for a tool call left without one by a
// crash, so the model hears it was interrupted rather than the app silently
// running it again.
func (s *Service) closeInterrupted(ctx context.Context, r *Run) error {
	steps, err := s.Steps(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, c := range unanswered(steps) {
		s.log.Warn("tool call interrupted by a restart", "run", r.ID, "tool", c.Name)
		if err := s.record(ctx, r, StepToolResult, ToolResultData{ID: c.ID, Name: c.Name, Output: interruptedOutput, IsError: true, Via: c.Via}, s.now(), nil); err != nil {
			return err
		}
	}
	return nil
}
