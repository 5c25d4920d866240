package workspace

// Finding, naming and switching the open workspaces, and the state file
// that remembers which one was used last.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/apikey"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
)

type state struct {
	Current string `json:"current"`
}

func (h *Home) readState() string {
	b, err := os.ReadFile(h.statePath())
	if err != nil {
		return ""
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		h.log.Warn("ignoring unreadable state file", "path", h.statePath(), "err", err)
	}
	return s.Current
}

func (h *Home) writeState(s state) error {
	b, _ := json.Marshal(s)
	tmp := h.statePath() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, h.statePath())
}

// Authenticate finds the workspace an API key belongs to. A key reaches
// exactly one workspace.
func (h *Home) Authenticate(ctx context.Context, key string) (*Workspace, apikey.Key, bool) {
	for _, w := range h.workspaces() {
		if k, ok := w.Keys.Authenticate(ctx, key); ok {
			return w, k, true
		}
	}
	return nil, apikey.Key{}, false
}

// TriggerOwner finds the workspace whose trigger a webhook token opens
// (found false for a token no live trigger has). Like an API key, a token
// reaches exactly one workspace.
func (h *Home) TriggerOwner(ctx context.Context, token string) (*Workspace, bool, error) {
	for _, w := range h.workspaces() {
		ok, err := w.Triggers.Owns(ctx, token)
		if err != nil {
			return nil, false, err
		}
		if ok {
			return w, true, nil
		}
	}
	return nil, false, nil
}

// ByName finds an open workspace by id or (case-insensitive) name.
func (h *Home) ByName(name string) (*Workspace, error) {
	if w, err := h.Workspace(name); err == nil {
		return w, nil
	}
	var found []*Workspace
	for _, info := range h.infos() {
		if strings.EqualFold(info.Name, strings.TrimSpace(name)) {
			w, _ := h.Workspace(info.ID)
			found = append(found, w)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fault.NotFound("no workspace named %q", name)
	default:
		return nil, fault.Conflict("%d workspaces are named %q; use the workspace id", len(found), name)
	}
}

// Workspace returns an open workspace by id.
func (h *Home) Workspace(id string) (*Workspace, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	w, ok := h.open[id]
	if !ok {
		return nil, fault.NotFound("no workspace with id %q", id)
	}
	return w, nil
}

func (h *Home) infos() []Info {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Info, 0, len(h.open))
	for _, w := range h.open {
		out = append(out, w.Info())
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// List returns the workspaces, oldest first.
func (h *Home) List() []Info { return h.infos() }

// Rename changes a workspace's name.
func (h *Home) Rename(ctx context.Context, id, name string) (Info, error) {
	name, err := cleanName(name)
	if err != nil {
		return Info{}, err
	}
	w, err := h.Workspace(id)
	if err != nil {
		return Info{}, err
	}
	if _, err := w.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES ('name', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, name); err != nil {
		return Info{}, fmt.Errorf("rename workspace %s: %w", id, err)
	}
	w.mu.Lock()
	w.info.Name = name
	w.mu.Unlock()
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.updated", ID: id})
	return w.Info(), nil
}

// Current is the id of the workspace shown at launch: the one switched to last.
func (h *Home) Current() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.current
}

// Switch makes id the current workspace and remembers it for the next launch.
func (h *Home) Switch(id string) error {
	if _, err := h.Workspace(id); err != nil {
		return err
	}
	h.mu.Lock()
	h.current = id
	h.mu.Unlock()
	if err := h.writeState(state{Current: id}); err != nil {
		return fmt.Errorf("remember current workspace: %w", err)
	}
	h.bus.Publish(event.Change{Workspace: id, Kind: "workspace.switched", ID: id})
	return nil
}
