// Package tool holds what an agent can do: the tool families its capabilities
// switch on (files, shell, database, web, soul, agents, memory, skills, human), each tool with a JSON
// schema, path jails and guards, and errors that tell the model what to fix.
//
// Tools never see the run loop; what they need from the rest of the workspace
// comes in through Env.
package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/skill"
)

// Tool is one callable tool.
type Tool struct {
	Name        string
	Family      string // the capability id that switches it on (agent.Capabilities)
	Description string
	Schema      json.RawMessage // JSON Schema of the input object
	Run         func(ctx context.Context, env *Env, input json.RawMessage) (string, error)
	// Pause, when set, makes the tool a card for the person instead: it
	// checks the input and returns the pause kind and request to store.
	Pause func(input json.RawMessage) (kind string, request any, err error)
	// Approve, when set, holds every call for the person's approval on a
	// card, whatever the agent's ask-first switches say: it checks the
	// input and returns the card item's title and detail. Run runs only
	// for an approved call; a declined one changes nothing.
	Approve func(ctx context.Context, input json.RawMessage) (title, detail string, err error)
	// Acts, when set, reports whether a call changes something outside the
	// conversation: what an ask-first switch holds for approval. Unset, the
	// tool never acts (reads, queries, GETs).
	Acts func(input json.RawMessage) bool
	// Preview, when set, describes a held call for its approval card: a
	// one-line title, how to show the detail (a pause item kind) and the
	// detail. Unset, the card shows the input as indented JSON.
	Preview func(env *Env, input json.RawMessage) (title, kind, detail string)
}

// Env is where a tool runs: one agent of one workspace.
type Env struct {
	AgentID     string
	AgentName   string
	AgentHandle string
	FilesDir    string // the agent's private folder (agents/<id>/files)
	SharedDir   string // the workspace's shared folder
	AgentDB     string // path of agents/<id>/agent.db
	SharedDB    string // path of shared.db
	// NoNetwork switches the network off for the agent's commands (the
	// agent's network switch, on by default).
	NoNetwork bool

	Souls    SoulWriter  // for update_soul
	Agents   AgentCaller // for call_agent
	Memories MemoryStore // for remember, recall, forget
	Skills   SkillStore  // for list_skills, load_skill, read_skill_file, upsert_skill
	Notifier Notifier    // for notify
	// Vars resolves ${NAME} references to workspace variables when a tool
	// executes (shell commands and their env, request URLs and headers);
	// nil means the workspace has none.
	Vars VarResolver

	// Attach hands the runtime an image the tool returns beside its text
	// (a screenshot); nil where images are not kept.
	Attach func(mediaType string, data []byte)

	// Processes, when set, hears of each process a call starts that may
	// outlive the app (a shell command's process group): it records it
	// before the command goes on, so the next start after a crash can end
	// it (EndProcessGroup), and forgets it when the command is over.
	Processes ProcessRecorder

	// RunID and Step say which run and step a memory was written by; Step
	// returns the sequence number of the tool call being executed.
	RunID string
	Step  func() int
}

// Process is a process a tool call started: its pid (a shell command's
// process group id) and identity, "boot:ticks" on Linux: the boot and its
// start time, so a later pid reuse is told apart.
type Process struct {
	PID   int
	Start string
}

// ProcessRecorder keeps the processes of running calls.
type ProcessRecorder interface {
	Started(p Process) error
	Ended(p Process)
}

// VarResolver replaces ${NAME} references with variable values, failing on
// unknown names (a *secret.Variables).
type VarResolver interface {
	Resolve(text string) (string, error)
}

// resolve substitutes variables in s; with no variables any reference is an
// error naming it.
func (e *Env) resolve(s string) (string, error) {
	if e.Vars != nil {
		return e.Vars.Resolve(s)
	}
	return secret.Resolve(s, func(string) (string, bool) { return "", false })
}

// lookup is the value of the variable name.
func (e *Env) lookup(name string) (string, bool) {
	if e.Vars == nil {
		return "", false
	}
	v, err := e.Vars.Resolve("${" + name + "}")
	return v, err == nil
}

// resolveCommand substitutes variables in a command line, each value quoted
// for the place it stands in (quoteCommand, per platform), so that it stays
// data whatever it holds.
func (e *Env) resolveCommand(command string) (string, error) {
	places := commandPlaces(command)
	return secret.Expand(command, e.lookup, func(name, value string, at int) (string, error) {
		return quoteCommand(places, at, name, value)
	})
}

// redactor masks the variables' values in an output before it is cut
// (nil: nothing to mask). Vars is a *secret.Variables in the app.
func (e *Env) redactor() *secret.Redactor {
	if r, ok := e.Vars.(interface{ Redactor() *secret.Redactor }); ok {
		return r.Redactor()
	}
	return nil
}

// refuseSecrets refuses text to be stored where agents read it that holds a
// variable's value or what looks like a credential
// (secret.Variables.CheckStored); an agent can never say it is none.
func (e *Env) refuseSecrets(where, thing, text string) error {
	if c, ok := e.Vars.(interface {
		CheckStored(where, thing, text string, allowCredentialLike bool) error
	}); ok {
		return c.CheckStored(where, thing, text, false)
	}
	return secret.CheckCredential(where, thing, text)
}

// redact masks the variables' values in s.
func (e *Env) redact(s string) string { return e.redactor().Redact(s) }

// clip is the package's clip after masking: a value the cut would halve is
// masked whole first.
func (e *Env) clip(s string, max int) string { return clipMasked(e.redactor(), s, max) }

// clipMasked is clip after masking with r (nil: nothing to mask).
func clipMasked(r *secret.Redactor, s string, max int) string {
	if r != nil && len(s) > max {
		s = r.Redact(s)
	}
	return clip(s, max)
}

// SoulWriter stores a new version of an agent's soul.
type SoulWriter interface {
	UpdateSoul(ctx context.Context, agentID, soul string) error
}

// AgentCaller runs another agent of the workspace and waits for its answer.
type AgentCaller interface {
	CallAgent(ctx context.Context, handle, message string) (string, error)
}

// MemoryStore keeps agents' memories (a *memory.Service).
type MemoryStore interface {
	Remember(ctx context.Context, agentID, text string, src memory.Source, opts memory.RememberOptions) (memory.Remembered, error)
	Recall(ctx context.Context, agentID, query string, k int) ([]memory.Scored, error)
	Get(ctx context.Context, id string) (memory.Memory, error)
	Forget(ctx context.Context, id string) error
}

// SkillStore keeps agents' skills (a *skill.Service).
type SkillStore interface {
	List(ctx context.Context, agentID string) ([]skill.Summary, error)
	Load(ctx context.Context, agentID, name string) (skill.Loaded, error)
	ReadFile(ctx context.Context, agentID, name, file string) ([]byte, error)
	Upsert(ctx context.Context, agentID, name, skillMD string, files map[string][]byte) (skill.Skill, error)
}

// clip cuts s to at most max bytes (on a UTF-8 boundary) and says how much was
// left out, so the model knows the output is partial.
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + truncNote(len(s)-cut)
}

// truncNote is the marker every capped output carries.
func truncNote(n int) string {
	return fmt.Sprintf("\n[truncated: %d more bytes]", n)
}

// marshal encodes a tool result as compact JSON without HTML escaping, so
// "<" and "&" reach the model as written.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Results are built from plain types; this only fires on a programming error.
		return fmt.Sprintf(`{"error":%q}`, err.Error())
	}
	return strings.TrimSuffix(b.String(), "\n")
}
