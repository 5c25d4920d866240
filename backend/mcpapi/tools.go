package mcpapi

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/search"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// tools is the tool set, in the order of the product's tool index.
func tools() []toolDef {
	all := coreTools()
	all = append(all, connectorTools()...) // connectors.go
	all = append(all, templateTools()...)  // templates.go
	return all
}

// coreTools are the compact tool set (28 tools), offered instead of all of
// them to a key whose tool set is compact, for clients that handle few
// tools: agents, runs, skills, schedules, triggers and databases.
func coreTools() []toolDef {
	var all []toolDef
	all = append(all, agentTools()...)
	all = append(all, runTools()...)
	all = append(all, skillTools()...)
	all = append(all, scheduleTools()...)
	all = append(all, triggerTools()...)
	all = append(all, databaseTools()...)
	return all
}

// Space is a Box as the API shows it.
type Space struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Position int    `json:"position"`
	Agents   int    `json:"agents"`
}

// Agent is an agent as the API shows it ("space", not "box").
type Agent struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Handle       string   `json:"handle"`
	SpaceID      string   `json:"space_id"`
	Space        string   `json:"space"`
	Soul         string   `json:"soul,omitempty"`
	Provider     string   `json:"provider"`
	Model        string   `json:"model"`
	Capabilities []string `json:"capabilities"`
	Network      bool     `json:"network"` // its commands may use the network
	// Builtin names a built-in agent ("rerun"); such an agent is managed
	// in the app only.
	Builtin string `json:"builtin,omitempty"`
	// Budget is the agent's spend limits (0: none), with its soul.
	Budget    *budget.Limits `json:"budget,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

func toAgent(ctx context.Context, w *workspace.Workspace, a agent.Agent, withSoul bool) Agent {
	out := Agent{ID: a.ID, Name: a.Name, Handle: a.Handle, SpaceID: a.BoxID, Provider: a.Provider, Model: a.Model,
		Capabilities: a.Capabilities, Network: a.Network, Builtin: a.Builtin, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if w != nil { // nil: the caller fills Space
		if b, err := w.Boxes.Get(ctx, a.BoxID); err == nil {
			out.Space = b.Name
		}
	}
	if withSoul {
		out.Soul = a.Soul
		if w != nil && w.Budgets != nil {
			if l, err := w.Budgets.Agent(ctx, a.ID); err == nil {
				out.Budget = &l
			}
		}
	}
	return out
}

// findAgent accepts an id ("ag_…") or a handle ("@name" or "name").
func findAgent(ctx context.Context, w *workspace.Workspace, ref string) (agent.Agent, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return agent.Agent{}, fault.Invalid("say which agent: its id (ag_…) or @handle; list_agents shows them")
	}
	if strings.HasPrefix(ref, "ag_") {
		if a, err := w.Agents.Get(ctx, ref); err == nil {
			return a, nil
		}
	}
	a, err := w.Agents.ByHandle(ctx, ref)
	if err != nil {
		return agent.Agent{}, fault.NotFound("no agent %q in this workspace; list_agents shows ids and handles", ref)
	}
	return a, nil
}

// findSpace accepts a space id or name; empty means the first space.
func findSpace(ctx context.Context, w *workspace.Workspace, ref string) (string, error) {
	boxes, err := w.Boxes.List(ctx)
	if err != nil {
		return "", err
	}
	return spaceIn(boxes, ref)
}

// spaceIn is findSpace among boxes.
func spaceIn(boxes []box.Box, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" && len(boxes) > 0 {
		return boxes[0].ID, nil
	}
	for _, b := range boxes {
		if b.ID == ref || strings.EqualFold(b.Name, ref) {
			return b.ID, nil
		}
	}
	return "", fault.NotFound("no space %q; list_spaces shows them (spaces are created in the Rerun app, not through the API)", ref)
}

// agentOnly decodes the arguments of a tool whose only argument is the
// agent, and finds it.
func agentOnly(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (agent.Agent, error) {
	var in struct {
		Agent string `json:"agent"`
	}
	if err := decode(args, &in); err != nil {
		return agent.Agent{}, err
	}
	return findAgent(ctx, w, in.Agent)
}

const agentRef = `"agent":{"type":"string","description":"The agent's id (ag_…) or @handle."}`

func agentTools() []toolDef {
	return []toolDef{{
		name: "list_spaces", title: "List spaces", readOnly: true, idempotent: true,
		description: "List the workspace's spaces (Boxes): the groups agents sit in on the board, with how many agents each holds. " +
			"Spaces only arrange agents; the shared folder and shared database are common to the whole workspace. Spaces are created by the person in the app, not through the API.",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			if err := decode(args, &struct{}{}); err != nil {
				return nil, err
			}
			r, err := rosterOf(ctx, w) // readmodel.go
			if err != nil {
				return nil, err
			}
			return r.answer("spaces", func() any {
				count := map[string]int{}
				for _, a := range r.agents {
					count[a.BoxID]++
				}
				out := []Space{}
				for _, b := range r.boxes {
					out = append(out, Space{b.ID, b.Name, b.Position, count[b.ID]})
				}
				return map[string]any{"spaces": out}
			})
		},
	}, {
		name: "list_agents", title: "List agents", readOnly: true, idempotent: true,
		description: "List the workspace's agents (AI coworkers) with id, name, @handle, space, model and capabilities. Optionally only those of one space.",
		schema:      `{"type":"object","properties":{"space":{"type":"string","description":"Only agents of this space (id or name)."}},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Space string `json:"space"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			r, err := rosterOf(ctx, w) // readmodel.go
			if err != nil {
				return nil, err
			}
			space := ""
			if in.Space != "" {
				id, err := spaceIn(r.boxes, in.Space)
				if err != nil {
					return nil, err
				}
				space = id
			}
			return r.answer("agents:"+space, func() any {
				names := make(map[string]string, len(r.boxes))
				for _, b := range r.boxes {
					names[b.ID] = b.Name
				}
				out := make([]Agent, 0, len(r.agents))
				for _, a := range r.agents {
					if a.Builtin != "" {
						continue // has no space; get_agent and send_message reach it by @handle
					}
					if space == "" || a.BoxID == space {
						v := toAgent(ctx, nil, a, false)
						v.Space = names[a.BoxID]
						out = append(out, v)
					}
				}
				return map[string]any{"agents": out}
			})
		},
	}, {
		name: "get_agent", title: "Get an agent", readOnly: true, idempotent: true,
		description: "Get one agent in full: its soul (system prompt, markdown), model, capabilities and space.",
		schema:      `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			return toAgent(ctx, w, a, true), nil
		},
	}, {
		name: "create_agent", title: "Create an agent",
		description: "Create an agent. Its @handle is derived from the name unless given, is unique in the workspace and never changes. " +
			"The soul is its system prompt (markdown): who it is, what it owns, how it works. Capabilities are the tool families it may use: " +
			capabilityList() + ". Omit them for the defaults. Returns the new agent.",
		schema: `{"type":"object","properties":{` +
			`"name":{"type":"string","description":"Display name, free text."},` +
			`"handle":{"type":"string","description":"Optional @handle: 2-32 of a-z, 0-9, '-', starting with a letter."},` +
			`"space":{"type":"string","description":"Space id or name (default: the first space)."},` +
			`"soul":{"type":"string","description":"System prompt, markdown."},` +
			`"provider":{"type":"string","description":"Model provider: anthropic, openai or ollama (default: the first configured)."},` +
			`"model":{"type":"string","description":"Model id, e.g. claude-sonnet-4-5 (default: the provider's default)."},` +
			`"capabilities":{"type":"array","items":{"type":"string"},"description":"Enabled tool families."}` +
			`},"required":["name"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				agent.NewAgent
				Space string `json:"space"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			box, err := findSpace(ctx, w, in.Space)
			if err != nil {
				return nil, err
			}
			in.BoxID = box
			if err := refuseSecrets(w, "soul", "a soul", &in.Soul); err != nil {
				return nil, err
			}
			a, err := w.Agents.Create(ctx, in.NewAgent)
			if err != nil {
				return nil, err
			}
			return toAgent(ctx, w, a, true), nil
		},
	}, {
		name: "update_agent", title: "Update an agent", idempotent: true, refused: []string{"handle"},
		description: "Change an agent: name, soul (a new version is kept; older ones stay in its history), model, capabilities, network, or move it to another space (moving changes nothing else). " +
			"The @handle never changes. Only the arguments given are changed.",
		schema: `{"type":"object","properties":{` + agentRef + `,` +
			`"name":{"type":"string"},"soul":{"type":"string","description":"The whole new soul, markdown."},` +
			`"provider":{"type":"string"},"model":{"type":"string"},` +
			`"capabilities":{"type":"array","items":{"type":"string"},"description":"The complete new list of enabled tool families."},` +
			`"space":{"type":"string","description":"Move to this space (id or name)."},` +
			`"budget":{"type":"object","description":"Spend limits; only the fields given change, 0 clears one. Every model call is capped to what they leave; at a limit the run waits on a budget card the person answers in the app.","properties":{` +
			`"run_tokens":{"type":"integer","minimum":0,"description":"Tokens one run may use."},` +
			`"run_usd":{"type":"number","minimum":0,"description":"US dollars one run may spend (priced from the model price table; a model with no price is held to its token limits only)."},` +
			`"day_tokens":{"type":"integer","minimum":0,"description":"Tokens per day, all its runs together."},` +
			`"day_usd":{"type":"number","minimum":0,"description":"US dollars per day, all its runs together."}` +
			`},"additionalProperties":false},` +
			`"network":{"type":"boolean","description":"Whether the agent's commands and its apps' local servers may use the network (on for a new agent)."}` +
			`},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				agent.Update
				Agent  string         `json:"agent"`
				Space  *string        `json:"space"`
				Budget *budget.Update `json:"budget"`
			}
			if err := decode(args, &in); err != nil {
				if strings.Contains(err.Error(), `"handle"`) {
					return nil, fault.Invalid("an agent's @handle never changes; create a new agent for a new handle")
				}
				return nil, err
			}
			if err := refuseSecrets(w, "soul", "a soul", in.Soul); err != nil {
				return nil, err
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			if a.Builtin != "" {
				return nil, errBuiltin(a)
			}
			if in.Space != nil {
				box, err := findSpace(ctx, w, *in.Space)
				if err != nil {
					return nil, err
				}
				in.BoxID = &box
			}
			if in.Budget != nil { // checked before anything changes
				if _, err := in.Budget.Apply(budget.Limits{}); err != nil {
					return nil, err
				}
			}
			in.Update.SoulAuthor = agent.SoulByAPI
			a, err = w.Agents.Update(ctx, a.ID, in.Update)
			if err != nil {
				return nil, err
			}
			if in.Budget != nil {
				if _, err := w.Budgets.SetAgent(ctx, a.ID, *in.Budget); err != nil {
					return nil, err
				}
			}
			return toAgent(ctx, w, a, true), nil
		},
	}, {
		name: "delete_agent", title: "Delete an agent", destructive: true, idempotent: true,
		description: "Delete an agent for good: its soul history, runs, private files and private database. Its unfinished runs are stopped first. This cannot be undone.",
		schema:      `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			if a.Builtin != "" {
				return nil, errBuiltin(a)
			}
			if err := w.DeleteAgent(ctx, a.ID); err != nil {
				return nil, err
			}
			return map[string]any{"deleted": a.ID, "handle": a.Handle}, nil
		},
	}}
}

// errBuiltin refuses changing a built-in agent through the API.
func errBuiltin(a agent.Agent) error {
	return fault.Invalid("@%s is built into Rerun: it cannot be deleted, renamed or moved, and only the person changes its soul and model, in the app", a.Handle)
}

func capabilityList() string {
	var ids []string
	for _, c := range agent.Capabilities {
		ids = append(ids, c.ID)
	}
	return strings.Join(ids, ", ")
}

// searchRuns is the runs with a step matching o, newest first, at most
// limit: it pages through the search's hits (newest first) until it has
// limit runs or none are left.
func searchRuns(ctx context.Context, w *workspace.Workspace, o search.Options, limit int) ([]run.Run, error) {
	o.Limit = 200
	seen := map[string]bool{}
	var runs []run.Run
	for page := 0; page < 20 && len(runs) < limit; page++ {
		res, err := w.Search.Search(ctx, o)
		if err != nil {
			return nil, err
		}
		for _, h := range res.Hits {
			if h.RunID == "" || seen[h.RunID] {
				continue
			}
			seen[h.RunID] = true
			r, err := w.Runs.Get(ctx, h.RunID)
			if errors.Is(err, fault.ErrNotFound) {
				continue // pruned since the match
			} else if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
		if !res.More || len(res.Hits) == 0 {
			break
		}
		o.Before = res.Hits[len(res.Hits)-1].N
	}
	slices.SortStableFunc(runs, func(a, b run.Run) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return runs, nil
}

// RunView is a run as get_run and list_runs show it.
type RunView struct {
	run.Run
	Agent string     `json:"agent"` // @handle
	Steps []run.Step `json:"steps,omitempty"`
	// WaitingFor is the card a paused run waits on, for reading only: the
	// person answers it in the app.
	WaitingFor *run.Pause `json:"waiting_for,omitempty"`
	// Note says what to do next when a wait ended before the run did.
	Note string `json:"note,omitempty"`
}

func runTools() []toolDef {
	return []toolDef{{
		name: "send_message", title: "Send a message to an agent",
		description: "Send a message to an agent: it starts a run in which the agent works (thinks with its model, uses its tools) and answers. " +
			"Runs started here share one API conversation per agent, so the agent remembers earlier API messages; pass new_session for a fresh one. " +
			"By default this returns at once with the run id (status queued); set wait_seconds (up to 300) to wait for the run to finish or pause, then output holds the agent's last message. " +
			"Over HTTP a long wait needs a progress token (the client then gets progress every few seconds); without one the wait stops at 50 s and note says to poll get_run. " +
			"If the agent pauses to ask the person something, the person answers in the Rerun app; no tool answers for them, and until they do a new message to that conversation is refused (pass new_session to start apart).",
		schema: `{"type":"object","properties":{` + agentRef + `,` +
			`"message":{"type":"string","description":"What the agent should do."},` +
			`"wait_seconds":{"type":"integer","minimum":0,"maximum":300,"description":"Wait up to this long for the run to end (default 0)."},` +
			`"new_session":{"type":"boolean","description":"Start a new conversation instead of continuing the API one."}` +
			`},"required":["agent","message"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent      string `json:"agent"`
				Message    string `json:"message"`
				Wait       int    `json:"wait_seconds"`
				NewSession bool   `json:"new_session"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if in.Wait < 0 || in.Wait > 300 {
				return nil, fault.Invalid("wait_seconds must be between 0 and 300")
			}
			a, err := findAgent(ctx, w, in.Agent)
			if err != nil {
				return nil, err
			}
			// One API conversation per agent unless asked for a new one; a
			// card open in it refuses the message, as in the app's chat.
			r, err := w.Runs.Send(ctx, run.SendRequest{AgentID: a.ID, NewSession: in.NewSession,
				Source: run.SourceAPI, Input: in.Message, From: "api"})
			if err != nil {
				return nil, err
			}
			note := ""
			if in.Wait > 0 {
				r, note = waitRun(ctx, w, r.ID, time.Duration(in.Wait)*time.Second)
			}
			return RunView{Run: r, Agent: "@" + a.Handle, Note: note}, nil
		},
	}, {
		name: "list_runs", title: "List runs", readOnly: true, idempotent: true,
		description: "List runs (executions of agents), newest first, with status (queued, running, paused, done, failed, cancelled), source (chat, api, agent, schedule, trigger), tokens and cost. Filter by agent, status, source and start time. " +
			"Pass query to list only the runs whose input, messages, tool calls, tool results, errors or notes contain its words (full-text: every word must appear; \"a phrase\" in quotes, word* for a prefix, -word to exclude); the other filters still apply.",
		schema: `{"type":"object","properties":{` +
			`"agent":{"type":"string","description":"Only this agent's runs (id or @handle)."},` +
			`"query":{"type":"string","maxLength":500,"description":"Full-text search: only runs whose steps contain these words, e.g. invoice \"rate limit\" deploy* -draft."},` +
			`"status":{"type":"string","enum":["queued","running","paused","done","failed","cancelled"]},` +
			`"source":{"type":"string","enum":["chat","api","agent","schedule","trigger"]},` +
			`"since":{"type":"string","description":"Only runs created at or after this RFC 3339 time."},` +
			`"limit":{"type":"integer","minimum":1,"maximum":200,"description":"Default 50."}` +
			`},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Agent  string `json:"agent"`
				Query  string `json:"query"`
				Status string `json:"status"`
				Source string `json:"source"`
				Since  string `json:"since"`
				Limit  int    `json:"limit"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			o := run.ListOptions{Limit: 1000}
			handles := map[string]string{}
			if in.Agent != "" {
				a, err := findAgent(ctx, w, in.Agent)
				if err != nil {
					return nil, err
				}
				o.AgentID = a.ID
			}
			var since time.Time
			if in.Since != "" {
				t, err := time.Parse(time.RFC3339, in.Since)
				if err != nil {
					return nil, fault.Invalid("since %q is not an RFC 3339 time, e.g. 2026-11-30T09:00:00Z", in.Since)
				}
				since = t
			}
			limit := in.Limit
			switch {
			case limit == 0:
				limit = 50
			case limit < 1 || limit > 200:
				return nil, fault.Invalid("limit must be between 1 and 200 (default 50); for older runs pass since, or filter by agent, status or source")
			}
			var runs []run.Run
			var err error
			if in.Query != "" {
				runs, err = searchRuns(ctx, w, search.Options{Query: in.Query, AgentID: o.AgentID, Source: in.Source, Status: in.Status, Since: since}, limit)
			} else {
				runs, err = w.Runs.List(ctx, o)
			}
			if err != nil {
				return nil, err
			}
			out := []RunView{}
			for _, r := range runs {
				if (in.Status != "" && string(r.Status) != in.Status) || (in.Source != "" && r.Source != in.Source) ||
					(!since.IsZero() && r.CreatedAt.Before(since)) {
					continue
				}
				if _, ok := handles[r.AgentID]; !ok {
					if a, err := w.Agents.Get(ctx, r.AgentID); err == nil {
						handles[r.AgentID] = "@" + a.Handle
					}
				}
				out = append(out, RunView{Run: r, Agent: handles[r.AgentID]})
				if len(out) == limit {
					break
				}
			}
			return map[string]any{"runs": out}, nil
		},
	}, {
		name: "get_run", title: "Get a run", readOnly: true, idempotent: true,
		description: "Get one run: status, output (the agent's last message), error, tokens, cost, and every step in order — model turns, tool calls with their inputs and results. " +
			"A paused run is waiting for the person: waiting_for shows the card (a question, an approval, a connector or a credential form) they answer in the Rerun app; no tool answers it.",
		schema: `{"type":"object","properties":{"run_id":{"type":"string","description":"The run's id (run_…)."}},"required":["run_id"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				RunID string `json:"run_id"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			if strings.TrimSpace(in.RunID) == "" {
				return nil, fault.Invalid("say which run: its id (run_…); list_runs and send_message give it")
			}
			r, err := w.Runs.Get(ctx, in.RunID)
			if err != nil {
				return nil, err
			}
			steps, err := w.Runs.Steps(ctx, r.ID)
			if err != nil {
				return nil, err
			}
			view := RunView{Run: r, Steps: steps}
			if r.Status == run.Paused {
				if view.WaitingFor, err = w.Runs.OpenPauseOf(ctx, r.ID); err != nil {
					return nil, err
				}
			}
			if a, err := w.Agents.Get(ctx, r.AgentID); err == nil {
				view.Agent = "@" + a.Handle
			}
			return view, nil
		},
	}}
}

// agentDB is the path of an agent's private database.
func agentDB(w *workspace.Workspace, id string) string {
	return filepath.Join(w.Agents.Dir(id), "agent.db")
}

func sharedDB(w *workspace.Workspace) string { return filepath.Join(w.Dir, "shared.db") }
