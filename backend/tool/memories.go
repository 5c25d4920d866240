package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/memory"
)

// MaxRecall is the most memories one recall call returns.
const MaxRecall = 20

func memoryTools() []Tool {
	return []Tool{{
		Name:   "remember",
		Family: "memory",
		Description: "Write down one short, durable fact worth knowing in later runs (a preference, a decision, a name, where " +
			"something lives), in a self-contained sentence. When a fact you remember changed its value, pass that memory's id as " +
			"replaces. Nothing is replaced otherwise: when the new fact is close to one you have, the answer names it, and you " +
			"remember again with replaces only if you meant a correction. Memories you never use fade away; citing a memory's " +
			"id ([mem_…]) in your answer when it helped keeps it alive.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"text":{"type":"string","description":"The fact, one self-contained sentence (at most 2000 bytes)."},` +
			`"replaces":{"type":"string","description":"Id of the memory this one corrects (mem_…): the same fact with a changed value. It will never be recalled again."}` +
			`},"required":["text"],"additionalProperties":false}`),
		Run:  remember,
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			return "Remember a fact", "text", argsOf(input).str("text")
		},
	}, {
		Name:   "recall",
		Family: "memory",
		Description: "Search your memories by topic and return the most relevant, best first, with their ids. Memories relevant " +
			"to the request are already in your instructions; use this to look up something else. Recalling a memory keeps it alive.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What you want to remember, in a few words."},` +
			`"k":{"type":"integer","minimum":1,"maximum":20,"description":"How many memories to return (default 5)."}` +
			`},"required":["query"],"additionalProperties":false}`),
		Run: recall,
	}, {
		Name:   "forget",
		Family: "memory",
		Description: "Delete one of your memories for good, by id (mem_…), when it is wrong and no longer worth keeping. " +
			"To correct a memory, prefer remember with replaces: the person can then see what changed.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"id":{"type":"string","description":"The memory's id, as recall or your instructions show it (mem_…)."}` +
			`},"required":["id"],"additionalProperties":false}`),
		Run:  forget,
		Acts: always,
		Preview: func(_ *Env, input json.RawMessage) (string, string, string) {
			return "Forget a memory", "target", argsOf(input).str("id")
		},
	}}
}

func memories(env *Env) (MemoryStore, error) {
	if env.Memories == nil {
		return nil, fault.Invalid("memory is not available in this run")
	}
	return env.Memories, nil
}

func remember(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Text     string `json:"text"`
		Replaces string `json:"replaces"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	if strings.TrimSpace(in.Text) == "" {
		return "", fault.Invalid("text is empty; write the fact to remember as one sentence")
	}
	if err := env.refuseSecrets("text", "a memory", in.Text); err != nil {
		return "", err
	}
	store, err := memories(env)
	if err != nil {
		return "", err
	}
	src := memory.Source{RunID: env.RunID}
	if env.Step != nil {
		src.Step = env.Step()
	}
	got, err := store.Remember(ctx, env.AgentID, in.Text, src, memory.RememberOptions{Supersedes: strings.Trim(strings.TrimSpace(in.Replaces), "[]")})
	if err != nil {
		return "", fmt.Errorf("remember: %w", err)
	}
	switch {
	case got.Existing && got.Superseded != nil:
		return fmt.Sprintf("[%s] %s now replaces [%s] %q; that one will not be recalled again",
			got.Memory.ID, got.Memory.Text, got.Superseded.ID, got.Superseded.Text), nil
	case got.Existing:
		return fmt.Sprintf("already known, reinforced: [%s] %s", got.Memory.ID, got.Memory.Text), nil
	}
	out := fmt.Sprintf("remembered [%s] %s", got.Memory.ID, got.Memory.Text)
	if old := got.Superseded; old != nil {
		out += fmt.Sprintf("\nit replaces [%s] %q; that one will not be recalled again", old.ID, old.Text)
	}
	if c := got.Candidate; c != nil {
		out += fmt.Sprintf("\nclose to [%s] %q (%s); both are kept. If the new fact corrects that one (the same fact, "+
			"its value changed), call remember again with the same text and replaces: %q", c.ID, c.Text, got.Reason, c.ID)
	}
	return out, nil
}

func recall(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	switch {
	case strings.TrimSpace(in.Query) == "":
		return "", fault.Invalid("query is empty; say in a few words what you want to remember")
	case in.K < 0 || in.K > MaxRecall:
		return "", fault.Invalid("k is %d; ask for 1 to %d memories", in.K, MaxRecall)
	}
	store, err := memories(env)
	if err != nil {
		return "", err
	}
	found, err := store.Recall(ctx, env.AgentID, in.Query, in.K)
	if err != nil {
		return "", fmt.Errorf("recall: %w", err)
	}
	if len(found) == 0 {
		return "you remember nothing about that", nil
	}
	var b strings.Builder
	for _, m := range found {
		fmt.Fprintf(&b, "[%s] %s (strength %.2f)\n", m.ID, m.Text, m.Strength)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func forget(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
	var in struct {
		ID string `json:"id"`
	}
	if err := jsonarg.Decode(input, &in); err != nil {
		return "", err
	}
	id := strings.Trim(strings.TrimSpace(in.ID), "[]")
	if id == "" {
		return "", fault.Invalid("id is empty; give the id of the memory to forget (mem_…)")
	}
	store, err := memories(env)
	if err != nil {
		return "", err
	}
	m, err := store.Get(ctx, id)
	if err == nil && m.AgentID != env.AgentID {
		err = fault.NotFound("no memory %q", id) // another agent's: not yours to see
	}
	if err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	if err := store.Forget(ctx, id); err != nil {
		return "", fmt.Errorf("forget: %w", err)
	}
	return fmt.Sprintf("forgot [%s] %s", m.ID, m.Text), nil
}
