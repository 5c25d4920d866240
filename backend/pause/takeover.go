package pause

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Takeover is the kind of a card asking the person to take over the agent's
// browser. Its tool belongs to package browser, and package run writes what
// the agent reads back: the page the person left the browser on.
const Takeover = "takeover"

var takeover = Define(Def[TakeoverRequest, TakeoverAnswer]{
	Name:      Takeover,
	Tool:      Tool{Name: "request_takeover"},
	Check:     (*TakeoverRequest).Check,
	AgentOnly: true, // only a running agent has a browser to hand over
	Summarize: func(c TakeoverRequest) (string, string) {
		return "Needs your hands in its browser", c.Reason
	},
	Reply: func(_ context.Context, r TakeoverRequest, decode func(any) error, _ SetVariable) (TakeoverAnswer, error) {
		var a TakeoverAnswer
		if err := decode(&a); err != nil {
			return a, err
		}
		return a, r.CheckAnswer(&a)
	},
})

// TakeoverRequest asks the person to take over the agent's browser (a
// captcha, a sign-in, a two-factor code). URL is the page it shows, filled
// in by the browser tool, not by the model.
type TakeoverRequest struct {
	Reason string `json:"reason"`
	URL    string `json:"url"`
}

// TakeoverAnswer says the person handed the browser back.
type TakeoverAnswer struct {
	HandedBack bool `json:"handed_back"`
}

// Check validates a takeover card.
func (r *TakeoverRequest) Check() error {
	var err error
	if r.Reason, err = text("reason", r.Reason, maxText, true); err != nil {
		return err
	}
	if r.URL, err = text("url", r.URL, maxText, false); err != nil {
		return err
	}
	return nil
}

// CheckAnswer validates the hand-back: the only answer is handed_back true.
func (r TakeoverRequest) CheckAnswer(a *TakeoverAnswer) error {
	if !a.HandedBack {
		return fault.Invalid(`answer a takeover card with {"handed_back": true} once you are done in the browser, or dismiss it`)
	}
	return nil
}
