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
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// BrainStore is the workspace's Brain as the tools see it (a *brain.Service).
type BrainStore interface {
	Get(ctx context.Context, ref string) (brain.Page, error)
	List(ctx context.Context) ([]brain.Summary, error)
	Save(ctx context.Context, w brain.Write) (brain.Page, error)
}

// BrainFamily is the capability whose agents may propose Brain edits. The
// Brain is the workspace's shared memory of the company, so proposing an
// edit sits with remembering facts; reading the Brain needs no capability.
const BrainFamily = "memory"

// BrainTools are the tools over the Brain b: read_brain_page for every
// agent, and propose_brain_edit when propose is set. They are not in
// Catalog: the runtime offers them while the workspace has a Brain.
func BrainTools(b BrainStore, propose bool) []Tool { return BrainToolsChecked(b, propose, nil) }

// StoredChecker refuses secrets in text stored where agents read it: a
// variable's value or a credential (a *secret.Variables).
type StoredChecker interface {
	CheckStored(where, thing, text string, allowCredentialLike bool) error
}

// BrainToolsChecked is BrainTools whose proposals are checked with check
// before any card (nil: the credential shapes only): a variable's value is
// refused when it is proposed, not only when the approved page is written.
func BrainToolsChecked(b BrainStore, propose bool, check StoredChecker) []Tool {
	tools := []Tool{{
		Name: "read_brain_page",
		// Reading is always allowed; Family names no capability.
		Family: "",
		Description: "Read one page of the workspace's Brain (the pages about the company every coworker shares) in full, by title. " +
			"Your instructions list every page's title and summary; read the page before relying on it. An unknown title " +
			"answers with the list of titles.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"title":{"type":"string","description":"The page's title, as listed under \"The Brain\" (case does not matter)."}` +
			`},"required":["title"],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			return readBrainPage(ctx, b, input)
		},
	}}
	if propose {
		tools = append(tools, Tool{
			Name:   "propose_brain_edit",
			Family: BrainFamily,
			Description: "Propose a new version of a Brain page, or a new page, for the person to approve. Send the WHOLE new page " +
				"(markdown, at most 64 KiB), not a diff, the version you started from, and why. Your turn ends; if the person " +
				"approves, Rerun writes the page (signed with your handle) and tells you; if they decline, nothing changes. Use it " +
				"for lasting facts about the company, not for notes about one task.",
			Schema: json.RawMessage(`{"type":"object","properties":{` +
				`"title":{"type":"string","description":"The page's title: an existing page's to change it, a new one to add a page."},` +
				`"body":{"type":"string","description":"The complete new page, in markdown."},` +
				`"base_version":{"type":"integer","minimum":0,"description":"The page's version you started from (shown with the page); 0 for a new page."},` +
				`"reason":{"type":"string","description":"Why, in one or two sentences: what you learned and from where."}` +
				`},"required":["title","body","base_version","reason"],"additionalProperties":false}`),
			Approve: func(ctx context.Context, input json.RawMessage) (string, string, error) {
				if check != nil {
					var in brainEdit
					if err := jsonarg.Decode(input, &in); err == nil {
						if err := check.CheckStored("body", "a Brain page", in.Title+"\n"+in.Body, false); err != nil {
							return "", "", err
						}
					}
				}
				return proposeBrainEdit(ctx, b, input)
			},
			Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
				var in brainEdit
				if err := jsonarg.Decode(input, &in); err == nil {
					if err := env.refuseSecrets("body", "a Brain page", in.Title+"\n"+in.Body); err != nil {
						return "", err
					}
				}
				return writeBrainPage(ctx, b, env.AgentHandle, input)
			},
		})
	}
	return tools
}

// brainEdit is propose_brain_edit's input. The card's diff is made against
// BaseVersion and the approved page is written only if the page is still at
// it, so an approval never overwrites a change made meanwhile.
type brainEdit struct {
	Title       string `json:"title"`
	Body        string `json:"body"`
	BaseVersion int    `json:"base_version"`
	Reason      string `json:"reason"`
}

func readBrainPage(ctx context.Context, b BrainStore, input json.RawMessage) (string, error) {
	var in struct {
		Title string `json:"title"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	p, err := b.Get(ctx, in.Title)
	if errors.Is(err, fault.ErrNotFound) || strings.TrimSpace(in.Title) == "" {
		list, lerr := b.List(ctx)
		if lerr != nil {
			return "", lerr
		}
		if len(list) == 0 {
			return "", fault.NotFound("the Brain has no pages yet")
		}
		titles := make([]string, len(list))
		for i, s := range list {
			titles[i] = fmt.Sprintf("%q", s.Title)
		}
		return "", fault.NotFound("the Brain has no page %q; its pages are: %s", in.Title, strings.Join(titles, ", "))
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("# %s\n(version %d, updated %s by %s)\n\n%s", p.Title, p.Version, p.UpdatedAt.Format("2006-01-02"), p.UpdatedBy, p.Body), nil
}

// checkEdit validates a proposal the way the Brain would, so a bad one is
// refused before any card is raised.
func checkEdit(input json.RawMessage) (brainEdit, error) {
	var in brainEdit
	if err := jsonarg.Decode(input, &in); err != nil {
		return in, err
	}
	title, err := brain.CleanTitle(in.Title)
	if err != nil {
		return in, err
	}
	in.Title = title
	switch {
	case strings.TrimSpace(in.Body) == "":
		return in, fault.Invalid("body is empty; send the whole new page in markdown (to remove a page, ask the person)")
	case len(in.Body) > brain.MaxBodyBytes:
		return in, fault.Invalid("body is %d KiB; keep a page to %d KiB or split it", len(in.Body)>>10, brain.MaxBodyBytes>>10)
	case strings.TrimSpace(in.Reason) == "":
		return in, fault.Invalid("reason is empty; say in a sentence why the page should change")
	case in.BaseVersion < 0:
		return in, fault.Invalid("base_version is %d; send the page's version you started from, or 0 for a new page", in.BaseVersion)
	}
	// Before any card: a credential has no place in a page (a variable's
	// value is refused again when the approved page is written).
	if err := secret.CheckCredential("body", "a Brain page", in.Body); err != nil {
		return in, err
	}
	return in, nil
}

// proposeBrainEdit turns a proposal into the approval card's title and
// detail: the reason, then a unified diff from the page's base version. A
// proposal based on an outdated version is refused before any card.
func proposeBrainEdit(ctx context.Context, b BrainStore, input json.RawMessage) (string, string, error) {
	in, err := checkEdit(input)
	if err != nil {
		return "", "", err
	}
	old, verb := "", "Add Brain page"
	cur, err := b.Get(ctx, in.Title)
	switch {
	case err == nil:
		if in.BaseVersion != cur.Version {
			return "", "", fault.Conflict("%q is at version %d, and you started from version %d; read it again with read_brain_page and propose your edit on top of it", cur.Title, cur.Version, in.BaseVersion)
		}
		if cur.Body == in.Body {
			return "", "", fault.Invalid("the page %q already says exactly this; nothing to propose", cur.Title)
		}
		old, verb, in.Title = cur.Body, "Edit Brain page", cur.Title
	case !errors.Is(err, fault.ErrNotFound):
		return "", "", err
	case in.BaseVersion != 0:
		return "", "", fault.NotFound("the Brain has no page %q (any more); to add it, propose it with base_version 0", in.Title)
	}
	// The card shows the detail as markdown: the diff goes in a fence
	// longer than any run of backticks inside it.
	diff := UnifiedDiff(brain.Slug(in.Title)+".md", old, in.Body)
	fence := "```"
	for strings.Contains(diff, fence) {
		fence += "`"
	}
	detail := fmt.Sprintf("**Why:** %s\n\n%sdiff\n%s\n%s", strings.Join(strings.Fields(in.Reason), " "), fence, diff, fence)
	return fmt.Sprintf("%s “%s”", verb, in.Title), detail, nil
}

// writeBrainPage carries out an approved proposal: the page is written as
// the agent's version, unless it changed since the proposal.
func writeBrainPage(ctx context.Context, b BrainStore, handle string, input json.RawMessage) (string, error) {
	in, err := checkEdit(input)
	if err != nil {
		return "", err
	}
	cur, err := b.Get(ctx, in.Title)
	switch {
	case in.BaseVersion == 0 && err == nil:
		return "", fault.Conflict("a page titled %q was added while the person looked at your proposal; nothing was written. Read it with read_brain_page and propose again if still needed", in.Title)
	case err == nil:
		// The page the card showed (found by title or slug), under its own
		// title: an edit never renames a page.
		in.Title = cur.Title
	}
	p, err := b.Save(ctx, brain.Write{Title: in.Title, Body: in.Body, By: brain.AgentAuthor(handle), BaseVersion: in.BaseVersion})
	if err != nil {
		if errors.Is(err, fault.ErrConflict) {
			return "", fault.Conflict("%q changed after you proposed this edit, so nothing was written; read it again with read_brain_page and propose your edit on top of it", in.Title)
		}
		return "", err
	}
	return fmt.Sprintf("approved and written: %q is now at version %d", p.Title, p.Version), nil
}
