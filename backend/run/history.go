package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/prompt"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// interruptedOutput is what the model is told about a tool call whose result
// was never recorded (the app stopped or the run was cancelled while it ran).
const interruptedOutput = "interrupted: Rerun stopped while this tool was running, so its result is unknown and it was not run again. Check its effect before repeating it."

// sessionSteps are the steps of a session's runs, in order, from the run after
// the latest compaction up to and including run upto.
type sessionSteps struct {
	summary string
	runs    []string // run ids, in order
	steps   map[string][]Step
}

func (s *Service) loadSession(ctx context.Context, sessionID string, upto Run) (sessionSteps, error) {
	out := sessionSteps{steps: map[string][]Step{}}
	var compact string
	err := s.db.QueryRowContext(ctx, `SELECT st.data FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE r.session_id = ? AND st.kind = 'compact' AND r.created_at <= ?
		ORDER BY r.created_at DESC, st.seq DESC LIMIT 1`, sessionID, store.FormatTime(upto.CreatedAt)).Scan(&compact)
	after := ""
	if err == nil {
		var c CompactData
		if err := json.Unmarshal([]byte(compact), &c); err != nil {
			return out, fmt.Errorf("read compaction of session %s: %w", sessionID, err)
		}
		out.summary = c.Summary
		if through, err := s.Get(ctx, c.Through); err == nil {
			after = store.FormatTime(through.CreatedAt)
		}
	} else if !errors.Is(err, sql.ErrNoRows) {
		return out, fmt.Errorf("read compaction: %w", err)
	}
	steps, err := store.Query(ctx, s.db, scanStep, `SELECT st.run_id, st.seq, st.kind, st.data, st.input_tokens, st.output_tokens, st.cost_usd, st.started_at, st.ended_at FROM steps st JOIN runs r ON r.id = st.run_id
		WHERE r.session_id = ? AND r.created_at <= ? AND r.created_at > ? AND (r.status != 'queued' OR r.id = ?)
		ORDER BY r.created_at, r.id, st.seq`, sessionID, store.FormatTime(upto.CreatedAt), after, upto.ID)
	if err != nil {
		return out, fmt.Errorf("read session history: %w", err)
	}
	for _, st := range steps {
		if _, seen := out.steps[st.RunID]; !seen {
			out.runs = append(out.runs, st.RunID)
		}
		out.steps[st.RunID] = append(out.steps[st.RunID], st)
	}
	return out, nil
}

// messages turns steps into the conversation the model sees. Every tool_use
// gets a tool_result (an interrupted one when none was recorded), and
// consecutive messages of one role are merged, as both APIs require.
func messages(summary string, runs []string, steps map[string][]Step) ([]llm.Message, error) {
	return messagesWith(summary, runs, steps, nil)
}

// messagesWith is messages with the images of tool results that images
// loads (nil: none) attached to them.
// A step whose data does not decode is an error: the conversation would
// silently lose a turn.
func messagesWith(summary string, runs []string, steps map[string][]Step, images func(runID string, refs []ImageRef) []llm.Image) ([]llm.Message, error) {
	var msgs []llm.Message
	add := func(role llm.Role, parts ...llm.Part) {
		if len(parts) == 0 {
			return
		}
		if n := len(msgs); n > 0 && msgs[n-1].Role == role {
			msgs[n-1].Parts = append(msgs[n-1].Parts, parts...)
			return
		}
		msgs = append(msgs, llm.Message{Role: role, Parts: parts})
	}
	if summary != "" {
		add(llm.RoleUser, llm.Part{Type: llm.PartText, Text: "Summary of the earlier part of this conversation:\n\n" + summary})
	}
	for _, id := range runs {
		var pending []ToolCall // asked for, no result yet
		flush := func() {
			for _, c := range pending {
				add(llm.RoleUser, llm.Part{Type: llm.PartToolResult, ToolCallID: c.ID, ToolName: c.Name, Output: interruptedOutput, IsError: true})
			}
			pending = nil
		}
		for _, st := range steps[id] {
			switch st.Kind {
			case StepInput:
				d, err := stepData[InputData](st)
				if err != nil {
					return nil, err
				}
				text := d.Text
				if strings.HasPrefix(d.From, "@") { // another agent wrote it (call_agent)
					text = fmt.Sprintf("[message from %s]\n%s", d.From, d.Text)
				}
				flush()
				add(llm.RoleUser, llm.Part{Type: llm.PartText, Text: text})
			case StepModel:
				d, err := stepData[ModelData](st)
				if err != nil {
					return nil, err
				}
				flush()
				var parts []llm.Part
				if d.Text != "" {
					parts = append(parts, llm.Part{Type: llm.PartText, Text: d.Text})
				}
				for _, c := range d.ToolCalls {
					parts = append(parts, llm.Part{Type: llm.PartToolUse, ToolCallID: c.ID, ToolName: c.Name, Input: c.Input})
				}
				add(llm.RoleAssistant, parts...)
				pending = append(pending, d.ToolCalls...)
			case StepToolResult:
				d, err := stepData[ToolResultData](st)
				if err != nil {
					return nil, err
				}
				i := slices.IndexFunc(pending, func(c ToolCall) bool { return c.ID == d.ID })
				if i < 0 {
					continue // the runtime's own call (an approved item), reported by its card's result
				}
				pending = slices.Delete(pending, i, i+1)
				part := llm.Part{Type: llm.PartToolResult, ToolCallID: d.ID, ToolName: d.Name, Output: d.Output, IsError: d.IsError}
				if images != nil && len(d.Images) > 0 {
					part.Images = images(id, d.Images)
				}
				add(llm.RoleUser, part)
			}
		}
		flush()
	}
	return msgs, nil
}

// estimateTokens is a rough size of a conversation: about 4 bytes a token.
func estimateTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += len(p.Text) + len(p.Input) + len(p.Output) + 16
		}
	}
	return n / 4
}

// history is the conversation for the run's next model call. When the session
// has grown past the budget, older runs are first summarised by the model
// and the summary stored as a compact step, so a session never outgrows the
// model's context.
func (s *Service) history(ctx context.Context, r *Run, p llm.Provider, providerName, model string) ([]llm.Message, error) {
	ss, err := s.loadSession(ctx, r.SessionID, *r)
	if err != nil {
		return nil, err
	}
	// Images go to the model during the run that took them, and only to
	// providers that take them.
	var images func(string, []ImageRef) []llm.Image
	if providerName != "ollama" {
		images = func(runID string, refs []ImageRef) []llm.Image {
			if runID != r.ID {
				return nil
			}
			var out []llm.Image
			for _, ref := range refs {
				path, err := s.ImagePath(r.AgentID, ref)
				if err != nil {
					continue
				}
				if b, err := os.ReadFile(path); err == nil {
					out = append(out, llm.Image{MediaType: ref.MediaType, Data: b})
				}
			}
			return out
		}
	}
	msgs, err := messagesWith(ss.summary, ss.runs, ss.steps, images)
	if err != nil {
		return nil, err
	}
	if estimateTokens(msgs) <= s.cfg.HistoryBudget {
		return msgs, nil
	}
	if len(ss.runs) < 3 {
		// Too little history to summarise: this run's own tool outputs are
		// what make it big.
		return trimToolOutputs(msgs, s.cfg.HistoryBudget), nil
	}
	// Keep the previous run and this one verbatim; summarise the rest.
	older := ss.runs[:len(ss.runs)-2]
	through := older[len(older)-1]
	old, err := messages(ss.summary, older, ss.steps)
	if err != nil {
		return nil, err
	}
	old = append(old, llm.Message{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartText, Text: prompt.CompactInstruction}}})
	// The summary is a model call like a turn: held to the budgets.
	const system = "You write faithful, compact summaries of conversations."
	old = mergeRoles(old)
	maxTokens, release, err := s.reserve(context.WithoutCancel(ctx), r, model, estimateInput(system, old, nil), 2048)
	if err != nil {
		return nil, err
	}
	started := s.now()
	resp, err := p.Chat(ctx, llm.Request{Model: model, System: system, Messages: old, MaxTokens: maxTokens}, nil)
	if err != nil {
		release()
		return nil, fmt.Errorf("summarise older turns: %w", err)
	}
	usd, known := s.models.Cost(model, resp.Usage)
	err = s.record(ctx, r, StepCompact, CompactData{Summary: resp.Text(), Through: through}, started,
		&stepCost{resp.Usage, usd, known, providerName, model})
	release()
	if err != nil {
		return nil, err
	}
	kept, err := messages(resp.Text(), ss.runs[len(ss.runs)-2:], ss.steps)
	if err != nil {
		return nil, err
	}
	return trimToolOutputs(kept, s.cfg.HistoryBudget), nil
}

// keepTool is how much of an older tool output survives trimming.
const keepTool = 1 << 10

// trimToolOutputs shortens tool outputs, oldest first and never the latest
// one, until the conversation fits the budget (or nothing is left to trim).
// The model keeps the start of each output and a note saying it was cut.
func trimToolOutputs(msgs []llm.Message, budget int) []llm.Message {
	var last *llm.Part
	for i := range msgs {
		for j := range msgs[i].Parts {
			if msgs[i].Parts[j].Type == llm.PartToolResult {
				last = &msgs[i].Parts[j]
			}
		}
	}
	for i := range msgs {
		for j := range msgs[i].Parts {
			if estimateTokens(msgs) <= budget {
				return msgs
			}
			p := &msgs[i].Parts[j]
			if p.Type != llm.PartToolResult || p == last || len(p.Output) <= keepTool {
				continue
			}
			p.Output = p.Output[:keepTool] + fmt.Sprintf("\n[older tool output trimmed to fit the context: %d bytes dropped]", len(p.Output)-keepTool)
		}
	}
	return msgs
}

// mergeRoles merges consecutive messages of one role.
func mergeRoles(in []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range in {
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Parts = append(out[n-1].Parts, m.Parts...)
			continue
		}
		out = append(out, m)
	}
	return out
}
