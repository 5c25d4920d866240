package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

// ForemanFamily names the Foreman's own tools: no capability switches them,
// the Foreman alone has them.
const ForemanFamily = "foreman"

// WriteBrainPage is the Foreman's write_brain_page: it writes a Brain page
// directly, signed "foreman", unless a person wrote or deleted that page.
// Then nothing is written and the Foreman is told to propose its version
// with propose_brain_edit, which the person approves on a card: onboarding
// never silently replaces the person's own words.
func WriteBrainPage(b BrainStore) Tool {
	return Tool{
		Name:   "write_brain_page",
		Family: ForemanFamily,
		Description: "Write a page of the workspace's Brain (the pages about the company every coworker reads): a new page, or a new " +
			"version of a page you wrote before. Send the WHOLE page in markdown, at most 64 KiB, with a one-sentence summary. " +
			"A page the person edited is not written: you are told its version, and then propose your change with propose_brain_edit.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"title":{"type":"string","description":"The page's title, e.g. \"What we sell\"."},` +
			`"body":{"type":"string","description":"The complete page, in markdown."},` +
			`"summary":{"type":"string","description":"One or two sentences every coworker reads in its instructions."}` +
			`},"required":["title","body","summary"],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			var in struct {
				Title   string `json:"title"`
				Body    string `json:"body"`
				Summary string `json:"summary"`
			}
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", err
			}
			if err := env.refuseSecrets("body", "a Brain page", in.Body+"\n"+in.Summary); err != nil {
				return "", err
			}
			if strings.TrimSpace(in.Body) == "" {
				return "", fault.Invalid("body is empty; send the whole page in markdown")
			}
			p, err := b.Save(ctx, brain.Write{Title: in.Title, Body: in.Body, Summary: &in.Summary, By: brain.Foreman, UnlessPersonEdited: true})
			if errors.Is(err, brain.ErrPersonEdited) {
				return "", personEditedError(ctx, b, in.Title, err)
			}
			if err != nil {
				return "", err
			}
			if p.Version == 1 {
				return fmt.Sprintf("written: new page %q (version 1)", p.Title), nil
			}
			return fmt.Sprintf("written: %q is now at version %d", p.Title, p.Version), nil
		},
	}
}

// personEditedError tells the Foreman how to go on when the person owns the
// page: propose the change on a card.
func personEditedError(ctx context.Context, b BrainStore, title string, err error) error {
	if cur, gerr := b.Get(ctx, title); gerr == nil {
		return fault.Conflict("not written: the person edited the Brain page %q (now at version %d). Do not overwrite it: "+
			"read it with read_brain_page, then call propose_brain_edit with the whole new page, base_version %d and your reason; "+
			"the person approves or declines it on a card", cur.Title, cur.Version, cur.Version)
	}
	return fault.Conflict("not written: %v. Propose it with propose_brain_edit (base_version 0) if the person should reconsider", err)
}
