package run

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/prompt"
	"github.com/rerun-build/rerun-desktop/backend/skill"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// maxToolOutput bounds what one tool result hands back to the model.
const maxToolOutput = 64 << 10

// Serve executes runs until ctx is cancelled. It first resumes the runs a
// crash left running, then takes queued runs as workers free up, never two of
// one session at once. On return every run it started has stopped; runs cut
// short by the shutdown stay "running" and resume at the next Serve.
func (s *Service) Serve(ctx context.Context) error {
	if err := s.resume(ctx); err != nil {
		return err
	}
	s.wake()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			for _, cancel := range s.active {
				cancel(errShutdown)
			}
			s.mu.Unlock()
			s.wg.Wait()
			return nil
		case <-s.kick:
		case <-tick.C:
		}
		if err := s.dispatch(ctx); err != nil {
			s.log.Error("dispatch runs", "err", err)
		}
	}
}

// resume restarts the runs that were running when the app stopped. A run
// called by another run is not resumed on its own: its caller is told the
// call was interrupted, so the child ends as failed.
func (s *Service) resume(ctx context.Context) error {
	running, err := s.runsWhere(ctx, `status = 'running'`)
	if err != nil {
		return fmt.Errorf("find runs to resume: %w", err)
	}
	for _, r := range running {
		// A called agent resumed from a card runs on its own while its
		// caller waits paused; it resumes like any run.
		if r.ParentRunID != "" && !s.callerWaits(ctx, r) {
			if err := s.finish(ctx, r.ID, Failed, "", "interrupted by a restart while another agent waited for it",
				ErrorData{"interrupted by a restart; the calling run was told"}); err != nil {
				return err
			}
			continue
		}
		s.log.Info("resuming run", "run", r.ID, "agent", r.AgentID, "steps", r.Steps)
		s.launch(ctx, r)
	}
	return nil
}

// callerWaits reports whether r's caller is paused waiting for it.
func (s *Service) callerWaits(ctx context.Context, r Run) bool {
	parent, err := s.Get(ctx, r.ParentRunID)
	return err == nil && parent.Status == Paused
}

// runsWhere lists runs matching a fixed condition, oldest first.
func (s *Service) runsWhere(ctx context.Context, where string) ([]Run, error) {
	return store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs WHERE `+where+` ORDER BY created_at`)
}

// dispatch starts queued runs while workers are free, oldest first, skipping
// sessions that already have a run executing.
func (s *Service) dispatch(ctx context.Context) error {
	s.mu.Lock()
	free := s.cfg.Workers - len(s.active)
	s.mu.Unlock()
	if free <= 0 {
		return nil
	}
	// Runs called by another agent execute inline in their caller, except
	// one that continues after a card while its caller waits paused. A
	// session with a run waiting for a person is busy until it is answered.
	// Only each free session's oldest queued run is a candidate, and at most
	// as many as there are free workers.
	queued, err := store.Query(ctx, s.db, scanRun, `SELECT `+runColumns+` FROM runs r
		WHERE status = 'queued' AND (parent_run_id = '' OR started_at IS NOT NULL)
		AND session_id NOT IN (SELECT session_id FROM runs WHERE status IN ('paused', 'running'))
		AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.session_id = r.session_id AND o.status = 'queued'
			AND (o.created_at < r.created_at OR (o.created_at = r.created_at AND o.id < r.id)))
		ORDER BY created_at, id LIMIT ?`, free+len(s.busySessions()))
	if err != nil {
		return err
	}
	for _, r := range queued {
		if free == 0 {
			break
		}
		s.mu.Lock()
		busy := s.sessions[r.SessionID]
		s.mu.Unlock()
		if busy {
			continue
		}
		s.launch(ctx, r)
		free--
	}
	return nil
}

// toolsFor is the agent's tools: its enabled families, then what each
// source adds. A source that fails costs the run its tools, not the run.
func (s *Service) toolsFor(ctx context.Context, a agent.Agent) []tool.Tool {
	tools := tool.ForCapabilities(a.Capabilities)
	for _, src := range s.sources {
		more, err := src.Tools(ctx, a)
		if err != nil {
			s.log.Warn("tools of the agent unavailable", "agent", a.ID, "err", err)
		}
		for _, t := range more {
			if _, dup := tool.Find(tools, t.Name); !dup {
				tools = append(tools, t)
			}
		}
	}
	return tools
}

// busySessions lists the sessions with a run executing in this process.
func (s *Service) busySessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		out = append(out, id)
	}
	return out
}

// launch executes r on its own goroutine.
func (s *Service) launch(ctx context.Context, r Run) {
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	s.mu.Lock()
	s.active[r.ID] = cancel
	s.sessions[r.SessionID] = true
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() {
			cancel(nil)
			s.mu.Lock()
			delete(s.active, r.ID)
			delete(s.sessions, r.SessionID)
			s.mu.Unlock()
			s.wake()
		}()
		s.execute(runCtx, r)
	}()
}

// execute drives one run to its end (or to the app's shutdown).
func (s *Service) execute(ctx context.Context, r Run) {
	bg := context.WithoutCancel(ctx) // bookkeeping must outlive a cancel
	if r.Status != Running {
		now := s.now()
		r.Status, r.StartedAt = Running, &now
		// Claim the run: only a queued run starts, so a run read as queued
		// by an earlier dispatch pass, already executed or cancelled since,
		// never runs twice.
		res, err := s.db.ExecContext(bg, `UPDATE runs SET status = 'running', started_at = coalesce(started_at, ?) WHERE id = ? AND status = 'queued'`,
			store.FormatTime(now), r.ID)
		if err != nil {
			s.log.Error("start run", "run", r.ID, "err", err)
			return
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return
		}
		s.publish("run.updated", r)
	}
	// The time limit counts working time: a run that waited days for a
	// person gets a full allowance again from the answer.
	deadline := r.StartedAt.Add(s.cfg.MaxDuration)
	var answered sql.NullString
	s.db.QueryRowContext(bg, `SELECT max(answered_at) FROM pauses WHERE run_id = ?`, r.ID).Scan(&answered)
	if answered.Valid {
		if t := store.ParseTime(answered.String).Add(s.cfg.MaxDuration); t.After(deadline) {
			deadline = t
		}
	}
	ctx, stop := context.WithDeadlineCause(ctx, deadline, errTimeLimit)
	defer stop()

	status, output, closing := s.loop(ctx, &r)
	if status == "" { // shutdown: leave it running, it resumes next start
		return
	}
	if status == Paused { // recorded with its card; it continues from the answer
		s.signal(r.ID)
		return
	}
	errMsg := ""
	if e, ok := closing.(ErrorData); ok {
		errMsg = e.Message
	}
	if err := s.finish(bg, r.ID, status, output, errMsg, closing); err != nil {
		s.log.Error("finish run", "run", r.ID, "err", err)
	}
	s.log.Info("run ended", "run", r.ID, "agent", r.AgentID, "status", status, "steps", r.Steps)
}

var errTimeLimit = errors.New("time limit")

// stopped translates a cancelled context into how the run ends; "" means the
// app is shutting down.
func (s *Service) stopped(ctx context.Context) (Status, any) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errShutdown):
		return "", nil
	case errors.Is(cause, errTimeLimit):
		return Failed, ErrorData{fmt.Sprintf("the run reached its time limit of %s and was stopped", s.cfg.MaxDuration)}
	default:
		return Cancelled, CancelData{Reason: "stopped by you"}
	}
}

// loop alternates model turns and tool calls until the model answers without
// calling a tool. It returns how the run ends and its closing step.
func (s *Service) loop(ctx context.Context, r *Run) (Status, string, any) {
	bg := context.WithoutCancel(ctx)
	a, err := s.agents.Get(bg, r.AgentID)
	if err != nil {
		return Failed, "", ErrorData{"the agent no longer exists"}
	}
	sess, err := s.Session(bg, r.SessionID)
	if err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	s.testAnsweredApps(bg, r) // an app set up from a card offers its tools to this run already
	tools := s.toolsFor(bg, a)
	specs := make([]llm.ToolSpec, len(tools))
	for i, t := range tools {
		specs[i] = llm.ToolSpec{Name: t.Name, Description: t.Description, InputSchema: t.Schema}
	}
	caller := &agentCaller{s: s, run: r}
	env := s.toolEnv(a, r, caller)
	if err := s.settle(ctx, r, tools, env, caller); err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	if err := s.closeInterrupted(bg, r); err != nil {
		return Failed, "", ErrorData{err.Error()}
	}
	// Recalled once, before the first turn, and kept for the whole run: the
	// prompt stays the same from turn to turn, and a recall reinforces.
	extra := s.promptExtra(bg, a, r)

	wantProvider, wantModel := a.Provider, a.Model
	if sess.Provider != "" || sess.Model != "" {
		wantProvider, wantModel = sess.Provider, sess.Model
	}
	for {
		if ctx.Err() != nil {
			st, closing := s.stopped(ctx)
			return st, "", closing
		}
		if r.Steps >= s.cfg.MaxSteps {
			return Failed, "", ErrorData{fmt.Sprintf("the run reached its limit of %d steps and was stopped; ask again to continue", s.cfg.MaxSteps)}
		}
		p, providerName, model, err := s.models.Pick(wantProvider, wantModel)
		if err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		msgs, err := s.history(ctx, r, p, providerName, model)
		if err != nil {
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{err.Error()}
		}
		system := s.system(bg, a, extra)
		started := s.now()
		resp, err := p.Chat(ctx, llm.Request{Model: model, System: system, Messages: msgs, Tools: specs, MaxTokens: s.cfg.MaxTokens},
			func(d llm.Delta) {
				if s.bus != nil && d.Text != "" {
					s.bus.Publish(event.Change{Workspace: s.workspace, Kind: event.KindDelta, ID: r.ID, Agent: r.AgentID, Session: r.SessionID, Text: d.Text})
				}
			})
		if err != nil {
			if ctx.Err() != nil {
				st, closing := s.stopped(ctx)
				return st, "", closing
			}
			return Failed, "", ErrorData{fmt.Sprintf("the model call failed: %v", err)}
		}
		usd, known := s.models.Cost(model, resp.Usage)
		md := ModelData{Text: resp.Text(), StopReason: resp.StopReason, Provider: providerName, Model: model, Usage: resp.Usage, CostKnown: known, ToolCalls: []ToolCall{}}
		for _, c := range resp.ToolCalls() {
			md.ToolCalls = append(md.ToolCalls, ToolCall{ID: c.ToolCallID, Name: c.ToolName, Input: c.Input})
		}
		if err := s.record(bg, r, StepModel, md, started, &stepCost{resp.Usage, usd, known, providerName, model}); err != nil {
			return Failed, "", ErrorData{err.Error()}
		}
		if len(md.ToolCalls) == 0 {
			return Done, md.Text, nil
		}
		switch t, err := s.runTools(ctx, r, a, tools, env, caller, md); {
		case err != nil:
			return Failed, "", ErrorData{err.Error()}
		case t != turnDone:
			return Paused, md.Text, nil
		}
	}
}

// closeInterrupted records a result for a tool call left without one by a
// crash, so the model hears it was interrupted rather than the app silently
// running it again.
func (s *Service) closeInterrupted(ctx context.Context, r *Run) error {
	steps, err := s.Steps(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, c := range unanswered(steps) {
		s.log.Warn("tool call interrupted by a restart", "run", r.ID, "tool", c.Name)
		if err := s.record(ctx, r, StepToolResult, ToolResultData{ID: c.ID, Name: c.Name, Output: interruptedOutput, IsError: true, Via: c.Via}, s.now(), nil); err != nil {
			return err
		}
	}
	return nil
}

// execTool runs one tool call whose call step is recorded and returns its
// result, redacted, for the caller to record. waiting is set when the tool
// was call_agent and the called agent paused for a person.
func (s *Service) execTool(ctx context.Context, r *Run, tools []tool.Tool, env *tool.Env, caller *agentCaller, c ToolCall) (res ToolResultData, waiting *errWaiting) {
	res = ToolResultData{ID: c.ID, Name: c.Name}
	t, ok := tool.Find(tools, c.Name)
	switch {
	case !ok:
		res.Output, res.IsError = fmt.Sprintf("there is no tool named %q; use one of the tools listed", c.Name), true
		return res, nil
	case t.IsPause():
		res.Output, res.IsError = fmt.Sprintf("%s cannot run as an approved action; call it yourself", c.Name), true
		return res, nil
	case tool.Acts(c.Name, c.Input) && c.Via == "" && s.declined(ctx, r.ID, c):
		res.Output, res.IsError = "not run: the person declined exactly this action earlier in this run. Do not do it another way.", true
		return res, nil
	}
	caller.mu.Lock()
	caller.child = ""
	caller.mu.Unlock()
	input := c.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	var images []llm.Image
	env.Attach = func(mediaType string, data []byte) {
		images = append(images, llm.Image{MediaType: mediaType, Data: data})
	}
	out, err := t.Run(ctx, env, input)
	env.Attach = nil
	res.Images = s.keepImages(r, c, images)
	if err != nil {
		var w errWaiting
		switch {
		case errors.As(err, &w):
			return res, &w
		case ctx.Err() != nil:
			out = "stopped: the run was cancelled while this tool ran"
		default:
			out = err.Error()
		}
		res.IsError = true
	}
	res.Output = s.redact(capOutput(out))
	caller.mu.Lock()
	res.ChildRunID = caller.child
	caller.mu.Unlock()
	return res, nil
}

// maxImages bounds the images one tool call keeps.
const maxImages = 4

// keepImages writes a tool call's images into the agent's folder.
func (s *Service) keepImages(r *Run, c ToolCall, images []llm.Image) []ImageRef {
	var refs []ImageRef
	for i, img := range images {
		if i == maxImages {
			break
		}
		ext := map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}[img.MediaType]
		if ext == "" {
			s.log.Warn("tool image of an unknown type dropped", "run", r.ID, "type", img.MediaType)
			continue
		}
		rel := filepath.Join("shots", fmt.Sprintf("%s-%s-%d%s", r.ID, safeName(c.ID), i, ext))
		full := filepath.Join(s.agents.Dir(r.AgentID), rel)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		if err := os.WriteFile(full, img.Data, 0o600); err != nil {
			s.log.Warn("keep tool image", "run", r.ID, "err", err)
			continue
		}
		refs = append(refs, ImageRef{MediaType: img.MediaType, Path: filepath.ToSlash(rel), Size: len(img.Data)})
	}
	return refs
}

// safeName keeps the letters, digits, - and _ of a tool call id for a file
// name.
func safeName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			return r
		}
		return -1
	}, id)
}

// ImagePath is where an image a tool returned is kept.
func (s *Service) ImagePath(agentID string, ref ImageRef) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(ref.Path))
	if !strings.HasPrefix(clean, "shots"+string(filepath.Separator)) || strings.Contains(clean, "..") {
		return "", fault.Invalid("not an image of a tool result")
	}
	return filepath.Join(s.agents.Dir(agentID), clean), nil
}

// declined reports whether the person declined this exact call (same tool,
// same input) on an approval card of the run.
func (s *Service) declined(ctx context.Context, runID string, c ToolCall) bool {
	ps, err := s.Pauses(context.WithoutCancel(ctx), PauseFilter{RunID: runID, Status: pause.Answered})
	if err != nil {
		return false
	}
	for _, p := range ps {
		if p.Kind != pause.Approval {
			continue
		}
		var req pause.ApprovalRequest
		var ans pause.ApprovalAnswer
		json.Unmarshal(p.Request, &req)
		json.Unmarshal(p.Answer, &ans)
		for _, it := range req.Items {
			if d, ok := ans.Decision(it.ID); ok && !d.Approved && it.Tool == c.Name && sameJSON(it.Input, c.Input) {
				return true
			}
		}
	}
	return false
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xa) == string(yb)
}

func capOutput(s string) string {
	if len(s) <= maxToolOutput {
		return s
	}
	return s[:maxToolOutput] + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-maxToolOutput)
}

// recallAtStart is how many memories relevant to a run's input go in its
// prompt.
const recallAtStart = 5

// promptParts are the parts of the system prompt gathered once per run.
type promptParts struct {
	skills   string   // the skill index
	memories []string // recalled facts, "[id] text"
}

// promptExtra recalls the memories relevant to the run's input (when the
// agent has the memory capability) and reads its skill index (skills). A
// failure costs the prompt that part, not the run.
func (s *Service) promptExtra(ctx context.Context, a agent.Agent, r *Run) promptParts {
	var p promptParts
	if s.memory != nil && slices.Contains(a.Capabilities, "memory") && strings.TrimSpace(r.Input) != "" {
		found, err := s.memory.Recall(ctx, a.ID, r.Input, recallAtStart)
		if err != nil {
			s.log.Warn("recall memories for the prompt", "run", r.ID, "err", err)
		}
		for _, m := range found {
			p.memories = append(p.memories, fmt.Sprintf("[%s] %s", m.ID, m.Text))
		}
		if len(found) > 0 {
			s.changed("memory.changed", a.ID) // strengths moved
		}
	}
	if s.skills != nil && slices.Contains(a.Capabilities, "skills") {
		idx, err := s.skillIndex(ctx, a) // its own skills and its apps'
		if err != nil {
			s.log.Warn("read skill index for the prompt", "run", r.ID, "err", err)
		}
		p.skills = idx
	}
	return p
}

// changed tells the UI an agent's memories or skills changed.
func (s *Service) changed(kind, agentID string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: agentID, Agent: agentID})
	}
}

func (s *Service) variableNames() []string {
	if s.vars == nil {
		return nil
	}
	return s.vars.Names()
}

// system assembles the agent's system prompt.
func (s *Service) system(ctx context.Context, a agent.Agent, extra promptParts) string {
	boxName := ""
	if b, err := s.boxes.Get(ctx, a.BoxID); err == nil {
		boxName = b.Name
	}
	return prompt.System(prompt.Input{
		Name: a.Name, Handle: a.Handle, Box: boxName, Soul: a.Soul,
		Guide: s.guide(a), Skills: extra.skills, Memories: extra.memories, Variables: s.variableNames(),
		Now: s.cfg.Now().In(s.cfg.Location),
	})
}

func (s *Service) toolEnv(a agent.Agent, r *Run, caller *agentCaller) *tool.Env {
	dir := s.agents.Dir(a.ID)
	env := &tool.Env{
		AgentID: a.ID, AgentName: a.Name, AgentHandle: a.Handle,
		FilesDir: filepath.Join(dir, "files"), SharedDir: s.sharedDir,
		AgentDB: filepath.Join(dir, "agent.db"), SharedDB: s.sharedDB,
		Souls: soulWriter{s.agents}, Agents: caller,
		// The tool call being executed is the run's latest step.
		RunID: r.ID, Step: func() int { return r.Steps },
	}
	if s.memory != nil {
		env.Memories = memories{s.memory, s}
	}
	if s.vars != nil {
		env.Vars = s.vars
	}
	if s.notifier != nil {
		env.Notifier = notifier{s, r}
	}
	if s.skills != nil {
		env.Skills = skills{s.skills, s}
	}
	return env
}

// memories is the memory service as the tools see it: the agent's own
// writes (and recalls, which move strengths) refresh an open Memory tab.
type memories struct {
	*memory.Service
	s *Service
}

func (m memories) Remember(ctx context.Context, agentID, text string, src memory.Source, opts memory.RememberOptions) (memory.Remembered, error) {
	out, err := m.Service.Remember(ctx, agentID, text, src, opts)
	if err == nil {
		m.s.changed("memory.changed", agentID)
	}
	return out, err
}

func (m memories) Recall(ctx context.Context, agentID, query string, k int) ([]memory.Scored, error) {
	out, err := m.Service.Recall(ctx, agentID, query, k)
	if len(out) > 0 {
		m.s.changed("memory.changed", agentID)
	}
	return out, err
}

func (m memories) Forget(ctx context.Context, id string) error {
	mem, err := m.Service.Get(ctx, id)
	if err != nil {
		return err
	}
	if err := m.Service.Forget(ctx, id); err != nil {
		return err
	}
	m.s.changed("memory.changed", mem.AgentID)
	return nil
}

// skills is the skill service as the tools see it: upsert_skill refreshes
// an open Skills tab.
type skills struct {
	*skill.Service
	s *Service
}

func (k skills) Upsert(ctx context.Context, agentID, name, skillMD string, files map[string][]byte) (skill.Skill, error) {
	out, err := k.Service.Upsert(ctx, agentID, name, skillMD, files)
	if err == nil {
		k.s.changed("skill.changed", agentID)
	}
	return out, err
}

// notifier is the notify tool's way to the person.
type notifier struct {
	s   *Service
	run *Run
}

func (n notifier) Notify(ctx context.Context, kind, title, body string) error {
	return n.s.notifier.Notify(ctx, Notice{AgentID: n.run.AgentID, RunID: n.run.ID, Kind: kind,
		Title: title, Body: body, Automated: n.s.automated(ctx, *n.run)})
}

type soulWriter struct{ agents *agent.Service }

func (w soulWriter) UpdateSoul(ctx context.Context, agentID, soul string) error {
	_, err := w.agents.Update(ctx, agentID, agent.Update{Soul: &soul})
	return err
}

// agentCaller lets a run call another agent (call_agent): the callee runs in a
// new session linked to the caller, inline, and its answer is the tool result.
type agentCaller struct {
	s   *Service
	run *Run

	mu    sync.Mutex
	child string // the run started by the latest call
}

func (c *agentCaller) CallAgent(ctx context.Context, handle, message string) (string, error) {
	s := c.s
	bg := context.WithoutCancel(ctx)
	target, err := s.agents.ByHandle(bg, strings.TrimSpace(handle))
	if err != nil {
		return "", err
	}
	if c.run.Depth+1 > s.cfg.MaxDepth {
		return "", fmt.Errorf("calls between agents are limited to %d levels; answer with what you have", s.cfg.MaxDepth)
	}
	// Refuse cycles: the target must not be the caller or any run above it.
	for id := c.run.ID; id != ""; {
		up, err := s.Get(bg, id)
		if err != nil {
			return "", err
		}
		if up.AgentID == target.ID {
			return "", fmt.Errorf("@%s is already working on this request further up the chain (a cycle); do not call it again", target.Handle)
		}
		id = up.ParentRunID
	}
	caller, _ := s.agents.Get(bg, c.run.AgentID)
	sess, err := s.NewSession(bg, target.ID, SourceAgent, c.run.ID)
	if err != nil {
		return "", err
	}
	child, err := s.Start(bg, target.ID, sess.ID, SourceAgent, message, StartOptions{From: "@" + caller.Handle, ParentRunID: c.run.ID, Depth: c.run.Depth + 1})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.child = child.ID
	c.mu.Unlock()
	childCtx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.active[child.ID] = cancel
	s.mu.Unlock()
	s.execute(childCtx, child) // inline: the caller's worker waits, so nested calls cannot starve the pool
	cancel(nil)
	s.mu.Lock()
	delete(s.active, child.ID)
	s.mu.Unlock()
	done, err := s.Get(bg, child.ID)
	if err != nil {
		return "", err
	}
	switch done.Status {
	case Done:
		return done.Output, nil
	case Paused:
		return "", errWaiting{child: child.ID, handle: target.Handle}
	case Running:
		return "", errors.New("stopped before @" + target.Handle + " answered")
	default:
		return "", fmt.Errorf("@%s did not finish (%s): %s", target.Handle, done.Status, done.Error)
	}
}
