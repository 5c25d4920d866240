package workspace

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// runNotifier hands the runtime's notices to the workspace's notifications.
type runNotifier struct{ *notify.Service }

func (n runNotifier) Notify(ctx context.Context, x run.Notice) error {
	_, err := n.Service.Notify(ctx, notify.Input{
		AgentID: x.AgentID, RunID: x.RunID, PauseID: x.PauseID,
		Kind: x.Kind, Title: x.Title, Body: x.Body, Automated: x.Automated,
	})
	return err
}
