package run

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Step kinds.
const (
	StepInput      = "input"
	StepModel      = "model"
	StepToolCall   = "tool_call"
	StepToolResult = "tool_result"
	StepError      = "error"
	StepCancel     = "cancel"
	StepCompact    = "compact"
	StepNote       = "note"
	StepPause      = "pause"  // the run waits for a person (PauseData)
	StepResume     = "resume" // the person's answer was handed back (ResumeData)
)

// Step is one committed action of a run.
type Step struct {
	RunID        string          `json:"run_id"`
	Seq          int             `json:"seq"`
	Kind         string          `json:"kind"`
	Data         json.RawMessage `json:"data"`
	InputTokens  int             `json:"input_tokens"`
	OutputTokens int             `json:"output_tokens"`
	CostUSD      float64         `json:"cost_usd"`
	StartedAt    time.Time       `json:"started_at"`
	EndedAt      time.Time       `json:"ended_at"`
}

// InputData is the message that started a run.
type InputData struct {
	Text string `json:"text"`
	From string `json:"from"`
}

// ToolCall is one tool the model asked for.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Via is the approval card whose approved item this call carries out;
	// such calls are the runtime's, not the model's, and stay out of the
	// conversation (the card's own result reports them).
	Via string `json:"via,omitempty"`
	// Approved marks the step recorded right before an approved held call
	// starts: the call's first step was recorded when it was held. After a
	// crash a call with this step and no result was started, so it is
	// reported as interrupted and never run again.
	Approved bool `json:"approved,omitempty"`
}

// ModelData is one model turn.
type ModelData struct {
	Text       string     `json:"text"`
	ToolCalls  []ToolCall `json:"tool_calls"`
	StopReason string     `json:"stop_reason"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	Usage      llm.Usage  `json:"usage"`
	CostKnown  bool       `json:"cost_known"`
}

// ToolResultData is what a tool returned.
type ToolResultData struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Output     string `json:"output"`
	IsError    bool   `json:"is_error"`
	ChildRunID string `json:"child_run_id,omitempty"`
	// Decision is "approved" or "declined" for an action held for approval.
	Decision string `json:"decision,omitempty"`
	Via      string `json:"via,omitempty"`
	// Images the tool returned (a screenshot), kept as files in the
	// agent's folder; the model sees them during the run that took them.
	Images []ImageRef `json:"images,omitempty"`
}

// ImageRef is an image a tool returned, stored beside the agent.
type ImageRef struct {
	MediaType string `json:"media_type"`
	Path      string `json:"path"` // relative to the agent's folder
	Size      int    `json:"size"`
}

// ErrorData, CancelData, CompactData and NoteData are the other step kinds.
type (
	ErrorData struct {
		Message string `json:"message"`
	}
	CancelData struct {
		Reason string `json:"reason"`
	}
	CompactData struct {
		Summary string `json:"summary"`
		// Through is the last run the summary covers; history resumes after it.
		Through string `json:"through"`
	}
	NoteData struct {
		Text string `json:"text"`
	}
)

func scanStep(row store.Scanner) (Step, error) {
	var st Step
	var data, started, ended string
	err := row.Scan(&st.RunID, &st.Seq, &st.Kind, &data, &st.InputTokens, &st.OutputTokens, &st.CostUSD, &started, &ended)
	st.Data = json.RawMessage(data)
	st.StartedAt, st.EndedAt = store.ParseTime(started), store.ParseTime(ended)
	return st, err
}

const stepColumns = `run_id, seq, kind, data, input_tokens, output_tokens, cost_usd, started_at, ended_at`

// Steps returns a run's steps in order. A run still queued has its input
// step made from its row (inputStep writes it when the run leaves the queue).
func (s *Service) Steps(ctx context.Context, runID string) ([]Step, error) {
	steps, err := store.Query(ctx, s.db, scanStep, `SELECT `+stepColumns+` FROM steps WHERE run_id = ?1
		UNION ALL SELECT id, 1, 'input', `+inputStepData+`, 0, 0, 0, created_at, created_at
		FROM runs WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM steps WHERE run_id = ?1)
		ORDER BY 2`, runID)
	if err != nil {
		return nil, fmt.Errorf("read steps of %s: %w", runID, err)
	}
	return steps, nil
}

// stepData decodes the data of st into its kind's type.
func stepData[T any](st Step) (T, error) {
	var v T
	if err := json.Unmarshal(st.Data, &v); err != nil {
		return v, fmt.Errorf("decode %s step %d: %w", st.Kind, st.Seq, err)
	}
	return v, nil
}

// unanswered returns the tool calls among steps that have no result yet,
// each once (an approved held call has two call steps; the first is kept).
func unanswered(steps []Step) []ToolCall {
	answered, seen := map[string]bool{}, map[string]bool{}
	var calls []ToolCall
	for _, st := range steps {
		switch st.Kind {
		case StepToolResult:
			d, err := stepData[ToolResultData](st)
			if err != nil {
				continue // not a result this run can match to a call
			}
			answered[d.ID] = true
		case StepToolCall:
			c, err := stepData[ToolCall](st)
			if err != nil {
				continue // a call that cannot be named cannot be answered either
			}
			if !seen[c.ID] {
				seen[c.ID] = true
				calls = append(calls, c)
			}
		}
	}
	var out []ToolCall
	for _, c := range calls {
		if !answered[c.ID] {
			out = append(out, c)
		}
	}
	return out
}

// callSteps is what steps say of each tool call: whether it started (an
// approved held call's start, or a runtime call's only call step) and its
// result when it has one.
type callState struct {
	started bool
	result  *ToolResultData
}

func callStates(steps []Step) map[string]*callState {
	out := map[string]*callState{}
	get := func(id string) *callState {
		if out[id] == nil {
			out[id] = &callState{}
		}
		return out[id]
	}
	for _, st := range steps {
		switch st.Kind {
		case StepToolCall:
			if c, err := stepData[ToolCall](st); err == nil && (c.Approved || c.Via != "") {
				get(c.ID).started = true
			}
		case StepToolResult:
			if d, err := stepData[ToolResultData](st); err == nil {
				get(d.ID).result = &d
			}
		}
	}
	return out
}
