package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// The apps installed on an agent (Deps.Apps) reach a run in four places:
// their tools and search_apps (a tool source, with the "connectors"
// capability), their skills in the skill index and load_skill, a
// request_connector card naming an app (filled with the app's own setup
// form), and the answer to that card (the app tested, its tools listed).

// withApps adds the apps' tool source to sources.
func withApps(sources []ToolSource, apps *connector.Service) []ToolSource {
	if apps == nil {
		return sources
	}
	return append(slices.Clip(sources), appSource{apps})
}

// appSource gives an agent with the connectors capability the tools of its
// apps and search_apps.
type appSource struct{ apps *connector.Service }

func (src appSource) Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error) {
	if !slices.Contains(a.Capabilities, connector.Family) {
		return nil, nil
	}
	tools, err := src.apps.Tools(ctx, a.ID)
	return append([]tool.Tool{src.searchTool()}, tools...), err
}

// maxAppsFound bounds what search_apps lists.
const maxAppsFound = 15

func (src appSource) searchTool() tool.Tool {
	return tool.Tool{
		Name:   "search_apps",
		Family: connector.Family,
		Description: "Search the catalog of apps (MCP servers: GitHub, Slack, Notion, Stripe, Linear, Gmail, web search…) the person can " +
			"install on you. Returns each match's id, what it does, how it signs in and whether you have it already. To get one, " +
			"call request_connector with connector set to its id: the person installs it and signs in, and its tools <app>__<tool> are yours.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Words to look for: a product, a task or a category (github issues, email, payments). Empty lists every app."}` +
			`},"required":["query"],"additionalProperties":false}`),
		Run: src.search,
	}
}

func (src appSource) search(ctx context.Context, env *tool.Env, input json.RawMessage) (string, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	found := src.apps.SearchApps(ctx, in.Query, maxAppsFound).Apps
	if len(found) == 0 {
		return fmt.Sprintf("no app matches %q; try other words, or ask the person to add the server as a custom MCP server in your Apps tab", in.Query), nil
	}
	installed := map[string]string{}
	if list, err := src.apps.List(ctx, env.AgentID); err == nil {
		for _, c := range list {
			installed[c.CatalogID] = c.Status
		}
	}
	var b strings.Builder
	for _, app := range found {
		fmt.Fprintf(&b, "- %s: %s (%s; sign-in: %s) — %s", app.ID, app.Name, app.Category, app.Auth, app.Description)
		if st, ok := installed[app.ID]; ok {
			fmt.Fprintf(&b, " [installed: %s]", st)
		}
		b.WriteByte('\n')
	}
	b.WriteString("To get one: request_connector with connector set to its id.")
	return b.String(), nil
}

// usesApps reports whether the agent is offered its apps' tools.
func (s *Service) usesApps(a agent.Agent) bool {
	return s.apps != nil && slices.Contains(a.Capabilities, connector.Family)
}

// appSkills are the skills of the agent's apps not shadowed by one of its
// own, for the skill index and list_skills.
func (s *Service) appSkills(a agent.Agent, own []string) []connector.SkillSummary {
	if !s.usesApps(a) {
		return nil
	}
	var out []connector.SkillSummary
	for _, sk := range s.apps.Skills(a.ID) {
		if !slices.Contains(own, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// skillIndex is the agent's skill index: its own skills, then its apps'.
func (s *Service) skillIndex(ctx context.Context, a agent.Agent) (string, error) {
	list, err := s.skills.List(ctx, a.ID)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var own []string
	for _, sk := range list {
		own = append(own, sk.Name)
		if sk.Error == "" {
			b.WriteString(skill.IndexLine(sk.Name, sk.Description) + "\n")
		}
	}
	for _, sk := range s.appSkills(a, own) {
		b.WriteString(skill.IndexLine(sk.Name, sk.Description) + "\n")
	}
	return b.String(), nil
}

// List is list_skills: the agent's own skills, then its apps'.
func (k skills) List(ctx context.Context, agentID string) ([]skill.Summary, error) {
	list, err := k.Service.List(ctx, agentID)
	if err != nil {
		return nil, err
	}
	a, err := k.s.agents.Get(ctx, agentID)
	if err != nil {
		return list, nil
	}
	own := make([]string, len(list))
	for i, sk := range list {
		own[i] = sk.Name
	}
	for _, sk := range k.s.appSkills(a, own) {
		list = append(list, skill.Summary{Name: sk.Name, Description: sk.Description})
	}
	return list, nil
}

// Load is load_skill: the agent's own skill of that name, else the skill of
// one of its apps.
func (k skills) Load(ctx context.Context, agentID, name string) (skill.Loaded, error) {
	l, err := k.Service.Load(ctx, agentID, name)
	if !errors.Is(err, fault.ErrNotFound) {
		return l, err
	}
	if a, aerr := k.s.agents.Get(ctx, agentID); aerr != nil || !k.s.usesApps(a) {
		return l, err
	}
	sk, aerr := k.s.apps.LoadSkill(ctx, agentID, name)
	if aerr != nil {
		return l, err // the agent's own "no skill" says what to do
	}
	return skill.Loaded{Skill: sk, Files: []string{}}, nil
}

// appCard fills a request_connector card that names an app — installed on
// the agent, or in the catalog (then installed now: declared, waiting for
// the sign-in) — with that app's setup form, whose secret fields the card's
// answer stores in exactly the variables the app reads. An app with nothing
// left to fill needs no card: answer is then the tool's result. A card
// naming no app is returned as it is.
func (s *Service) appCard(ctx context.Context, a agent.Agent, req pause.ConnectorRequest) (card pause.ConnectorRequest, answer string, err error) {
	if s.apps == nil {
		return req, "", nil
	}
	c, found, err := s.declareApp(ctx, a.ID, req.Connector)
	if err != nil || !found {
		return req, "", err
	}
	if len(c.Missing) == 0 {
		if c, err = s.apps.Status(ctx, c.ID); err != nil {
			return req, "", err
		}
		return req, fmt.Sprintf("No card needed: %s is already set up. %s", c.Name, s.appReport(ctx, a, c)), nil
	}
	card, err = s.apps.Form(ctx, c.ID)
	if err != nil {
		return req, "", err
	}
	why := strings.TrimSpace(req.Description)
	if why != "" {
		card.Description = strings.TrimSpace(why + "\n\n" + card.Description)
	}
	if len(card.Fields) == 0 {
		card.Description = strings.TrimSpace(card.Description + "\n\n" + c.Next + " Then answer this card.")
	}
	return card, "", card.Check()
}

// declareApp finds the app a card names among the agent's (by catalog id,
// tool prefix or name), else in the catalog (by id or name), installing it.
func (s *Service) declareApp(ctx context.Context, agentID, name string) (connector.Connector, bool, error) {
	name = strings.TrimSpace(name)
	list, err := s.apps.List(ctx, agentID)
	if err != nil {
		return connector.Connector{}, false, err
	}
	for _, c := range list {
		if c.CatalogID == name || c.Slug == name || strings.EqualFold(c.Name, name) {
			return c, true, nil
		}
	}
	// A built-in app by id or name, else an MCP Registry server by its
	// registry name (namespace/name), found by search_apps.
	app, ok, err := s.apps.FindApp(ctx, name)
	if err != nil || !ok {
		return connector.Connector{}, false, err
	}
	inst, err := s.apps.Install(ctx, agentID, app.ID)
	if err != nil {
		return connector.Connector{}, false, err
	}
	s.log.Info("app declared by the agent's card", "agent", agentID, "app", app.ID)
	return inst.Connector, true, nil
}

// answeredApp is the app whose setup card p is, if any.
func (s *Service) answeredApp(ctx context.Context, p Pause) (connector.Connector, bool) {
	if s.apps == nil || p.Kind != pause.Connector || p.Status != pause.Answered {
		return connector.Connector{}, false
	}
	req, err := pause.Decode[pause.ConnectorRequest](p.Request)
	if err != nil {
		s.log.Warn("read a connector card", "pause", p.ID, "err", err)
		return connector.Connector{}, false
	}
	list, err := s.apps.List(ctx, p.AgentID)
	if err != nil {
		return connector.Connector{}, false
	}
	for _, c := range list {
		// The card carries the form's connector: the catalog id of an
		// app, the tool prefix of a custom server.
		if c.CatalogID == req.Connector || c.CatalogID == "" && c.Slug == req.Connector {
			return c, true
		}
	}
	return connector.Connector{}, false
}

// testAnsweredApps reconnects the apps whose setup cards the person just
// answered, before the run resumes and lists its tools: the variables the
// card filled are read afresh, and the tools are the run's from now on.
func (s *Service) testAnsweredApps(ctx context.Context, r *Run) {
	if s.apps == nil {
		return
	}
	ps, err := store.Query(ctx, s.db, scanPause, `SELECT `+pauseColumns+` FROM pauses
		WHERE run_id = ? AND kind = 'connector' AND status = 'answered' AND settled = 0`, r.ID)
	if err != nil {
		s.log.Warn("read answered app cards", "run", r.ID, "err", err)
		return
	}
	for _, p := range ps {
		if c, ok := s.answeredApp(ctx, p); ok {
			if _, err := s.apps.Test(ctx, c.ID); err != nil {
				s.log.Info("app not connected after its card", "run", r.ID, "app", c.Name, "err", err)
			}
		}
	}
}

// appAnswer is what the agent reads back, after the card's own answer, when
// the card set up one of its apps.
func (s *Service) appAnswer(ctx context.Context, p Pause) string {
	c, ok := s.answeredApp(ctx, p)
	if !ok {
		return ""
	}
	a, err := s.agents.Get(ctx, p.AgentID)
	if err != nil {
		return ""
	}
	return "\n\n" + s.appReport(ctx, a, c)
}

// appReport says where an app stands for the agent, and which tools it has
// from it.
func (s *Service) appReport(ctx context.Context, a agent.Agent, c connector.Connector) string {
	if !slices.Contains(a.Capabilities, connector.Family) {
		return fmt.Sprintf("%s is installed, but your \"Apps and MCP servers\" capability is off, so its tools are not offered to you: ask the person to switch it on in your settings.", c.Name)
	}
	var names []string
	for _, t := range c.Tools {
		if t.State == connector.ToolApproved || t.State == connector.ToolChanged {
			names = append(names, t.AgentName)
		}
	}
	var b strings.Builder
	switch c.Status {
	case connector.StatusConnected:
		fmt.Fprintf(&b, "%s is connected.", c.Name)
	default:
		fmt.Fprintf(&b, "%s is not usable yet (%s).", c.Name, c.Status)
		if c.Error != "" {
			b.WriteString(" " + c.Error)
		}
		if c.Next != "" {
			b.WriteString(" The person must do this in the app: " + c.Next)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, " Your tools from it, from now on: %s.", strings.Join(names, ", "))
		if !slices.Contains(a.Capabilities, "skills") {
			return b.String()
		}
		// An app's skill is named after its tool prefix (google_maps → google-maps).
		if sk, err := s.apps.LoadSkill(ctx, a.ID, strings.ReplaceAll(c.Slug, "_", "-")); err == nil {
			fmt.Fprintf(&b, " Load the skill %s (load_skill) before using them.", sk.Name)
		}
	}
	return b.String()
}
