package workspace

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

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
	apps, err := connector.New(connector.Deps{DB: db, Workspace: id, Vars: vars, Bus: &h.bus, Logger: log, OnBlocked: blocked},
		connector.Config{AgentsDir: filepath.Join(dir, "agents")})
	if err != nil {
		return nil, err
	}
	apps.SetRegistry(h.registry)
	return apps, nil
}

// mcpRegistry is the registry reader of c.MCPRegistry, its cache in the
// data directory.
func (c Config) mcpRegistry() (*connector.Registry, error) {
	r := connector.NewRegistry(connector.RegistryConfig{URL: "off", CacheFile: filepath.Join(c.DataDir, "mcp-registry.json")})
	if u := c.MCPRegistry; u != "" {
		if err := r.SetURL(u); err != nil {
			return nil, fmt.Errorf("MCP registry: %w", err)
		}
	}
	return r, nil
}

// MCPRegistry is the base URL of the MCP registry the Apps catalog
// searches, "" when it is off.
func (h *Home) MCPRegistry() string { return h.registry.URL() }

// SetMCPRegistry points every workspace's Apps catalog at another MCP
// registry: a base URL (https, or http on this computer), "off" for none,
// or "" for the one this computer was started with (Config.MCPRegistry).
func (h *Home) SetMCPRegistry(raw string) error {
	if raw = strings.TrimSpace(raw); raw == "" {
		raw = h.cfg.MCPRegistry
		if raw == "" {
			raw = "off"
		}
	}
	return h.registry.SetURL(raw)
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
