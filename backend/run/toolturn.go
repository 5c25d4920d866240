package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// turn is how a model turn's tool calls ended.
type turn int

const (
	turnDone    turn = iota // every call has a result; the model goes on
	turnPaused              // a card was raised; the run waits for a person
	turnWaiting             // a called agent waits for a person; so does this run
)

// runTools carries out the tool calls of one model turn. Ordinary calls run
// in order. A pause tool (ask_question, request_approval, …) raises a card;
// calls after it in the same turn are not run. Calls that act while their
// family's ask-first switch is on are held and raised together as one
// approval card once the turn's other calls are done.
func (s *Service) runTools(ctx context.Context, r *Run, a agent.Agent, tools []tool.Tool, env *tool.Env, caller *agentCaller, md ModelData) (turn, error) {
	bg := context.WithoutCancel(ctx)
	type card struct {
		call    ToolCall
		kind    string
		request any
	}
	var asked *card
	var held []ToolCall
	items := map[string]pause.ApprovalItem{} // the card items of calls held by their tool's Approve
	for _, c := range md.ToolCalls {
		if ctx.Err() != nil {
			return turnDone, nil // the loop records the stop; calls left without a result read as interrupted
		}
		t, known := tool.Find(tools, c.Name)
		switch {
		case known && t.IsPause():
			if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
				return turnDone, err
			}
			if asked != nil {
				if err := s.result(bg, r, c, "not asked: you already raised a card in this turn, and a person answers one at a time. Ask again after their answer.", true, ""); err != nil {
					return turnDone, err
				}
				continue
			}
			kind, req, err := t.Pause(c.Input)
			if ar, ok := req.(pause.ApprovalRequest); ok && err == nil && c.Name == "request_approval" {
				req, err = ownCards(bg, tools, ar)
			}
			answer := ""
			if cr, ok := req.(pause.ConnectorRequest); ok && err == nil {
				req, answer, err = s.appCard(bg, a, cr) // an app's own setup form, or no card at all
			}
			if err != nil {
				if err := s.result(bg, r, c, err.Error(), true, ""); err != nil {
					return turnDone, err
				}
				continue
			}
			if answer != "" {
				if err := s.result(bg, r, c, answer, false, ""); err != nil {
					return turnDone, err
				}
				continue
			}
			asked = &card{c, kind, req}
		case asked != nil:
			if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
				return turnDone, err
			}
			if err := s.result(bg, r, c, "not run: you asked the person something first in this turn. Call it again after their answer if it is still needed.", true, ""); err != nil {
				return turnDone, err
			}
		case known && t.Approve != nil && !s.declined(bg, r.ID, c):
			if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
				return turnDone, err
			}
			title, detail, err := t.Approve(bg, c.Input)
			if err != nil {
				if err := s.result(bg, r, c, err.Error(), true, ""); err != nil {
					return turnDone, err
				}
				continue
			}
			items[c.ID] = pause.ApprovalItem{ID: c.ID, Title: title, Kind: pause.ItemText, Detail: detail, Tool: c.Name, Input: c.Input}
			held = append(held, c)
		case known && a.AskFirst[t.Family] && t.WouldAct(c.Input) && !s.declined(bg, r.ID, c):
			if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
				return turnDone, err
			}
			held = append(held, c)
		default:
			if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
				return turnDone, err
			}
			res, waiting := s.execTool(ctx, r, tools, env, caller, c)
			if waiting != nil {
				return turnWaiting, s.waitForChild(bg, r, c, *waiting)
			}
			if errors.Is(context.Cause(ctx), errShutdown) {
				return turnDone, nil // unrecorded: the resumed run reports it as interrupted
			}
			if err := s.record(bg, r, StepToolResult, res, s.now(), nil); err != nil {
				return turnDone, err
			}
		}
	}
	if asked != nil && len(held) > 0 {
		for _, c := range held {
			if err := s.result(bg, r, c, "not run: it needs the person's approval, and you also asked them something in this turn. Call it again after their answer.", true, ""); err != nil {
				return turnDone, err
			}
		}
		held = nil
	}
	output := md.Text
	switch {
	case asked != nil:
		if _, err := s.openPause(bg, r, asked.kind, asked.call.ID, asked.request, output); err != nil {
			return turnDone, err
		}
		return turnPaused, nil
	case len(held) > 0:
		req := pause.ApprovalRequest{Title: "Before " + a.Name + " goes on", Policy: true,
			Reason: "Ask first is on for these tools in " + a.Name + "'s settings."}
		if len(items) == len(held) {
			req.Reason = "Only you can allow these changes."
		}
		for _, c := range held {
			if it, ok := items[c.ID]; ok {
				req.Items = append(req.Items, it)
				continue
			}
			t, _ := tool.Find(tools, c.Name) // held calls are known tools
			title, kind, detail := t.Describe(env, c.Input)
			req.Items = append(req.Items, pause.ApprovalItem{ID: c.ID, Title: title, Kind: kind, Detail: detail, Tool: c.Name, Input: c.Input})
		}
		if err := req.Check(); err != nil {
			return turnDone, err
		}
		if _, err := s.openPause(bg, r, pause.Approval, "", req, output); err != nil {
			return turnDone, err
		}
		return turnPaused, nil
	}
	return turnDone, nil
}

// ownCards gives each item of an agent's request_approval that names a tool
// with its own card (Tool.Approve: propose_brain_edit, move_agent, the
// Rerun agent's destructive tools) that tool's title and detail: the person
// approves what the tool will do, never the agent's description of it.
func ownCards(ctx context.Context, tools []tool.Tool, req pause.ApprovalRequest) (pause.ApprovalRequest, error) {
	for i, it := range req.Items {
		t, ok := tool.Find(tools, it.Tool)
		if it.Tool == "" || !ok || t.Approve == nil {
			continue
		}
		title, detail, err := t.Approve(ctx, it.Input)
		if err != nil {
			return req, fmt.Errorf("item %d (%s): %w", i+1, it.Tool, err)
		}
		req.Items[i].Title, req.Items[i].Kind, req.Items[i].Detail = title, pause.ItemText, detail
	}
	return req, nil
}

// result records a tool result the runtime itself gives.
func (s *Service) result(ctx context.Context, r *Run, c ToolCall, output string, isError bool, decision string) error {
	return s.record(ctx, r, StepToolResult, ToolResultData{ID: c.ID, Name: c.Name, Output: s.redact(output), IsError: isError, Decision: decision}, s.now(), nil)
}
