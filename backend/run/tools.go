package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// toolsFor is the agent's tools: its enabled families, then what each
// source adds. A source that fails costs the run its tools, not the run.
func (s *Service) toolsFor(ctx context.Context, a agent.Agent) []tool.Tool {
	tools := tool.ForCapabilities(a.Capabilities)
	for _, src := range s.sources {
		more, err := src.Tools(ctx, a)
		if err != nil {
			s.log.Warn("tools of the agent unavailable", "agent", a.ID, "err", err)
		}
		for _, t := range more {
			if _, dup := tool.Find(tools, t.Name); !dup {
				tools = append(tools, t)
			}
		}
	}
	return tools
}

// execTool runs one tool call whose call step is recorded and returns its
// result, redacted, for the caller to record. waiting is set when the tool
// was call_agent and the called agent paused for a person.
func (s *Service) execTool(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller, c ToolCall) (res ToolResultData, waiting *errWaiting) {
	res = ToolResultData{ID: c.ID, Name: c.Name}
	t, ok := tool.Find(tools, c.Name)
	switch {
	case !ok:
		res.Output, res.IsError = fmt.Sprintf("there is no tool named %q; use one of the tools listed", c.Name), true
		return res, nil
	case t.IsPause():
		res.Output, res.IsError = fmt.Sprintf("%s cannot run as an approved action; call it yourself", c.Name), true
		return res, nil
	case (t.WouldAct(c.Input) || t.Approve != nil) && c.Via == "" && s.declined(ctx, r.ID, c):
		res.Output, res.IsError = "not run: the person declined exactly this action earlier in this run. Do not do it another way.", true
		return res, nil
	}
	caller.mu.Lock()
	caller.child = ""
	caller.mu.Unlock()
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	var images []llm.Image
	env.Attach = func(mediaType string, data []byte) {
		images = append(images, llm.Image{MediaType: mediaType, Data: data})
	}
	env.Processes = callProcesses{s, r.ID, c.ID}
	out, err := t.Run(ctx, env, input)
	env.Attach, env.Processes = nil, nil
	res.Images = s.keepImages(r, c, images)
	if err != nil {
		var w errWaiting
		switch {
		case errors.As(err, &w):
			return res, &w
		case ctx.Err() != nil:
			out = "stopped: the run was cancelled while this tool ran"
		default:
			out = err.Error()
		}
		res.IsError = true
	}
	res.Output = capOutput(s.redact(out)) // masked first: a cut must not halve a value
	caller.mu.Lock()
	res.ChildRunID = caller.child
	caller.mu.Unlock()
	return res, nil
}

// declined reports whether the person declined this exact call (same tool,
// same input) on an approval card of the run.
func (s *Service) declined(ctx context.Context, runID string, c ToolCall) bool {
	ps, err := s.Pauses(context.WithoutCancel(ctx), PauseFilter{RunID: runID, Status: pause.Answered})
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.Kind != pause.Approval {
			continue
		}
		req, ans, err := p.approval()
		if err != nil {
			s.log.Warn("read a decided approval card", "run", runID, "err", err)
			continue
		}
		for _, it := range req.Items {
			if d, ok := ans.Decision(it.ID); ok && !d.Approved && it.Tool == c.Name && sameJSON(it.Input, c.Input) {
				return true
			}
		}
	}
	return false
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xa) == string(yb)
}

// maxToolOutput bounds what one tool result hands back to the model.
const maxToolOutput = 64 << 10

func capOutput(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return s[:maxToolOutput] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-maxToolOutput)
}

// redact masks every variable value in s.
func (s *Service) redact(out string) string {
	if s.vars == nil {
		return out
	}
	return s.vars.Redact(out)
}
