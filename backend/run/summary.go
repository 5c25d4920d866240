package run

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Summary is what the workspace's other devices see of a run that ended on
// one of them (run_summaries, filled by a trigger when a run ends, carried
// by device sync): its outcome and the beginnings of its input and output,
// never its steps. A summary is only shown; nothing runs, resumes or
// continues from it.
type Summary struct {
	ID           string     `json:"id"`
	AgentID      string     `json:"agent_id"`
	Source       string     `json:"source"`
	Status       Status     `json:"status"`
	Input        string     `json:"input"`  // its first 500 characters
	Output       string     `json:"output"` // its first 2,000 characters
	Error        string     `json:"error"`  // its first 500 characters
	Model        string     `json:"model"`
	InputTokens  int        `json:"input_tokens"`
	OutputTokens int        `json:"output_tokens"`
	CostUSD      float64    `json:"cost_usd"`
	CostKnown    bool       `json:"cost_known"`
	CreatedAt    time.Time  `json:"created_at"`
	StartedAt    *time.Time `json:"started_at"`
	EndedAt      *time.Time `json:"ended_at"`
	// Device is the device that ran it ("dev_…"); DeviceName the name it
	// gave itself (its host name), "" when none arrived.
	Device     string `json:"device"`
	DeviceName string `json:"device_name,omitempty"`
}

// Elsewhere lists the summaries of the agent's runs made on other devices
// than device (this one), newest first, at most limit (default 50, at most
// 500).
func (s *Service) Elsewhere(ctx context.Context, agentID, device string, limit int) ([]Summary, error) {
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	list, err := store.Query(ctx, s.db, scanSummary, `SELECT id, agent_id, source, status, input, output, error, model,
		input_tokens, output_tokens, cost_usd, cost_known, created_at, started_at, ended_at, device
		FROM run_summaries WHERE agent_id = ? AND device != ? ORDER BY created_at DESC, id DESC LIMIT ?`, agentID, device, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of other devices: %w", err)
	}
	if list == nil {
		list = []Summary{}
	}
	return list, nil
}

func scanSummary(sc store.Scanner) (Summary, error) {
	var m Summary
	var created string
	var started, ended sql.NullString
	if err := sc.Scan(&m.ID, &m.AgentID, &m.Source, &m.Status, &m.Input, &m.Output, &m.Error, &m.Model,
		&m.InputTokens, &m.OutputTokens, &m.CostUSD, &m.CostKnown, &created, &started, &ended, &m.Device); err != nil {
		return Summary{}, err
	}
	m.CreatedAt = store.ParseTime(created)
	for _, p := range []struct {
		src sql.NullString
		dst **time.Time
	}{{started, &m.StartedAt}, {ended, &m.EndedAt}} {
		if p.src.Valid {
			t := store.ParseTime(p.src.String)
			*p.dst = &t
		}
	}
	return m, nil
}
