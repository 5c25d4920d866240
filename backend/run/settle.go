package run

import (
	"context"
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
			if note, err = p.dismissal(); err != nil {
				return err
			}
		}
		k, err := p.kind()
		if err != nil {
			return err
		}
		// An approval runs its approved items and a takeover hands the
		// browser back: both need the run, so they are settled here.
		if p.Kind == pause.Approval {
			if err := s.settleApproval(ctx, r, tools, env, caller, p, open, callStates(steps), dismissed, note.Note); err != nil {
				return err
			}
		} else if open[p.ToolCallID] {
			var out string
			if p.Kind == pause.Takeover {
				out = s.takeoverText(p, dismissed, note.Note)
			} else if out, err = answerText(p, dismissed, note.Note); err != nil {
				return err
			} else {
				out += s.appAnswer(bg, p)
			}
			if err := s.result(bg, r, ToolCall{ID: p.ToolCallID, Name: k.Tool().Name}, out, false, ""); err != nil {
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

// answerText is what the agent reads back from a card whose kind writes
// it (see pause.Kind.AnswerText), or from any dismissed card.
func answerText(p Pause, dismissed bool, note string) (string, error) {
	if dismissed {
		return pause.DismissedText(note), nil
	}
	k, err := p.kind()
	if err != nil {
		return "", err
	}
	text, ok, err := k.AnswerText(p.Request, p.Answer)
	if err != nil {
		return "", fmt.Errorf("read the answer to pause %s: %w", p.ID, err)
	}
	if !ok {
		return "answered", nil
	}
	return text, nil
}

// settleApproval hands an approval card's decisions back. A policy card's
// items are the model's own held tool calls: approved ones run now, declined
// ones get a result saying so. An agent's request_approval gets one result
// listing every decision, after running the approved items that name a tool.
func (s *Service) settleApproval(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller, p Pause, open map[string]bool, calls map[string]*callState, dismissed bool, note string) error {
	bg := context.WithoutCancel(ctx)
	req, ans, err := p.approval()
	if err != nil {
		return err
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
			if st := calls[c.ID]; st != nil && st.started {
				// It started before a crash: its effect is unknown, and it
				// never runs a second time.
				if err := s.result(bg, r, c, interruptedOutput, true, "approved"); err != nil {
					return err
				}
				continue
			}
			start := c
			start.Approved = true
			if err := s.record(bg, r, StepToolCall, start, s.now(), nil); err != nil {
				return err
			}
			res, waiting := s.execTool(ctx, r, tools, env, caller, c)
			if waiting != nil {
				res.Output, res.IsError = "the called agent is waiting for a person; ask it again later", true
			}
			if errors.Is(context.Cause(ctx), errShutdown) {
				return nil // started and unanswered: the next start reports it as interrupted
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
		res, status, err := s.runApprovedItem(ctx, r, tools, env, caller, c, calls[c.ID])
		if err != nil || errors.Is(context.Cause(ctx), errShutdown) {
			return err
		}
		fmt.Fprintf(&b, "- %s (%s): approved; Rerun ran %s for you (%s):%s\n%s\n", it.ID, it.Title, it.Tool, status, withNote(d.Note), indent(clipText(res.Output, 4000)))
	}
	return s.result(bg, r, ToolCall{ID: p.ToolCallID, Name: "request_approval"}, strings.TrimSuffix(b.String(), "\n"), false, "")
}

// runApprovedItem runs the tool an approved request_approval item names,
// once: its call step is committed before it starts, so after a crash an
// item that ran keeps its result and one that started is interrupted. status
// is how the item went ("done", "failed" or "interrupted"); on the app's
// shutdown it returns with nothing recorded past the call step.
func (s *Service) runApprovedItem(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller, c ToolCall, st *callState) (ToolResultData, string, error) {
	bg := context.WithoutCancel(ctx)
	var res ToolResultData
	switch {
	case st != nil && st.result != nil: // it ran before a restart
		res = *st.result
	case st != nil && st.started:
		res = ToolResultData{ID: c.ID, Name: c.Name, Output: interruptedOutput, IsError: true, Decision: "approved", Via: c.Via}
		if err := s.record(bg, r, StepToolResult, res, s.now(), nil); err != nil {
			return res, "", err
		}
		return res, "interrupted", nil
	default:
		if err := s.record(bg, r, StepToolCall, c, s.now(), nil); err != nil {
			return res, "", err
		}
		var waiting *errWaiting
		res, waiting = s.execTool(ctx, r, tools, env, caller, c)
		if waiting != nil {
			res.Output, res.IsError = "the called agent is waiting for a person; ask it again later", true
		}
		if errors.Is(context.Cause(ctx), errShutdown) {
			return res, "", nil
		}
		res.Decision, res.Via = "approved", c.Via
		if err := s.record(bg, r, StepToolResult, res, s.now(), nil); err != nil {
			return res, "", err
		}
	}
	if res.IsError {
		return res, "failed", nil
	}
	return res, "done", nil
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
