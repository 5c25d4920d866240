package template

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/budget"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/trigger"
)

// InstallOptions are the optional parts of Install.
type InstallOptions struct {
	BoxID string `json:"box_id"` // the box the agent sits on; default the first
	Name  string `json:"name"`   // the agent's name; default the template's
	// Budget is the agent's spend limits as the installer accepts them:
	// the template's suggestion as shown, changed, or all 0 for none. Nil
	// takes the suggestion as it is.
	Budget *budget.Limits `json:"budget"`
}

// Installed is the agent an install made and what it asks of the person.
type Installed struct {
	Agent agent.Agent `json:"agent"`
	// Cards say, one line each, what waits for the person: the apps to
	// sign in to and the variables to fill (each a card in the app), and
	// the automations installed paused.
	Cards []string `json:"cards"`
}

// Install makes a new agent from a template: its handle is derived from
// the name and made unique, it gets the template's soul, model, capabilities,
// approval policy, skills and files; its scheduled tasks and webhook
// triggers are created paused (a notification says so); each declared app
// is installed and, when it needs a sign-in, a connector card asks the
// person to finish it; each declared variable that is not set and not
// asked by an app's card gets a credential card. If any of it fails, the
// agent is removed again with everything made for it.
func (s *Service) Install(ctx context.Context, id string, o InstallOptions) (Installed, error) {
	c, _, err := s.read(ctx, id)
	if err != nil {
		return Installed{}, err
	}
	if err := c.check(s.catalog()); err != nil {
		return Installed{}, err
	}
	if o.Budget != nil {
		if err := o.Budget.Check(); err != nil {
			return Installed{}, err
		}
	}
	if o.BoxID == "" {
		boxes, err := s.d.Boxes.List(ctx)
		if err != nil {
			return Installed{}, err
		}
		if len(boxes) == 0 {
			return Installed{}, fault.Invalid("the workspace has no box to put the agent on; create one first")
		}
		o.BoxID = boxes[0].ID
	}
	name := strings.TrimSpace(o.Name)
	if name == "" {
		name = c.Name
	}
	caps := c.Capabilities
	if caps == nil {
		caps = []string{}
	}
	a, err := s.d.Agents.Create(ctx, agent.NewAgent{Name: name, BoxID: o.BoxID, Soul: c.Soul, Provider: c.Model.Provider,
		Model: c.Model.Model, Capabilities: caps, AskFirst: c.AskFirst})
	if err != nil {
		return Installed{}, err
	}
	limits := c.Budget
	if o.Budget != nil {
		limits = o.Budget
	}
	if limits != nil && limits.Any() && s.d.Budgets != nil {
		if _, err := s.d.Budgets.SetAgent(ctx, a.ID, budget.Update{RunTokens: &limits.RunTokens, RunUSD: &limits.RunUSD,
			DayTokens: &limits.DayTokens, DayUSD: &limits.DayUSD}); err != nil {
			s.undo(context.WithoutCancel(ctx), a.ID)
			return Installed{}, err
		}
	}
	cards, err := s.fill(ctx, a, c)
	if err != nil {
		s.undo(context.WithoutCancel(ctx), a.ID)
		return Installed{}, fmt.Errorf("install template %q: %w", c.Name, err)
	}
	s.log.Info("template installed", "template", id, "agent", a.ID, "cards", len(cards))
	if a, err = s.d.Agents.Get(ctx, a.ID); err != nil {
		return Installed{}, err
	}
	return Installed{Agent: a, Cards: cards}, nil
}

// undo removes an agent an install could not finish. Its rows (schedules,
// triggers, apps, the cards' runs and notifications) go with it.
func (s *Service) undo(ctx context.Context, agentID string) {
	if s.d.Connectors != nil {
		if apps, err := s.d.Connectors.List(ctx, agentID); err == nil {
			for _, c := range apps {
				s.d.Connectors.Uninstall(ctx, c.ID)
			}
		}
	}
	if err := s.d.Agents.Delete(ctx, agentID); err != nil {
		s.log.Error("remove a half-installed agent", "agent", agentID, "err", err)
	}
}

// fill gives a new agent the template's parts and raises its cards.
func (s *Service) fill(ctx context.Context, a agent.Agent, c *Package) ([]string, error) {
	for _, name := range sortedNames(c.Skills) {
		folder := c.Skills[name]
		files := map[string][]byte{}
		for rel, data := range folder {
			if rel != skill.FileName {
				files[rel] = data
			}
		}
		if _, err := s.d.Skills.Upsert(ctx, a.ID, name, string(folder[skill.FileName]), files); err != nil {
			return nil, fmt.Errorf("skill %s: %w", name, err)
		}
	}
	if err := writeFiles(filepath.Join(s.d.Agents.Dir(a.ID), "files"), c.Files); err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	off := false
	for _, sch := range c.Schedules {
		_, err := s.d.Schedules.Create(ctx, schedule.NewSchedule{AgentID: a.ID, Name: sch.Name, Instruction: sch.Instruction,
			Spec: schedule.Spec{Kind: sch.Kind, Cron: sch.Cron, Timezone: sch.Timezone, At: sch.At}, Enabled: &off, CatchUp: sch.CatchUp})
		if err != nil {
			return nil, fmt.Errorf("scheduled task %q: %w", sch.Name, err)
		}
	}
	for _, t := range c.Triggers {
		// The token is new and shown to no one: the person makes the URL
		// they give out by rotating it.
		if _, _, err := s.d.Triggers.Create(ctx, trigger.NewTrigger{AgentID: a.ID, Name: t.Name, Instruction: t.Instruction,
			Methods: t.Methods, Enabled: &off}); err != nil {
			return nil, fmt.Errorf("webhook trigger %q: %w", t.Name, err)
		}
	}

	cards := []string{}
	asked := map[string]bool{} // variables an app's card asks for
	for _, decl := range c.Connectors {
		inst, err := s.d.Connectors.Install(ctx, a.ID, decl.CatalogID)
		if err != nil {
			return nil, fmt.Errorf("app %s: %w", decl.Name, err)
		}
		app := inst.Connector
		if len(app.Missing) == 0 {
			continue
		}
		form, err := s.d.Connectors.Form(ctx, app.ID)
		if err != nil {
			return nil, fmt.Errorf("app %s: %w", decl.Name, err)
		}
		for _, f := range form.Fields {
			if f.Type == pause.FieldSecret {
				asked[form.SecretVariable(f.Name)] = true
			}
		}
		if len(form.Fields) == 0 {
			form.Description = strings.TrimSpace(form.Description + "\n\n" + app.Next + " Then answer this card.")
		}
		if err := s.d.Cards.Ask(ctx, a.ID, pause.Connector, form); err != nil {
			return nil, fmt.Errorf("app %s: %w", decl.Name, err)
		}
		cards = append(cards, "Connect "+app.Name+": finish its sign-in")
	}
	for _, v := range c.Variables {
		if asked[v.Name] || s.d.Variables != nil && s.d.Variables.Has(v.Name) {
			continue
		}
		desc := strings.TrimSpace(v.Help + " @" + a.Handle + " needs it: it was installed from the template “" + c.Name + "”.")
		if err := s.d.Cards.Ask(ctx, a.ID, pause.Credential, pause.CredentialRequest{Variable: v.Name, Label: v.Name,
			Description: desc, URL: v.URL}); err != nil {
			return nil, fmt.Errorf("variable %s: %w", v.Name, err)
		}
		cards = append(cards, "Enter "+v.Name)
	}

	if n := len(c.Schedules); n > 0 {
		cards = append(cards, fmt.Sprintf("%d scheduled task%s paused until you turn %s on", n, plural(n), map[bool]string{true: "it", false: "them"}[n == 1]))
	}
	if n := len(c.Triggers); n > 0 {
		cards = append(cards, fmt.Sprintf("%d webhook trigger%s paused: make %s URL with Rotate, then turn %s on", n, plural(n),
			map[bool]string{true: "its", false: "their"}[n == 1], map[bool]string{true: "it", false: "them"}[n == 1]))
	}
	if len(c.Schedules)+len(c.Triggers) > 0 && s.d.Notify != nil {
		var names []string
		for _, sch := range c.Schedules {
			names = append(names, "“"+sch.Name+"”")
		}
		for _, t := range c.Triggers {
			names = append(names, "webhook “"+t.Name+"”")
		}
		if _, err := s.d.Notify.Notify(ctx, notify.Input{AgentID: a.ID, Kind: notify.Info,
			Title: "Automations installed paused",
			Body: "Installed from the template “" + c.Name + "”: " + strings.Join(names, ", ") + ". " +
				"They do nothing until you turn them on in the Automations tab; a webhook needs a URL first (Rotate makes one)."}); err != nil {
			return nil, fmt.Errorf("tell about paused automations: %w", err)
		}
	}
	return cards, nil
}

// writeFiles writes files into dir (the agent's own folder), jailed to it.
func writeFiles(dir string, files map[string][]byte) error {
	if len(files) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range sortedNames(files) {
		if d := path.Dir(rel); d != "." {
			if err := root.MkdirAll(d, 0o700); err != nil {
				return err
			}
		}
		if err := root.WriteFile(rel, files[rel], 0o600); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}
