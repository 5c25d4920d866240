package run

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// callProcesses records the processes one tool call starts (its shell
// command's process group) in call_processes while they run, so that the
// start after a crash can end what the crash left running.
type callProcesses struct {
	s      *Service
	runID  string
	callID string
}

func (c callProcesses) Started(p tool.Process) error {
	_, err := c.s.db.ExecContext(context.Background(), `INSERT OR REPLACE INTO call_processes (run_id, call_id, pid, start, started_at)
		VALUES (?, ?, ?, ?, ?)`, c.runID, c.callID, p.PID, p.Start, store.FormatTime(c.s.now()))
	return err
}

func (c callProcesses) Ended(p tool.Process) {
	if _, err := c.s.db.ExecContext(context.Background(), `DELETE FROM call_processes WHERE run_id = ? AND call_id = ? AND pid = ?`,
		c.runID, c.callID, p.PID); err != nil {
		c.s.log.Warn("forget a call's process", "run", c.runID, "call", c.callID, "err", err)
	}
}

// endInterrupted ends the process groups of the calls an earlier app was
// running when it stopped: with one Serve per workspace, every row left at
// start-up is one. A group is killed only while it is the one the call
// started (tool.EndProcessGroup checks); each row goes once handled.
func (s *Service) endInterrupted(ctx context.Context) error {
	type row struct {
		runID, callID string
		p             tool.Process
	}
	rows, err := store.Query(ctx, s.db, func(sc store.Scanner) (row, error) {
		var r row
		err := sc.Scan(&r.runID, &r.callID, &r.p.PID, &r.p.Start)
		return r, err
	}, `SELECT run_id, call_id, pid, start FROM call_processes`)
	if err != nil {
		return err
	}
	for _, r := range rows {
		n, err := tool.EndProcessGroup(r.p)
		if err != nil {
			s.log.Warn("end the processes of an interrupted call", "run", r.runID, "call", r.callID, "pid", r.p.PID, "err", err)
		} else if n > 0 {
			s.log.Info("ended the processes of an interrupted call", "run", r.runID, "call", r.callID, "pid", r.p.PID, "processes", n)
		}
		if _, err := s.db.ExecContext(ctx, `DELETE FROM call_processes WHERE run_id = ? AND call_id = ? AND pid = ?`, r.runID, r.callID, r.p.PID); err != nil {
			return err
		}
	}
	return nil
}
