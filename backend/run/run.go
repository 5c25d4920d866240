package run

import (
	"context"
	"database/sql"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Status is where a run is in its life.
type Status string

const (
	Queued    Status = "queued"
	Running   Status = "running"
	Paused    Status = "paused" // waiting for a person (human-in-the-loop)
	Done      Status = "done"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
)

// Sources: what started a run.
const (
	SourceChat     = "chat"
	SourceAgent    = "agent"
	SourceAPI      = "api"
	SourceSchedule = "schedule"
	SourceTrigger  = "trigger"
	// SourceTemplate is a system run that only carries a card raised
	// without a model turn (Ask), e.g. while a template is installed.
	SourceTemplate = "template"
)

// Run is one execution of an agent.
type Run struct {
	ID               string     `json:"id"`
	AgentID          string     `json:"agent_id"`
	SessionID        string     `json:"session_id"`
	Source           string     `json:"source"`
	ParentRunID      string     `json:"parent_run_id"`
	Depth            int        `json:"depth"`
	Status           Status     `json:"status"`
	Input            string     `json:"input"`
	Output           string     `json:"output"`
	Error            string     `json:"error"`
	Provider         string     `json:"provider"`
	Model            string     `json:"model"`
	Steps            int        `json:"steps"`
	InputTokens      int        `json:"input_tokens"`
	OutputTokens     int        `json:"output_tokens"`
	CacheReadTokens  int        `json:"cache_read_tokens"`
	CacheWriteTokens int        `json:"cache_write_tokens"`
	CostUSD          float64    `json:"cost_usd"`
	CostKnown        bool       `json:"cost_known"`
	CreatedAt        time.Time  `json:"created_at"`
	StartedAt        *time.Time `json:"started_at"`
	EndedAt          *time.Time `json:"ended_at"`
}

// Finished reports whether the run has ended for good.
func (r Run) Finished() bool { return r.Status == Done || r.Status == Failed || r.Status == Cancelled }

const runColumns = `id, agent_id, session_id, source, parent_run_id, depth, status, input, output, error, provider, model,
	steps, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_usd, cost_known, created_at, started_at, ended_at`

func scanRun(row store.Scanner) (Run, error) {
	var r Run
	var created string
	var started, ended sql.NullString
	err := row.Scan(&r.ID, &r.AgentID, &r.SessionID, &r.Source, &r.ParentRunID, &r.Depth, &r.Status, &r.Input, &r.Output, &r.Error,
		&r.Provider, &r.Model, &r.Steps, &r.InputTokens, &r.OutputTokens, &r.CacheReadTokens, &r.CacheWriteTokens,
		&r.CostUSD, &r.CostKnown, &created, &started, &ended)
	r.CreatedAt = store.ParseTime(created)
	if started.Valid {
		t := store.ParseTime(started.String)
		r.StartedAt = &t
	}
	if ended.Valid {
		t := store.ParseTime(ended.String)
		r.EndedAt = &t
	}
	return r, err
}

// rootOf returns the run at the top of r's call_agent chain.
func (s *Service) rootOf(ctx context.Context, r Run) Run {
	for r.ParentRunID != "" {
		up, err := s.Get(ctx, r.ParentRunID)
		if err != nil {
			break
		}
		r = up
	}
	return r
}

// automated reports whether a run was started without a person asking for
// it: by a schedule, a trigger or the API (an agent's call counts as what
// started its caller). A card raised by Ask answers something the person
// just did in the app (installing a template).
func (s *Service) automated(ctx context.Context, r Run) bool {
	src := s.rootOf(ctx, r).Source
	return src != SourceChat && src != SourceTemplate
}
