package workspace

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/rerunagent"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// Builtins are the built-in agents every workspace gets when it opens.
var Builtins = []agent.Builtin{rerunagent.Agent, foreman.Agent}

// ensureBuiltins writes the system box and every built-in agent the
// workspace lacks; existing ones stay as the person changed them.
func (h *Home) ensureBuiltins(ctx context.Context, w *Workspace) error {
	if err := w.Boxes.EnsureSystem(ctx); err != nil {
		return err
	}
	for _, b := range Builtins {
		if _, err := w.Agents.EnsureBuiltin(ctx, b, h.log.With("workspace", w.info.ID)); err != nil {
			return err
		}
	}
	return nil
}

// rerunTools is the Rerun agent's tool source of w, with the API's tool set
// in process when the composer gave one (Config.APITools).
func (h *Home) rerunTools(w *Workspace) rerunagent.Source {
	d := rerunagent.Deps{Agents: w.Agents, Boxes: w.Boxes}
	if h.cfg.APITools != nil {
		d.API = h.cfg.APITools(w)
	}
	return rerunagent.NewSource(d)
}

// foremanTools hands the run service the Foreman's tools: the Foreman is
// made after that service, since it needs the runs and the templates made
// with it. Runs ask for tools only once served, when w.Foreman is set.
type foremanTools struct{ w *Workspace }

func (s foremanTools) Tools(ctx context.Context, a agent.Agent) ([]tool.Tool, error) {
	return s.w.Foreman.Tools(ctx, a)
}

func (s foremanTools) Guide(a agent.Agent) string { return s.w.Foreman.Guide(a) }

// openForeman makes w's Foreman; w's runs and templates are open.
func (h *Home) openForeman(w *Workspace, id string) *foreman.Foreman {
	return foreman.New(foreman.Deps{
		Workspace: id, DB: w.DB, Bus: &h.bus, Logger: h.log.With("workspace", id),
		Runs: w.Runs, Models: w.Models, Brain: w.Brain, Agents: w.Agents, Boxes: w.Boxes,
		Templates: w.Templates, Variables: w.Variables,
		FirecrawlAPIKey: h.cfg.FirecrawlAPIKey, FirecrawlBaseURL: h.cfg.FirecrawlBaseURL,
	})
}

// autoOnboard starts onboarding in a workspace just created on this
// device, when the app asks for it (Config.Onboarding). A failure only
// costs the workspace its Foreman's greeting.
func (h *Home) autoOnboard(ctx context.Context, w *Workspace) {
	if !h.cfg.Onboarding {
		return
	}
	if _, err := w.Foreman.StartOnboarding(ctx); err != nil {
		h.log.Warn("start onboarding", "workspace", w.Info().ID, "err", err)
	}
}
