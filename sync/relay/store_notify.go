package relay

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"
)

// The PostgreSQL channels on which a relay process tells the others that a
// workspace has a delivery due (payload: the workspace id), and that a
// device pushed changes (payload: see changesPayload).
const (
	notifyChannel  = "rerun_relay_due"
	changesChannel = "rerun_relay_changes"
)

func (s *sqlStore) Listen(ctx context.Context, fn func(Notice)) error {
	if s.notify == "" {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		for _, ch := range []string{notifyChannel, changesChannel} {
			if _, err := pc.Exec(ctx, "LISTEN "+ch); err != nil {
				return err
			}
		}
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				return err
			}
			if n.Channel == changesChannel {
				if nt, ok := parseChangesPayload(n.Payload); ok {
					fn(nt)
				}
				continue
			}
			fn(Notice{WorkspaceID: n.Payload})
		}
	})
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("listen: %w", err)
}
