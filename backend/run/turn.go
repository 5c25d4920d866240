package run

import (
	"context"
	"errors"
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
	if stop, err := s.budgetStopped(bg, r); err != nil {
		return Failed, "", ErrorData{err.Error()}
	} else if stop {
		return Cancelled, "", CancelData{Reason: "stopped at its budget by you"}
	}
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
	// Matched once, before the first turn, and kept for the whole run: the
	// prompt stays the same from turn to turn.
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
		if held, err := s.holdRun(bg, r); err != nil {
			return Failed, "", ErrorData{err.Error()}
		} else if held {
			return Queued, "", nil
		}
		if r.Steps >= s.cfg.MaxSteps {
			return Failed, "", ErrorData{fmt.Sprintf("the run reached its limit of %d steps and was stopped; ask again to continue", s.cfg.MaxSteps)}
		}
		p, providerName, model, err := s.models.Pick(wantProvider, wantModel)
		if err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		msgs, err := s.history(ctx, r, p, providerName, model)
		if eb := (*errBudget)(nil); errors.As(err, &eb) {
			return s.budgetReached(ctx, r, eb)
		}
		if err != nil {
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{err.Error()}
		}
		system := s.system(bg, a, extra)
		// The answer is capped to what the budgets leave, and its worst case
		// reserved until its step is committed.
		maxTokens, release, err := s.reserve(bg, r, model, estimateInput(system, msgs, specs), s.cfg.MaxTokens)
		if eb := (*errBudget)(nil); errors.As(err, &eb) {
			return s.budgetReached(ctx, r, eb)
		}
		if err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		started := s.now()
		resp, err := p.Chat(ctx, llm.Request{Model: model, System: system, Messages: msgs, Tools: specs, MaxTokens: maxTokens},
			func(d llm.Delta) {
				if s.bus != nil && d.Text != "" {
					// Each piece masked alone: the committed step below,
					// masked whole, replaces what was streamed.
					s.bus.Publish(event.Change{Workspace: s.workspace, Kind: event.KindDelta, ID: r.ID, Agent: r.AgentID, Session: r.SessionID, Text: s.redact(d.Text)})
				}
			})
		if err != nil {
			release()
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{fmt.Sprintf("the model call failed: %v", err)}
		}
		usd, known := s.models.Cost(model, resp.Usage)
		// The agent's chat message is masked: it is shown, kept, sent to
		// other devices and agents, and never needs a secret's value.
		md := ModelData{Text: s.redact(resp.Text()), StopReason: resp.StopReason, Provider: providerName, Model: model, Usage: resp.Usage, CostKnown: known, ToolCalls: []ToolCall{}}
		for _, c := range resp.ToolCalls() {
			md.ToolCalls = append(md.ToolCalls, ToolCall{ID: c.ToolCallID, Name: c.ToolName, Input: c.Input})
		}
		err = s.record(bg, r, StepModel, md, started, &stepCost{resp.Usage, usd, known, providerName, model})
		release()
		if err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		s.useCited(bg, r.AgentID, &extra, md.Text)
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

// budgetReached pauses r on a budget card, or queues it behind the one
// already open for the same daily limit.
func (s *Service) budgetReached(ctx context.Context, r *Run, e *errBudget) (Status, string, any) {
	st, err := s.onBudget(ctx, r, e)
	if err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	return st, r.Output, nil
}
