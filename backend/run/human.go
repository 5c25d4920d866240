package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// errWaiting is returned by call_agent when the called agent paused for a
// person: the caller pauses too, and resumes when the callee finishes.
type errWaiting struct{ child, handle string }

func (e errWaiting) Error() string { return "@" + e.handle + " is waiting for a person" }

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
		case known && a.AskFirst[t.Family] && tool.Acts(c.Name, c.Input) && !s.declined(bg, r.ID, c):
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
			title, kind, detail := tool.Preview(env, c.Name, c.Input)
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

// redact masks every variable value in s.
func (s *Service) redact(out string) string {
	if s.vars == nil {
		return out
	}
	return s.vars.Redact(out)
}

// waitForChild pauses r while the agent it called waits for a person. No
// card of its own: the callee's card is the one to answer, and the app shows
// it in this run's session too.
func (s *Service) waitForChild(ctx context.Context, r *Run, c ToolCall, w errWaiting) error {
	if err := s.record(ctx, r, StepNote, NoteData{Text: fmt.Sprintf("waiting for @%s, who is waiting for you (run %s)", w.handle, w.child)}, s.now(), nil); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET status = 'paused' WHERE id = ?`, r.ID); err != nil {
		return fmt.Errorf("pause run %s: %w", r.ID, err)
	}
	r.Status = Paused
	s.publish("run.updated", *r)
	return nil
}

// childEnded hands the result of a called agent that had paused back to its
// caller, which waits paused, and queues the caller again.
func (s *Service) childEnded(ctx context.Context, child Run) {
	if child.ParentRunID == "" {
		return
	}
	parent, err := s.Get(ctx, child.ParentRunID)
	if err != nil || parent.Status != Paused {
		return // the caller executes it inline, or is gone
	}
	open, _ := s.Pauses(ctx, PauseFilter{RunID: parent.ID, Status: pause.Open})
	if len(open) > 0 {
		return
	}
	steps, err := s.Steps(ctx, parent.ID)
	if err != nil {
		s.log.Error("read caller steps", "run", parent.ID, "err", err)
		return
	}
	var call *ToolCall
	for _, c := range unanswered(steps) {
		if c.Name == "call_agent" {
			call = &c
		}
	}
	if call == nil {
		return
	}
	res := ToolResultData{ID: call.ID, Name: call.Name, ChildRunID: child.ID}
	agentName := child.AgentID
	if a, err := s.agents.Get(ctx, child.AgentID); err == nil {
		agentName = "@" + a.Handle
	}
	switch child.Status {
	case Done:
		res.Output = child.Output
	default:
		res.Output, res.IsError = fmt.Sprintf("%s did not finish (%s): %s", agentName, child.Status, child.Error), true
	}
	res.Output = s.redact(capOutput(res.Output))
	if err := s.record(ctx, &parent, StepToolResult, res, s.now(), nil); err != nil {
		s.log.Error("hand a called agent's answer back", "run", parent.ID, "err", err)
		return
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET status = 'queued' WHERE id = ? AND status = 'paused'`, parent.ID); err != nil {
		s.log.Error("queue the caller again", "run", parent.ID, "err", err)
		return
	}
	parent.Status = Queued
	s.publish("run.updated", parent)
	s.wake()
}

// unanswered returns the tool calls among steps that have no result yet.
func unanswered(steps []Step) []ToolCall {
	answered := map[string]bool{}
	var calls []ToolCall
	for _, st := range steps {
		switch st.Kind {
		case StepToolResult:
			var d ToolResultData
			json.Unmarshal(st.Data, &d)
			answered[d.ID] = true
		case StepToolCall:
			var c ToolCall
			json.Unmarshal(st.Data, &c)
			calls = append(calls, c)
		}
	}
	var out []ToolCall
	for _, c := range calls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// settle hands the person's answers back to a run that continues after a
// pause: the card's tool call gets its result, an approval's approved
// actions run (recorded as approved) and declined ones never do. Each result
// is committed before the next action, so a crash in between resumes where
// it stopped without running an approved action twice.
func (s *Service) settle(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller) error {
	bg := context.WithoutCancel(ctx)
	ps, err := store.Query(bg, s.db, scanPause, `SELECT `+pauseColumns+` FROM pauses
		WHERE run_id = ? AND status IN ('answered', 'dismissed') AND settled = 0 ORDER BY created_at`, r.ID)
	if err != nil {
		return fmt.Errorf("read answered pauses: %w", err)
	}
	for _, p := range ps {
		steps, err := s.Steps(bg, r.ID)
		if err != nil {
			return err
		}
		open := map[string]bool{}
		for _, c := range unanswered(steps) {
			open[c.ID] = true
		}
		dismissed := p.Status == pause.Dismissed
		var note pause.DismissAnswer
		if dismissed {
			json.Unmarshal(p.Answer, &note)
		}
		if p.Kind == pause.Approval {
			if err := s.settleApproval(ctx, r, tools, env, caller, p, open, dismissed, note.Note); err != nil {
				return err
			}
		} else if open[p.ToolCallID] {
			out := answerText(p, dismissed, note.Note) + s.appAnswer(bg, p)
			if p.Kind == pause.Takeover {
				out = s.takeoverText(p, dismissed, note.Note)
			}
			if err := s.result(bg, r, ToolCall{ID: p.ToolCallID, Name: toolOfKind[p.Kind]}, out, false, ""); err != nil {
				return err
			}
		}
		if ctx.Err() != nil {
			return nil // stopped while an approved action ran; the rest waits for the next start
		}
		if err := s.record(bg, r, StepResume, ResumeData{PauseID: p.ID, Status: p.Status}, s.now(), nil); err != nil {
			return err
		}
		if _, err := s.db.ExecContext(bg, `UPDATE pauses SET settled = 1 WHERE id = ?`, p.ID); err != nil {
			return fmt.Errorf("settle pause %s: %w", p.ID, err)
		}
	}
	return nil
}

var toolOfKind = map[string]string{pause.Question: "ask_question", pause.Approval: "request_approval",
	pause.Connector: "request_connector", pause.Credential: "request_credential", pause.Takeover: "request_takeover"}

// answerText is what the agent reads back from a question, connector or
// credential card.
func answerText(p Pause, dismissed bool, note string) string {
	if dismissed {
		out := "The person dismissed the card without answering."
		if note != "" {
			out += " They wrote: " + note
		}
		return out + " Do not ask the same again right away; go on with what you can, or stop and say what you need."
	}
	switch p.Kind {
	case pause.Question:
		var req pause.QuestionRequest
		var a pause.QuestionAnswer
		json.Unmarshal(p.Request, &req)
		json.Unmarshal(p.Answer, &a)
		var b strings.Builder
		b.WriteString("The person answered:\n")
		for i, q := range req.Questions {
			if i < len(a.Answers) {
				fmt.Fprintf(&b, "%d. %s\n   → %s\n", i+1, q.Question, a.Answers[i])
			}
		}
		return strings.TrimSuffix(b.String(), "\n")
	case pause.Connector:
		var req pause.ConnectorRequest
		var a pause.ConnectorAnswer
		json.Unmarshal(p.Request, &req)
		json.Unmarshal(p.Answer, &a)
		values, _ := json.Marshal(a.Values)
		return fmt.Sprintf("The person set up %s. Its configuration: %s. Values written ${NAME} are workspace variables: use them as written, they resolve when a command or request runs.", req.Connector, values)
	case pause.Credential:
		var a pause.CredentialAnswer
		json.Unmarshal(p.Answer, &a)
		return fmt.Sprintf("The person filled the variable %s. Write ${%s} where the value goes (a command, its env, a request header); it is resolved when that runs and never shown to you.", a.Variable, a.Variable)
	}
	return "answered"
}

// settleApproval hands an approval card's decisions back. A policy card's
// items are the model's own held tool calls: approved ones run now, declined
// ones get a result saying so. An agent's request_approval gets one result
// listing every decision, after running the approved items that name a tool.
func (s *Service) settleApproval(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller, p Pause, open map[string]bool, dismissed bool, note string) error {
	bg := context.WithoutCancel(ctx)
	var req pause.ApprovalRequest
	var ans pause.ApprovalAnswer
	json.Unmarshal(p.Request, &req)
	if !dismissed {
		json.Unmarshal(p.Answer, &ans)
	}
	decide := func(it pause.ApprovalItem) pause.Decision {
		d, ok := ans.Decision(it.ID)
		if !ok || dismissed {
			return pause.Decision{ID: it.ID, Note: note}
		}
		return d
	}
	if p.ToolCallID == "" { // policy: items are held tool calls
		for _, it := range req.Items {
			if !open[it.ID] {
				continue // settled before a restart
			}
			c := ToolCall{ID: it.ID, Name: it.Tool, Input: it.Input}
			d := decide(it)
			if !d.Approved {
				if err := s.result(bg, r, c, declinedText(d.Note), true, "declined"); err != nil {
					return err
				}
				continue
			}
			res, waiting := s.execTool(ctx, r, tools, env, caller, c)
			if waiting != nil {
				res.Output, res.IsError = "the called agent is waiting for a person; ask it again later", true
			}
			if errors.Is(context.Cause(ctx), errShutdown) {
				return nil
			}
			res.Decision = "approved"
			if err := s.record(bg, r, StepToolResult, res, s.now(), nil); err != nil {
				return err
			}
		}
		return nil
	}
	if !open[p.ToolCallID] {
		return nil
	}
	var b strings.Builder
	b.WriteString("The person's decisions, item by item:\n")
	for _, it := range req.Items {
		d := decide(it)
		if !d.Approved {
			fmt.Fprintf(&b, "- %s (%s): DECLINED. %s\n", it.ID, it.Title, declinedText(d.Note))
			continue
		}
		if it.Tool == "" {
			fmt.Fprintf(&b, "- %s (%s): approved; go ahead.%s\n", it.ID, it.Title, withNote(d.Note))
			continue
		}
		c := ToolCall{ID: p.ID + "." + it.ID, Name: it.Tool, Input: it.Input, Via: p.ID}
		if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
			return err
		}
		res, waiting := s.execTool(ctx, r, tools, env, caller, c)
		if waiting != nil {
			res.Output, res.IsError = "the called agent is waiting for a person; ask it again later", true
		}
		if errors.Is(context.Cause(ctx), errShutdown) {
			return nil
		}
		res.Decision, res.Via = "approved", p.ID
		if err := s.record(bg, r, StepToolResult, res, s.now(), nil); err != nil {
			return err
		}
		status := "done"
		if res.IsError {
			status = "failed"
		}
		fmt.Fprintf(&b, "- %s (%s): approved; Rerun ran %s for you (%s):%s\n%s\n", it.ID, it.Title, it.Tool, status, withNote(d.Note), indent(clipText(res.Output, 4000)))
	}
	return s.result(bg, r, ToolCall{ID: p.ToolCallID, Name: "request_approval"}, strings.TrimSuffix(b.String(), "\n"), false, "")
}

func declinedText(note string) string {
	return "The person declined this action: it was not done, and you must not do it another way." + withNote(note)
}

func withNote(note string) string {
	if note == "" {
		return ""
	}
	return " Their note: " + note
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-n)
}
