package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

// Limits of the agents family.
const (
	MaxCallMessage = 32 << 10 // bytes of a message to another agent
	MaxCallAnswer  = 64 << 10 // bytes of its answer returned
)

func agentsTools() []Tool {
	return []Tool{{
		Name:   "call_agent",
		Family: "agents",
		Description: "Ask another coworker of this workspace, by @handle, to do something or answer a question, and wait for its " +
			"answer. It works with its own soul, tools, files and memory, and does not see your conversation: say everything " +
			"it needs in the message. Returns its final answer (at most 64 KiB).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"handle":{"type":"string","description":"The coworker's handle, with or without the @, e.g. @researcher."},` +
			`"message":{"type":"string","description":"What you ask of it, self-contained."}` +
			`},"required":["handle","message"],"additionalProperties":false}`),
		Run:  callAgent,
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			in := argsOf(input)
			return "Ask " + in.str("handle"), "text", in.str("message")
		},
	}}
}

func callAgent(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Handle  string `json:"handle"`
		Message string `json:"message"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	handle := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(in.Handle), "@"))
	switch {
	case handle == "":
		return "", fault.Invalid("handle is empty; give the @handle of the coworker to call")
	case handle == strings.ToLower(env.AgentHandle):
		return "", fault.Invalid("@%s is you; call another coworker, or do the work yourself", handle)
	case strings.TrimSpace(in.Message) == "":
		return "", fault.Invalid("message is empty; say what you need from @%s", handle)
	case len(in.Message) > MaxCallMessage:
		return "", fault.Invalid("message is %d bytes; keep it under %d — put long material in a shared/ file and point to it", len(in.Message), MaxCallMessage)
	}
	if env.Agents == nil {
		return "", fault.Invalid("calling coworkers is not available in this run")
	}
	answer, err := env.Agents.CallAgent(ctx, handle, in.Message)
	if err != nil {
		return "", fmt.Errorf("call @%s: %w", handle, err)
	}
	return env.clip(answer, MaxCallAnswer), nil
}
