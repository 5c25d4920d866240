package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// KindBrowser is the change published when an agent's browser state
// changes (started, stopped, page, take-over, last action); ID and Agent
// are the agent.
const KindBrowser = "browser.updated"

// openBrowsers makes the workspace's agents' browsers: headless (the person
// watches through the Desktop tab), never loading the app's own local
// server.
func (h *Home) openBrowsers(id, dir string) (*browser.Manager, error) {
	var forbidden []string
	if h.cfg.LocalAddr != "" {
		forbidden = append(forbidden, h.cfg.LocalAddr)
	}
	return browser.New(browser.Config{
		AgentsDir: filepath.Join(dir, "agents"),
		Bin:       h.cfg.Chrome,
		Headless:  true,
		Forbidden: forbidden,
		Logger:    h.log.With("workspace", id),
		OnChange: func(agentID string) {
			h.bus.Publish(event.Change{Workspace: id, Kind: KindBrowser, ID: agentID, Agent: agentID})
		},
	})
}

// browserTools is each agent's browser as the runtime sees it: the tools and
// guide of an agent with the browser capability (a run.SourceGuide), and the
// hand-back that closes a takeover card (run.Browsers).
type browserTools struct{ m *browser.Manager }

func (s browserTools) Tools(_ context.Context, a agent.Agent) ([]tool.Tool, error) {
	if !slices.Contains(a.Capabilities, browser.Family) {
		return nil, nil
	}
	tools := s.m.Tools()
	for i, t := range tools {
		if t.Name == "browser_screenshot" {
			tools[i].Run = s.attachImage(t.Run)
		}
	}
	return append(tools, s.m.TakeoverTool(a.ID)), nil
}

// attachImage hands the PNG a screenshot result names to the runtime, which
// keeps it and shows it to the model.
func (s browserTools) attachImage(run func(context.Context, *tool.Env, json.RawMessage) (string, error)) func(context.Context, *tool.Env, json.RawMessage) (string, error) {
	return func(ctx context.Context, env *tool.Env, input json.RawMessage) (string, error) {
		out, err := run(ctx, env, input)
		if err == nil && env.Attach != nil {
			if png, ok := s.m.TakeImage(out); ok {
				env.Attach("image/png", png)
			}
		}
		return out, err
	}
}

func (s browserTools) Guide(a agent.Agent) string {
	if !slices.Contains(a.Capabilities, browser.Family) {
		return ""
	}
	return browser.Guide
}

func (s browserTools) HandBack(agentID string) (url, title string, running bool) {
	b, ok := s.m.Lookup(agentID)
	if !ok {
		return "", "", false
	}
	b.HandBack()
	st := b.State()
	return st.URL, st.Title, st.Running
}

// HandBackBrowser gives the agent's browser back to it and answers its open
// takeover cards, so the runs that waited for the person's hands go on. Only
// the app calls it: a takeover card is never answered through the API.
func (w *Workspace) HandBackBrowser(ctx context.Context, agentID string) error {
	if _, err := w.Agents.Get(ctx, agentID); err != nil {
		return err
	}
	if b, ok := w.Browsers.Lookup(agentID); ok {
		b.HandBack()
	}
	open, err := w.Runs.Pauses(ctx, run.PauseFilter{AgentID: agentID, Status: pause.Open})
	if err != nil {
		return err
	}
	for _, p := range open {
		if p.Kind != pause.Takeover {
			continue
		}
		_, err := w.Runs.Answer(ctx, p.ID, json.RawMessage(`{"handed_back":true}`))
		if err != nil && !errors.Is(err, fault.ErrConflict) { // answered meanwhile: fine
			return fmt.Errorf("answer the takeover card of agent %s: %w", agentID, err)
		}
	}
	return nil
}
