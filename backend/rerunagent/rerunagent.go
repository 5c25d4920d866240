// Package rerunagent owns the Rerun agent, the built-in assistant every
// workspace has: its definition, and its tool source (the board tools only
// it has, then the API's tool set in process) through which it manages the
// workspace.
package rerunagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// AgentID is the Rerun agent's fixed id, the same on every device.
const AgentID = "ag_rerun"

// Agent is the built-in workspace assistant every workspace has.
var Agent = agent.Builtin{
	Kind: agent.BuiltinRerun, ID: AgentID, Handle: "rerun", Name: "Rerun", BoxID: box.SystemID,
	// Its own folder and database would only duplicate the workspace's: it
	// works on the workspace through its API tools.
	Capabilities: []string{"memory", "agents", "human", "web"},
	Soul: `# You are Rerun, the workspace's own assistant

You help the person run this workspace of AI coworkers. You do not do the coworkers' jobs: you set them up, tune them, and find out what they did.

## What you do
- Create and configure coworkers: their soul (the system prompt that says who they are, what they own and how they work), model and capabilities. Write souls that are specific: the job, the inputs, the output, the tone, what to ask the person about.
- Give coworkers skills (written procedures), scheduled tasks (cron in a time zone, or a date) and webhook triggers; attach apps (connectors) they need, then tell the person to finish the sign-in in the app.
- Read runs to explain what a coworker did, why it failed, and what it cost. Query the coworkers' databases and the shared database to answer questions about their data.
- Package a coworker as a template, or install one from the library.
- Arrange the board: move_agent puts a coworker in another Box, create_box makes a new Box. The person approves each of these on a card.

## How you work
- Look before you change: list_agents, get_agent, list_runs, get_run. Say what you are about to change and why, in one or two sentences, then do it.
- When the person's message starts with "About @handle:", it is about that coworker: read it with get_agent first.
- Change only what was asked. Deleting anything, and changing a database, waits for the person's approval; if they decline, it is not done: do not do it another way.
- Never ask for a password or API key in the chat. Credentials are entered by the person in the app (Settings, or an app's sign-in).
- Keep answers short: what you did, what the person still has to do, and where to look.`,
}

// Deps are what the Rerun agent's tools act on.
type Deps struct {
	Agents *agent.Service
	Boxes  *box.Service
	// API is the API's tool set in process (workspace.Config.APITools);
	// nil: the Rerun agent has only its board tools.
	API run.ToolSource
}

// Source is the tool source of the Rerun agent: the board tools only the
// person's own assistant has (move_agent, create_box, each held for the
// person's approval), then the API's tool set in process when there is one.
type Source struct {
	d Deps
}

// NewSource returns the Rerun agent's tool source.
func NewSource(d Deps) Source { return Source{d: d} }

func (s Source) Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error) {
	if a.Builtin != agent.BuiltinRerun {
		return nil, nil
	}
	tools := s.boardTools()
	if s.d.API == nil {
		return tools, nil
	}
	more, err := s.d.API.Tools(ctx, a)
	return append(tools, more...), err
}

func (s Source) Guide(a agent.Agent) string {
	if a.Builtin != agent.BuiltinRerun {
		return ""
	}
	g := `## The workspace
- move_agent moves a coworker to another Box and create_box makes a Box; the person approves each on a card before it happens.`
	if s.d.API != nil {
		g += `
- The workspace tools (list_agents, create_agent, update_agent, upsert_skill, upsert_schedule, upsert_trigger, send_message, get_run, db_query, attach_connector, the template tools…) act on any coworker, named by id or @handle. A Box is called a space there.
- Deleting, detaching and database changes wait for the person's approval.`
	}
	return g
}

type moveIn struct {
	Handle string `json:"handle"`
	Box    string `json:"box"`
}

// boardTools are move_agent and create_box.
func (s Source) boardTools() []tool.Tool {
	return []tool.Tool{{
		Name: "move_agent", Family: "board",
		Description: "Move a coworker to another Box on the board. It keeps its files, handle, skills and history: a Box only arranges agents. " +
			"The person approves the move on a card first; if they decline, nothing changes.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"handle":{"type":"string","description":"The coworker's @handle."},` +
			`"box":{"type":"string","description":"The Box to move it to: its name or id."}` +
			`},"required":["handle","box"],"additionalProperties":false}`),
		Approve: func(ctx context.Context, input json.RawMessage) (string, string, error) {
			a, to, err := s.move(ctx, input)
			if err != nil {
				return "", "", err
			}
			from := a.BoxID
			if b, err := s.d.Boxes.Get(ctx, a.BoxID); err == nil {
				from = b.Name
			}
			return fmt.Sprintf("Move @%s to %s", a.Handle, to.Name),
				fmt.Sprintf("%s (@%s) moves from Box %q to Box %q. It keeps its files, skills and history.", a.Name, a.Handle, from, to.Name), nil
		},
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			a, to, err := s.move(ctx, input)
			if err != nil {
				return "", err
			}
			if _, err := s.d.Agents.Update(ctx, a.ID, agent.Update{BoxID: &to.ID}); err != nil {
				return "", err
			}
			return fmt.Sprintf("@%s now sits in Box %q.", a.Handle, to.Name), nil
		},
	}, {
		Name: "create_box", Family: "board",
		Description: "Create a new Box on the board (a group of coworkers: a team, a client, a project). " +
			"The person approves it on a card first; if they decline, nothing changes. Returns the new Box's id.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The Box's name, up to 64 characters."}` +
			`},"required":["name"],"additionalProperties":false}`),
		Approve: func(_ context.Context, input json.RawMessage) (string, string, error) {
			name, err := boxName(input)
			if err != nil {
				return "", "", err
			}
			return fmt.Sprintf("Create the Box %q", name), fmt.Sprintf("A new Box %q appears at the end of the board, empty.", name), nil
		},
		Run: func(ctx context.Context, _ *tool.Env, input json.RawMessage) (string, error) {
			name, err := boxName(input)
			if err != nil {
				return "", err
			}
			b, err := s.d.Boxes.Create(ctx, name)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf(`Created Box %q (id %s).`, b.Name, b.ID), nil
		},
	}}
}

// move reads move_agent's input: the agent (not a built-in one) and the box
// it goes to (not the one it is on).
func (s Source) move(ctx context.Context, input json.RawMessage) (agent.Agent, box.Box, error) {
	var in moveIn
	if err := jsonarg.Decode(input, &in); err != nil {
		return agent.Agent{}, box.Box{}, err
	}
	if strings.TrimSpace(in.Handle) == "" || strings.TrimSpace(in.Box) == "" {
		return agent.Agent{}, box.Box{}, fault.Invalid("give both the coworker's @handle and the Box's name")
	}
	a, err := s.d.Agents.ByHandle(ctx, strings.TrimSpace(in.Handle))
	if err != nil {
		return agent.Agent{}, box.Box{}, fault.NotFound("no coworker @%s; list_agents shows the handles", strings.TrimPrefix(strings.TrimSpace(in.Handle), "@"))
	}
	if a.Builtin != "" {
		return agent.Agent{}, box.Box{}, fault.Invalid("@%s is built into Rerun and has its own place on the board; it cannot be moved", a.Handle)
	}
	boxes, err := s.d.Boxes.List(ctx)
	if err != nil {
		return agent.Agent{}, box.Box{}, err
	}
	ref := strings.TrimSpace(in.Box)
	for _, b := range boxes {
		if b.ID == ref || strings.EqualFold(b.Name, ref) {
			if b.ID == a.BoxID {
				return agent.Agent{}, box.Box{}, fault.Invalid("@%s already sits in Box %q", a.Handle, b.Name)
			}
			return a, b, nil
		}
	}
	names := make([]string, len(boxes))
	for i, b := range boxes {
		names[i] = fmt.Sprintf("%q", b.Name)
	}
	return agent.Agent{}, box.Box{}, fault.NotFound("no Box %q; the Boxes are %s (create_box makes a new one)", ref, strings.Join(names, ", "))
}

func boxName(input json.RawMessage) (string, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	return box.CleanName(in.Name)
}
