package workspace

import (
	"context"
	"path/filepath"

	"github.com/rerun-build/rerun-desktop/backend/connector"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// openApps wires the apps (connectors and MCP servers) of the workspace id
// in dir: credentials come from its variables, a stdio server of an agent
// starts in that agent's files folder.
//
// An app whose server changes a pinned tool definition is blocked; the person
// is told, to review and re-approve it in the Apps tab.
func (h *Home) openApps(id, dir string, db *store.DB, vars *secret.Variables, notes *notify.Service) (*connector.Service, error) {
	log := h.log.With("workspace", id)
	blocked := func(ctx context.Context, c connector.Connector) {
		_, err := notes.Notify(ctx, notify.Input{AgentID: c.AgentID, Kind: notify.Error, Automated: true,
			Title: c.Name + " changed its tools: review them",
			Body:  "A tool definition of " + c.Name + " is not the one you approved, so its tools are blocked. Review the change in the agent's Apps tab and approve it, or uninstall the app."})
		if err != nil {
			log.Warn("notify of a blocked app", "connector", c.ID, "err", err)
		}
	}
	return connector.New(connector.Deps{DB: db, Workspace: id, Vars: vars, Bus: &h.bus, Logger: log, OnBlocked: blocked},
		connector.Config{AgentsDir: filepath.Join(dir, "agents")})
}

// AuthOwner finds the workspace that started the app sign-in a browser
// redirect's state belongs to (found false for a state no workspace waits
// for). The loopback callback is one for every workspace; the state is its
// only credential.
func (h *Home) AuthOwner(state string) (*Workspace, bool) {
	for _, w := range h.workspaces() {
		if w.Connectors.OwnsAuth(state) {
			return w, true
		}
	}
	return nil, false
}

// uninstallApps removes the agent's apps, ending their servers now rather
// than at the next idle sweep.
func (w *Workspace) uninstallApps(ctx context.Context, agentID string) error {
	list, err := w.Connectors.List(ctx, agentID)
	if err != nil {
		return err
	}
	for _, c := range list {
		if err := w.Connectors.Uninstall(ctx, c.ID); err != nil {
			return err
		}
	}
	return nil
}
