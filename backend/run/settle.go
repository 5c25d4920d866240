package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

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
