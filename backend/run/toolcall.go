package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

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
	case (tool.Acts(c.Name, c.Input) || t.Approve != nil) && c.Via == "" && s.declined(ctx, r.ID, c):
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
	out, err := t.Run(ctx, env, input)
	env.Attach = nil
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

// maxImages bounds the images one tool call keeps.
const maxImages = 4

// keepImages writes a tool call's images into the agent's folder.
func (s *Service) keepImages(r *Run, c ToolCall, images []llm.Image) []ImageRef {
	var refs []ImageRef
	for i, img := range images {
		if i == maxImages {
			break
		}
		ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[img.MediaType]
		if ext == "" {
			s.log.Warn("tool image of an unknown type dropped", "run", r.ID, "type", img.MediaType)
			continue
		}
		rel := filepath.Join("shots", fmt.Sprintf("%s-%s-%d%s", r.ID, safeName(c.ID), i, ext))
		full := filepath.Join(s.agents.Dir(r.AgentID), rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		if err := os.WriteFile(full, img.Data, 0o600); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		refs = append(refs, ImageRef{MediaType: img.MediaType, Path: filepath.ToSlash(rel), Size: len(img.Data)})
	}
	return refs
}

// safeName keeps the letters, digits, - and _ of a tool call id for a file
// name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, id)
}

// ImagePath is where an image a tool returned is kept.
func (s *Service) ImagePath(agentID string, ref ImageRef) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(ref.Path))
	if !strings.HasPrefix(clean, "shots"+string(filepath.Separator)) || strings.Contains(clean, "..") {
		return "", fault.Invalid("not an image of a tool result")
	}
	return filepath.Join(s.agents.Dir(agentID), clean), nil
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
		var req pause.ApprovalRequest
		var ans pause.ApprovalAnswer
		json.Unmarshal(p.Request, &req)
		json.Unmarshal(p.Answer, &ans)
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

func capOutput(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return s[:maxToolOutput] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-maxToolOutput)
}
