package foreman

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/template"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// FirecrawlKeyVariable is the workspace variable (or environment variable,
// Config.FirecrawlAPIKey) whose key lets the Foreman read websites through
// Firecrawl.
const FirecrawlKeyVariable = "FIRECRAWL_API_KEY"

// maxProposed bounds the coworkers of one proposal.
const maxProposed = 5

// Tools is the Foreman's own tool source: write_brain_page,
// propose_coworkers with the create_coworker and install_template it
// approves, and firecrawl_scrape when a Firecrawl key is set.
func (f *Foreman) Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error) {
	if a.Builtin != Kind {
		return nil, nil
	}
	tools := []tool.Tool{tool.WriteBrainPage(f.d.Brain), f.propose(ctx), f.createCoworker(), f.installTemplate()}
	if f.firecrawlKey() != "" {
		tools = append(tools, tool.FirecrawlTool(tool.Firecrawl{BaseURL: f.d.FirecrawlBaseURL, Key: f.firecrawlKey}))
	}
	return tools, nil
}

// Guide is what the Foreman's prompt says of its own tools.
func (f *Foreman) Guide(a agent.Agent) string {
	if a.Builtin != Kind {
		return ""
	}
	g := "## Onboarding\n- write_brain_page writes a Brain page directly; a page the person edited needs propose_brain_edit instead.\n" +
		"- propose_coworkers shows the person ONE card with your proposals; each approved one is created at once."
	if f.firecrawlKey() != "" {
		g += "\n- firecrawl_scrape reads a web page as markdown: use it for the website before the browser."
	} else {
		g += "\n- Read the website with your browser (browser_open, browser_snapshot)."
	}
	return g
}

// firecrawlKey is the Firecrawl key: the workspace variable, else the
// environment's. "" when neither is set.
func (f *Foreman) firecrawlKey() string {
	if v, ok := f.d.Variables.Lookup(FirecrawlKeyVariable); ok && strings.TrimSpace(v) != "" {
		return v
	}
	return f.d.FirecrawlAPIKey
}

// coworker is one proposed coworker: a plain definition, or a template of
// the library to install.
type coworker struct {
	Name         string   `json:"name"`
	Role         string   `json:"role"`
	Handle       string   `json:"handle,omitempty"`
	Soul         string   `json:"soul,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`
	Template     string   `json:"template,omitempty"`
}

// check validates a proposal; t is the template it installs, if any.
func (f *Foreman) check(ctx context.Context, c *coworker) (*template.Template, error) {
	c.Name, c.Role = strings.TrimSpace(c.Name), strings.Join(strings.Fields(c.Role), " ")
	switch {
	case c.Name == "":
		return nil, fault.Invalid("a coworker needs a name, e.g. \"Inbox keeper\"")
	case c.Role == "":
		return nil, fault.Invalid("say %s's role in a few words, e.g. \"answers customer emails\"", c.Name)
	case utf8.RuneCountInString(c.Role) > 200:
		return nil, fault.Invalid("%s's role is %d characters; keep it under 200", c.Name, utf8.RuneCountInString(c.Role))
	}
	if c.Template != "" {
		t, err := f.findTemplate(ctx, c.Template)
		return t, err
	}
	if strings.TrimSpace(c.Soul) == "" {
		return nil, fault.Invalid("%s needs a soul: its job, inputs, output, tone and what to ask the person, in markdown (or name a template)", c.Name)
	}
	// Before any card, as every other way to write a soul: no variable's
	// value, nothing shaped like a credential (a nil Variables checks the
	// shapes).
	if err := f.d.Variables.CheckStored(c.Name+"'s soul", "a soul", c.Soul, false); err != nil {
		return nil, err
	}
	return nil, nil
}

// findTemplate finds a template of the library by id or name.
func (f *Foreman) findTemplate(ctx context.Context, ref string) (*template.Template, error) {
	list, err := f.d.Templates.List(ctx)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, t := range list {
		if t.ID == ref || strings.EqualFold(t.Name, strings.TrimSpace(ref)) {
			return &list[i], nil
		}
		names = append(names, fmt.Sprintf("%q", t.Name))
	}
	if len(names) == 0 {
		return nil, fault.NotFound("the template library is empty; propose a plain coworker with a soul instead")
	}
	return nil, fault.NotFound("no template %q; the library has %s", ref, strings.Join(names, ", "))
}

// propose is propose_coworkers: one approval card, an item per coworker,
// each creating it (or installing its template) when approved.
func (f *Foreman) propose(ctx context.Context) tool.Tool {
	desc := "Propose the person's first coworkers on ONE card: each item shows its name and role, and the person approves or declines " +
		"each with one click. Approved ones are created at once (from their template when you name one); declined ones are not. " +
		"Your turn ends until the person has decided."
	if list, err := f.d.Templates.List(ctx); err == nil && len(list) > 0 {
		desc += " Templates in the library (prefer one when it fits):"
		for _, t := range list {
			desc += fmt.Sprintf(" %q (%s);", t.Name, strings.Join(strings.Fields(t.Description), " "))
		}
	} else {
		desc += " The template library is empty: write each coworker's soul yourself."
	}
	return tool.Tool{
		Name: "propose_coworkers", Family: tool.ForemanFamily, Description: desc,
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"reason":{"type":"string","description":"One sentence for the person: why these coworkers."},` +
			`"coworkers":{"type":"array","minItems":1,"maxItems":5,"items":{"type":"object","properties":{` +
			`"name":{"type":"string","description":"Its name, e.g. \"Inbox keeper\"."},` +
			`"role":{"type":"string","description":"Its job in a few words, shown on the card."},` +
			`"handle":{"type":"string","description":"Optional @handle; derived from the name when empty."},` +
			`"soul":{"type":"string","description":"Its system prompt in markdown (not needed with a template)."},` +
			`"capabilities":{"type":"array","items":{"type":"string"},"description":"Optional tool families; the defaults when empty."},` +
			`"template":{"type":"string","description":"A library template's name or id to install instead of a soul."}` +
			`},"required":["name","role"],"additionalProperties":false}}` +
			`},"required":["coworkers"],"additionalProperties":false}`),
		Pause: func(input json.RawMessage) (string, any, error) {
			var in struct {
				Reason    string     `json:"reason"`
				Coworkers []coworker `json:"coworkers"`
			}
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", nil, err
			}
			if n := len(in.Coworkers); n == 0 || n > maxProposed {
				return "", nil, fault.Invalid("propose 1 to %d coworkers (got %d); two or three is best", maxProposed, n)
			}
			req := pause.ApprovalRequest{Title: "Your first coworkers", Reason: in.Reason}
			for i := range in.Coworkers {
				c := &in.Coworkers[i]
				t, err := f.check(context.Background(), c)
				if err != nil {
					return "", nil, fmt.Errorf("coworkers[%d]: %w", i, err)
				}
				it := pause.ApprovalItem{ID: fmt.Sprintf("c%d", i+1), Kind: pause.ItemText}
				if t != nil {
					it.Title = fmt.Sprintf("Install %s: %s (template %q)", c.Name, c.Role, t.Name)
					it.Detail = t.Description
					it.Tool, it.Input = "install_template", mustJSON(map[string]string{"template": t.ID, "name": c.Name})
				} else {
					it.Title = fmt.Sprintf("Create %s: %s", c.Name, c.Role)
					it.Detail = c.Soul
					c.Template = ""
					it.Tool, it.Input = "create_coworker", mustJSON(c)
				}
				req.Items = append(req.Items, it)
			}
			if err := req.Check(); err != nil {
				return "", nil, err
			}
			return pause.Approval, req, nil
		},
	}
}

// createCoworker is create_coworker: held for the person's approval when
// the model calls it itself; run as an approved item of propose_coworkers.
func (f *Foreman) createCoworker() tool.Tool {
	return tool.Tool{
		Name: "create_coworker", Family: tool.ForemanFamily,
		Description: "Create one coworker on the first Box. The person approves it on a card first; propose_coworkers is the better way to propose several.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string"},"role":{"type":"string"},"handle":{"type":"string"},"soul":{"type":"string"},` +
			`"capabilities":{"type":"array","items":{"type":"string"}}` +
			`},"required":["name","role","soul"],"additionalProperties":false}`),
		Approve: func(ctx context.Context, input json.RawMessage) (string, string, error) {
			var c coworker
			if err := jsonarg.Decode(input, &c); err != nil {
				return "", "", err
			}
			if _, err := f.check(ctx, &c); err != nil {
				return "", "", err
			}
			return fmt.Sprintf("Create %s: %s", c.Name, c.Role), c.Soul, nil
		},
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			var c coworker
			if err := jsonarg.Decode(input, &c); err != nil {
				return "", err
			}
			if _, err := f.check(ctx, &c); err != nil {
				return "", err
			}
			boxID, err := f.firstBox(ctx)
			if err != nil {
				return "", err
			}
			a, err := f.d.Agents.Create(ctx, agent.NewAgent{Name: c.Name, Handle: strings.TrimPrefix(strings.TrimSpace(c.Handle), "@"),
				Soul: c.Soul, Capabilities: c.Capabilities, BoxID: boxID})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("created %s (@%s, id %s)", a.Name, a.Handle, a.ID), nil
		},
	}
}

// installTemplate is install_template, held for approval like
// create_coworker.
func (f *Foreman) installTemplate() tool.Tool {
	type in struct {
		Template string `json:"template"`
		Name     string `json:"name"`
	}
	read := func(ctx context.Context, input json.RawMessage) (in, *template.Template, error) {
		var v in
		if err := jsonarg.Decode(input, &v); err != nil {
			return v, nil, err
		}
		t, err := f.findTemplate(ctx, v.Template)
		return v, t, err
	}
	return tool.Tool{
		Name: "install_template", Family: tool.ForemanFamily,
		Description: "Install a coworker from the template library. The person approves it on a card first.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"template":{"type":"string","description":"The template's name or id."},"name":{"type":"string","description":"The coworker's name; the template's when empty."}` +
			`},"required":["template"],"additionalProperties":false}`),
		Approve: func(ctx context.Context, input json.RawMessage) (string, string, error) {
			v, t, err := read(ctx, input)
			if err != nil {
				return "", "", err
			}
			name := v.Name
			if name == "" {
				name = t.Name
			}
			return fmt.Sprintf("Install %s (template %q)", name, t.Name), t.Description, nil
		},
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			v, t, err := read(ctx, input)
			if err != nil {
				return "", err
			}
			got, err := f.d.Templates.Install(ctx, t.ID, template.InstallOptions{Name: v.Name})
			if err != nil {
				return "", err
			}
			out := fmt.Sprintf("installed %s (@%s) from template %q", got.Agent.Name, got.Agent.Handle, t.Name)
			if len(got.Cards) > 0 {
				out += "; the person still has to: " + strings.Join(got.Cards, "; ")
			}
			return out, nil
		},
	}
}

// firstBox is the board's first visible Box, where new coworkers sit.
func (f *Foreman) firstBox(ctx context.Context) (string, error) {
	boxes, err := f.d.Boxes.List(ctx)
	if err != nil {
		return "", err
	}
	if len(boxes) == 0 {
		return "", errors.New("the workspace has no Box to put a coworker on; the person should create one first")
	}
	return boxes[0].ID, nil
}
