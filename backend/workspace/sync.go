package workspace

// The wiring of a workspace's relay link and device sync (package
// relaylink).

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/relaylink"
	"github.com/rerun-build/rerun-desktop/backend/replica"
)

// syncDeps are w's services that its link and its sync use.
func (h *Home) syncDeps(w *Workspace, id string) relaylink.Deps {
	return relaylink.Deps{
		Workspace: id, Dir: w.Dir, DataDir: h.cfg.DataDir, DB: w.DB, Box: h.box, Bus: &h.bus,
		Logger: h.log.With("workspace", id),
		Agents: w.Agents, Skills: w.Skills, Memory: w.Memory, Variables: w.Variables, Browsers: w.Browsers,
		Schedules: w.Schedules, Triggers: w.Triggers, Runs: w.Runs,
		Renamed: func(name string) {
			w.mu.Lock()
			w.info.Name = name
			w.mu.Unlock()
		},
		Replica: w.Replica,
	}
}

// openReplica makes w's sync engine, hooked to w's services.
func (h *Home) openReplica(ctx context.Context, w *Workspace, id string) (*replica.Engine, error) {
	return relaylink.OpenReplica(ctx, h.syncDeps(w, id))
}

// openRelay reads w's link; w.Replica is open.
func (h *Home) openRelay(ctx context.Context, w *Workspace, id string) (*relaylink.Service, error) {
	return relaylink.Open(ctx, h.syncDeps(w, id))
}
