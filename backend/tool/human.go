package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// Notifier tells the person something without stopping the run (notify).
type Notifier interface {
	Notify(ctx context.Context, kind, title, body string) error
}

// pauseTool declares the tool that raises a card of kind k: it ends the
// agent's turn with the card. Its Run is never called: the runtime stores
// the request, pauses the run, and hands the answer back as the tool's
// result.
func pauseTool(k pause.Kind) Tool {
	spec := k.Tool()
	return Tool{
		Name: spec.Name, Family: "human", Description: spec.Description, Schema: json.RawMessage(spec.Schema),
		Pause: func(input json.RawMessage) (string, any, error) {
			req, err := k.FromAgent(func(v any) error { return jsonarg.Decode(input, v) })
			return k.Name(), req, err
		},
		Run: func(context.Context, *Env, json.RawMessage) (string, error) {
			return "", fault.Invalid("%s pauses the run; only the runtime can carry it out", spec.Name)
		},
	}
}

// humanTools are a tool per pause kind, in the kinds' order, and notify.
// A kind whose tool has no schema here has it in another family
// (request_takeover: the browser's).
func humanTools() []Tool {
	var tools []Tool
	for _, k := range pause.Kinds() {
		if k.Tool().Schema != "" {
			tools = append(tools, pauseTool(k))
		}
	}
	return append(tools, Tool{
		Name: "notify", Family: "human",
		Description: "Tell the person something and keep working: kind info, progress, done or error, a short title and an " +
			"optional body. It reaches their notifications; it is not a question (use ask_question to wait for an answer).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"kind":{"type":"string","enum":["info","progress","done","error"],"description":"What sort of news it is."},` +
			`"title":{"type":"string","description":"One line."},"body":{"type":"string","description":"Details, optional."}` +
			`},"required":["kind","title"],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			var in struct{ Kind, Title, Body string }
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", err
			}
			if !slices.Contains([]string{"info", "progress", "done", "error"}, in.Kind) {
				return "", fault.Invalid("kind %q is unknown; use info, progress, done or error", in.Kind)
			}
			if strings.TrimSpace(in.Title) == "" {
				return "", fault.Invalid("title is empty; say what happened in one line")
			}
			if env.Notifier == nil {
				return "", fault.Invalid("notifications are not available here")
			}
			if err := env.Notifier.Notify(ctx, in.Kind, in.Title, in.Body); err != nil {
				return "", err
			}
			return "sent; keep working", nil
		},
	})
}

// IsPause reports whether t ends the turn with a card for the person.
func (t Tool) IsPause() bool { return t.Pause != nil }
