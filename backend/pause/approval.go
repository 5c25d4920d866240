package pause

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Approval is the kind of a card of actions to approve or decline one by
// one. Package run settles it itself: approved items that name a tool run.
const Approval = "approval"

var approval = Define(Def[ApprovalRequest, ApprovalAnswer]{
	Name: Approval,
	Tool: Tool{
		Name: "request_approval",
		Description: "Ask the person to approve or decline a list of actions before you take them, each with its detail (the command, " +
			"the target, or a unified diff). Your turn ends here. When an item names a tool and its input, Rerun runs that " +
			"tool for you if it is approved and never if it is declined; the decisions come back item by item as this tool's " +
			"result. Never perform a declined action another way.",
		Schema: `{"type":"object","properties":{` +
			`"title":{"type":"string","description":"What this batch is about."},` +
			`"reason":{"type":"string","description":"Why you want to do it."},` +
			`"items":{"type":"array","description":"The actions, each approved or declined on its own.","minItems":1,"maxItems":20,"items":{"type":"object","properties":{` +
			`"title":{"type":"string","description":"One line: what will happen."},` +
			`"kind":{"type":"string","enum":["command","target","diff","text"],"description":"How to show detail."},` +
			`"detail":{"type":"string","description":"The command, target, unified diff or text."},` +
			`"tool":{"type":"string","description":"A tool of yours to run when approved (e.g. run_command)."},` +
			`"input":{"type":"object","description":"That tool's arguments."}` +
			`},"required":["title"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`,
	},
	Check: (*ApprovalRequest).Check,
	CheckAgent: func(r *ApprovalRequest) error {
		if r.Policy {
			return fault.Invalid("policy is set by Rerun, not by the agent")
		}
		return nil
	},
	CheckApp: func(r *ApprovalRequest) error {
		for _, it := range r.Items {
			if it.Tool != "" {
				return fault.Invalid("an approval card without a run cannot perform tool %q on approval", it.Tool)
			}
		}
		return nil
	},
	Summarize: func(a ApprovalRequest) (string, string) {
		title := fmt.Sprintf("Needs your approval for %d action%s", len(a.Items), plural(len(a.Items)))
		if len(a.Items) == 1 {
			return title, a.Items[0].Title
		}
		return title, a.Title
	},
	Reply: func(_ context.Context, r ApprovalRequest, decode func(any) error, _ SetVariable) (ApprovalAnswer, error) {
		var a ApprovalAnswer
		if err := decode(&a); err != nil {
			return a, err
		}
		return a, r.CheckAnswer(&a)
	},
})

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ApprovalRequest lists actions for the person to approve or decline one by
// one. Policy is set when the runtime raised it because of an ask-first
// switch rather than the agent asking.
type ApprovalRequest struct {
	Title  string         `json:"title"`
	Reason string         `json:"reason"`
	Policy bool           `json:"policy"`
	Items  []ApprovalItem `json:"items"`
}

// Item kinds say how the detail is shown.
const (
	ItemCommand = "command"
	ItemTarget  = "target"
	ItemDiff    = "diff"
	ItemText    = "text"
)

// ApprovalItem is one action. When Tool is set the runtime performs it on
// approval (as a tool call recorded as approved) and never on decline.
type ApprovalItem struct {
	ID     string          `json:"id"`
	Title  string          `json:"title"`
	Kind   string          `json:"kind"`
	Detail string          `json:"detail"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
}

// ApprovalAnswer decides every item.
type ApprovalAnswer struct {
	Decisions []Decision `json:"decisions"`
}

// Decision is the person's verdict on one item.
type Decision struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Note     string `json:"note"`
}

// Check validates and normalises an approval card, numbering the items that
// have no id.
func (r *ApprovalRequest) Check() error {
	var err error
	if r.Title, err = text("title", r.Title, maxText, false); err != nil {
		return err
	}
	if r.Reason, err = text("reason", r.Reason, maxText, false); err != nil {
		return err
	}
	if n := len(r.Items); n == 0 || n > MaxItems {
		return fault.Invalid("list 1 to %d actions to approve (got %d)", MaxItems, n)
	}
	seen := map[string]bool{}
	for i := range r.Items {
		it := &r.Items[i]
		if it.ID == "" {
			it.ID = fmt.Sprintf("a%d", i+1)
		}
		if seen[it.ID] {
			return fault.Invalid("items[%d] repeats id %q", i, it.ID)
		}
		seen[it.ID] = true
		if it.Title, err = text(fmt.Sprintf("items[%d].title", i), it.Title, maxText, true); err != nil {
			return err
		}
		if it.Kind == "" {
			it.Kind = ItemText
		}
		if !slices.Contains([]string{ItemCommand, ItemTarget, ItemDiff, ItemText}, it.Kind) {
			return fault.Invalid("items[%d].kind %q is unknown; use command, target, diff or text", i, it.Kind)
		}
		if len(it.Detail) > maxDetail {
			return fault.Invalid("items[%d].detail is %d bytes; keep it under %d", i, len(it.Detail), maxDetail)
		}
		if it.Tool == "" && len(it.Input) > 0 && string(it.Input) != "null" {
			return fault.Invalid("items[%d] has an input but no tool; name the tool to run on approval, or drop the input", i)
		}
		if it.Tool != "" && (len(it.Input) == 0 || string(it.Input) == "null") {
			it.Input = json.RawMessage(`{}`)
		}
		if it.Tool != "" && !json.Valid(it.Input) {
			return fault.Invalid("items[%d].input is not valid JSON", i)
		}
	}
	return nil
}

// CheckAnswer validates decisions: every item decided exactly once.
func (r ApprovalRequest) CheckAnswer(a *ApprovalAnswer) error {
	got := map[string]bool{}
	for i, d := range a.Decisions {
		if !slices.ContainsFunc(r.Items, func(it ApprovalItem) bool { return it.ID == d.ID }) {
			return fault.Invalid("decisions[%d] is for item %q, which this card does not have", i, d.ID)
		}
		if got[d.ID] {
			return fault.Invalid("item %q is decided twice", d.ID)
		}
		got[d.ID] = true
		var err error
		if a.Decisions[i].Note, err = text(fmt.Sprintf("decisions[%d].note", i), d.Note, maxAnswer, false); err != nil {
			return err
		}
	}
	for _, it := range r.Items {
		if !got[it.ID] {
			return fault.Invalid("approve or decline every item; %q (%s) has no decision", it.ID, it.Title)
		}
	}
	return nil
}

// Decision returns the decision on item id.
func (a ApprovalAnswer) Decision(id string) (Decision, bool) {
	for _, d := range a.Decisions {
		if d.ID == id {
			return d, true
		}
	}
	return Decision{}, false
}
