package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// errWaiting is returned by call_agent when the called agent paused for a
// person: the caller pauses too, and resumes when the callee finishes.
type errWaiting struct{ child, handle string }

func (e errWaiting) Error() string { return "@" + e.handle + " is waiting for a person" }

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
	res.Output = capOutput(s.redact(res.Output)) // masked first: a cut must not halve a value
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
