package mcpapi

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// CatalogApp is a catalog entry as search_connectors shows it: what it is
// and what the person will be asked for, without its skill text.
type CatalogApp struct {
	ID          string               `json:"id"`
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Category    string               `json:"category"`
	Homepage    string               `json:"homepage"`
	Auth        string               `json:"auth"`
	Runs        string               `json:"runs"` // stdio, http or sse
	Variables   []connector.Variable `json:"variables"`
	// Source is builtin (reviewed by Rerun) or registry (from the MCP
	// Registry, not reviewed: its tools go through the person's review).
	Source string `json:"source"`
	// Needs says why a registry app cannot install on this computer.
	Needs string `json:"needs,omitempty"`
}

// ConnectorView is an installed app as the tools show it.
type ConnectorView struct {
	ID        string   `json:"id"`
	AgentID   string   `json:"agent_id"`
	Agent     string   `json:"agent"` // @handle
	Name      string   `json:"name"`
	CatalogID string   `json:"catalog_id"` // "" for a custom server
	Status    string   `json:"status"`
	Error     string   `json:"error,omitempty"`
	Next      string   `json:"next,omitempty"` // what the person must do in the app
	Missing   []string `json:"missing"`        // variables not set yet
	Tools     []string `json:"tools"`          // what the agent calls them, approved ones
}

func toConnector(c connector.Connector, handle string) ConnectorView {
	v := ConnectorView{ID: c.ID, AgentID: c.AgentID, Agent: "@" + handle, Name: c.Name, CatalogID: c.CatalogID,
		Status: c.Status, Error: c.Error, Next: c.Next, Missing: c.Missing, Tools: []string{}}
	for _, t := range c.Tools {
		if t.State == connector.ToolApproved {
			v.Tools = append(v.Tools, t.AgentName)
		}
	}
	return v
}

const connectorRef = `"connector":{"type":"string","description":"The app: its catalog id (github), its name (GitHub) or a registry server's id (io.github.owner/name); for detach_connector also an installed connector's id (cn_…)."}`

// maxConnectorsFound bounds what search_connectors lists.
const maxConnectorsFound = 50

func connectorTools() []toolDef {
	return []toolDef{{
		name: "search_connectors", title: "Search the app catalog", readOnly: true, idempotent: true,
		description: "Search the catalog of connectors (apps: MCP servers such as GitHub, Slack, Notion, Stripe, Linear, Gmail, web search) an agent can be given, " +
			"by words, name or category. Shows how each signs in (none, api_key, oauth) and the variables the person will be asked for. An empty query lists them all. " +
			"Built-in apps (source builtin, reviewed by Rerun) come first, then servers from the MCP Registry (source registry, ids like io.github.owner/name): " +
			"not reviewed by Rerun, their tools wait for the person's approval; needs says why one cannot install on this computer.",
		schema: `{"type":"object","properties":{"query":{"type":"string","description":"Words, a name or a category, e.g. issues, email, payments."}},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			var in struct {
				Query string `json:"query"`
			}
			if err := decode(args, &in); err != nil {
				return nil, err
			}
			cat := w.Connectors.SearchApps(ctx, in.Query, maxConnectorsFound)
			out := []CatalogApp{}
			for _, a := range cat.Apps {
				vars := a.Variables
				if vars == nil {
					vars = []connector.Variable{}
				}
				out = append(out, CatalogApp{ID: a.ID, Name: a.Name, Description: a.Description, Category: a.Category,
					Homepage: a.Homepage, Auth: a.Auth, Runs: a.Transport.Type, Variables: vars, Source: a.Source, Needs: a.Needs})
			}
			res := map[string]any{"catalog_version": cat.Version, "connectors": out, "registry": registryNote(cat.Registry)}
			return res, nil
		},
	}, {
		name: "list_connectors", title: "List the workspace's connectors", readOnly: true, idempotent: true,
		description: "List every connector (app or custom MCP server) installed on the workspace's agents, with its agent, status " +
			"(untested, connected, needs_sign_in, error, blocked_changed), what the person must still do (next) and the tools it gives.",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			if err := decode(args, &struct{}{}); err != nil {
				return nil, err
			}
			agents, err := w.Agents.Roster(ctx)
			if err != nil {
				return nil, err
			}
			handles := map[string]string{}
			for _, a := range agents {
				handles[a.ID] = a.Handle
			}
			list, err := w.Connectors.List(ctx, "")
			if err != nil {
				return nil, err
			}
			out := []ConnectorView{}
			for _, c := range list {
				out = append(out, toConnector(c, handles[c.AgentID]))
			}
			return map[string]any{"connectors": out}, nil
		},
	}, {
		name: "list_agent_connectors", title: "List an agent's connectors", readOnly: true, idempotent: true,
		description: "List the connectors installed on one agent, with status, what the person must still do (next) and the tools " +
			"each gives it (named <app>__<tool>; they need the agent's connectors capability).",
		schema: `{"type":"object","properties":{` + agentRef + `},"required":["agent"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, err := agentOnly(ctx, w, args)
			if err != nil {
				return nil, err
			}
			list, err := w.Connectors.List(ctx, a.ID)
			if err != nil {
				return nil, err
			}
			out := []ConnectorView{}
			for _, c := range list {
				out = append(out, toConnector(c, a.Handle))
			}
			return map[string]any{"connectors": out}, nil
		},
	}, {
		name: "attach_connector", title: "Attach a connector to an agent", idempotent: true,
		description: "Declare a catalog app on an agent. It only declares: no credential goes through the API (there is no argument for one), " +
			"so the person finishes the sign-in in the Rerun app (the agent's Apps tab: its setup form, or a browser sign-in); the answer's next says what they must do. " +
			"Attaching an app the agent already has returns it as it is. The agent needs the connectors capability to use its tools.",
		schema: `{"type":"object","properties":{` + agentRef + `,` + connectorRef + `},"required":["agent","connector"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, ref, err := agentAndConnector(ctx, w, args)
			if err != nil {
				return nil, err
			}
			app, ok, err := w.Connectors.FindApp(ctx, ref)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fault.NotFound("no app %q in the catalog; search_connectors shows the ids", ref)
			}
			inst, err := w.Connectors.Install(ctx, a.ID, app.ID)
			if err != nil {
				return nil, err
			}
			c := toConnector(inst.Connector, a.Handle)
			out := map[string]any{"connector": c}
			switch {
			case c.Next != "":
				out["message"] = "Declared. The person must finish the sign-in in the Rerun app: " + c.Next
			default:
				out["message"] = "Attached: " + app.Name + " needs no sign-in."
			}
			if app.Source == connector.SourceRegistry {
				out["message"] = out["message"].(string) + " It comes from the MCP Registry and was not reviewed by Rerun: " +
					"the person approves its tools in the agent's Apps tab before the agent can call them."
			}
			return out, nil
		},
	}, {
		name: "detach_connector", title: "Detach a connector from an agent", destructive: true, idempotent: true,
		description: "Uninstall a connector from an agent: its tools and skill leave the agent and its server stops. " +
			"The workspace variables it used stay (Settings → Variables).",
		schema: `{"type":"object","properties":{` + agentRef + `,` + connectorRef + `},"required":["agent","connector"],"additionalProperties":false}`,
		run: func(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (any, error) {
			a, ref, err := agentAndConnector(ctx, w, args)
			if err != nil {
				return nil, err
			}
			list, err := w.Connectors.List(ctx, a.ID)
			if err != nil {
				return nil, err
			}
			for _, c := range list {
				if c.ID == ref || c.CatalogID == ref || c.Slug == ref || strings.EqualFold(c.Name, ref) {
					if err := w.Connectors.Uninstall(ctx, c.ID); err != nil {
						return nil, err
					}
					return map[string]any{"detached": toConnector(c, a.Handle)}, nil
				}
			}
			return nil, fault.NotFound("@%s has no connector %q; list_agent_connectors shows them", a.Handle, ref)
		},
	}}
}

// registryNote says where search_connectors' registry entries came from.
func registryNote(st connector.RegistryStatus) string {
	switch {
	case st.URL == "":
		return "The MCP Registry is off: only the built-in apps are listed."
	case st.Offline && st.CachedAt != nil:
		return "The MCP Registry (" + st.URL + ") cannot be reached: its entries are from the copy saved " + st.CachedAt.UTC().Format("2006-01-02 15:04 UTC") + "."
	case st.Offline:
		return "The MCP Registry (" + st.URL + ") cannot be reached and nothing of it is saved: only the built-in apps are listed."
	}
	return "Built-in apps (reviewed by Rerun) first, then servers from the MCP Registry (" + st.URL + "), not reviewed by Rerun."
}

// agentAndConnector decodes {agent, connector} and finds the agent.
func agentAndConnector(ctx context.Context, w *workspace.Workspace, args json.RawMessage) (agent.Agent, string, error) {
	var in struct {
		Agent     string `json:"agent"`
		Connector string `json:"connector"`
	}
	if err := decode(args, &in); err != nil {
		return agent.Agent{}, "", err
	}
	a, err := findAgent(ctx, w, in.Agent)
	if err != nil {
		return agent.Agent{}, "", err
	}
	ref := strings.TrimSpace(in.Connector)
	if ref == "" {
		return agent.Agent{}, "", fault.Invalid("say which connector: its catalog id (search_connectors shows them)")
	}
	return a, ref, nil
}
