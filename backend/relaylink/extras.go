package relaylink

// What device sync carries besides the workspace's definitions, and how
// each arrives: memories as text (re-embedded here), summaries of runs that
// ended on another device (shown, never run), and variables' values only
// when the person opted in (variables.go).

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/replica"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// reembedBudget bounds the embedding of memories that arrived, which runs
// in the sync round: a slow embedder must not stall sync for long. When it
// runs out (or the embedder fails), arrivals are only marked for embedding
// for reembedPause, so a page of hundreds of memories costs one budget, not
// one each; the marked ones are embedded by the next arrival after the
// pause, or at the next start (the workspace's memory upkeep).
const (
	reembedBudget = 30 * time.Second
	reembedPause  = 5 * time.Minute
)

// syncExtras hooks memories, run summaries and variables to e.
func syncExtras(ctx context.Context, d Deps, e *replica.Engine) {
	log := d.Logger
	// Summaries name the device that ran the run (see 0012_run_summaries.sql).
	if _, err := d.DB.ExecContext(ctx, `INSERT INTO sync_state (key, value) VALUES ('device', ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, e.DeviceID()); err != nil {
		log.Warn("record this device for run summaries", "err", err)
	}
	var pausedUntil atomic.Int64 // Unix ms: embed no arrival before then
	e.OnApply("memories", func(ctx context.Context, a replica.Applied) {
		agentID, id := a.Value("agent_id"), a.Value("id")
		if agentID == "" || id == "" {
			return
		}
		changed := a.Old == nil || a.Row == nil || fmt.Sprint(a.Old["text"]) != fmt.Sprint(a.Row["text"])
		embed := time.Now().UnixMilli() >= pausedUntil.Load()
		ctx, cancel := context.WithTimeout(ctx, reembedBudget)
		defer cancel()
		if err := d.Memory.Arrived(ctx, agentID, id, changed, embed); err != nil {
			// Keyword recall works meanwhile; Reembed catches up later.
			pausedUntil.Store(time.Now().Add(reembedPause).UnixMilli())
			log.Warn("sync: embed an arrived memory; arrivals are only marked for embedding for a while", "memory", id, "err", err, "pause", reembedPause)
		}
	})
	syncVariables(d, e, log)
}

// RunsElsewhere lists the summaries of the agent's runs that ended on the
// workspace's other devices, newest first (see run.Summary).
func (r *Service) RunsElsewhere(ctx context.Context, agentID string, limit int) ([]run.Summary, error) {
	if _, err := r.agents.Get(ctx, agentID); err != nil {
		return nil, err
	}
	list, err := r.runs.Elsewhere(ctx, agentID, r.replica.DeviceID(), limit)
	if err != nil {
		return nil, err
	}
	// Each device names itself in the synced settings (Service.devices).
	names := map[string]string{}
	for i := range list {
		d := list[i].Device
		if _, ok := names[d]; !ok {
			var name string
			_ = r.db.QueryRowContext(ctx, `SELECT value FROM sync_settings WHERE key = ?`, deviceNameKey+d).Scan(&name)
			names[d] = name
		}
		list[i].DeviceName = names[d]
	}
	return list, nil
}
