package pause

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// kinds lists every kind of pause, in the order the app shows them. A new
// kind is a file defining it with Define, and one entry here.
var kinds = []Kind{question, approval, connector, credential, takeover, budgetKind}

// Kinds returns every kind of pause.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Names returns the names of every kind, in order.
func Names() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name()
	}
	return names
}

// Find returns the kind called name.
func Find(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

// Kind is one way of pausing, as the rest of Rerun uses it without knowing
// which: the tool that raises it, the checks on its request and answer, and
// what the notification and the agent read. Requests and answers travel as
// the kind's own types (QuestionRequest, …) inside any.
type Kind interface {
	Name() string
	// Tool is the agent tool that raises a card of this kind.
	Tool() Tool
	// FromAgent checks a request an agent sent through Tool; decode reads
	// the tool's input into the value it is given.
	FromAgent(decode func(any) error) (any, error)
	// FromApp checks a request the app raises itself (a card without a
	// model turn): it must be the kind's request type.
	FromApp(request any) (any, error)
	// Request decodes a stored request.
	Request(raw json.RawMessage) (any, error)
	// Summary is a card's one-line title and its body, for notifications
	// and lists.
	Summary(request any) (title, body string, err error)
	// Answer reads the person's answer with decode, checks it against
	// request, puts its secrets into variables with set, and returns what
	// to store: never a secret value.
	Answer(ctx context.Context, request any, decode func(any) error, set SetVariable) (any, error)
	// AnswerText is what the agent reads back from a stored answer. ok is
	// false for a kind whose text package run writes itself, because it
	// needs the run (an approval runs the approved items; a takeover hands
	// the browser back).
	AnswerText(request, answer json.RawMessage) (text string, ok bool, err error)
}

// Tool is the agent tool that raises a kind's card. Description and Schema
// are empty when another package defines the tool (request_takeover belongs
// to the browser).
type Tool struct {
	Name        string
	Description string
	Schema      string // JSON Schema of its input
}

// SetVariable stores a secret as a workspace variable.
type SetVariable func(ctx context.Context, name, value string) error

// Def is what a kind's file writes: its checks and texts on its own request
// type Req and stored answer type Ans. Define turns it into a Kind.
type Def[Req, Ans any] struct {
	Name string
	Tool Tool
	// Check validates and normalises a request, whoever raised it.
	Check func(*Req) error
	// CheckAgent, when set, is a further check on an agent's request.
	CheckAgent func(*Req) error
	// CheckApp, when set, is a further check on a request the app raises
	// without a run; AgentOnly refuses such requests altogether.
	CheckApp  func(*Req) error
	AgentOnly bool
	Summarize func(Req) (title, body string)
	// Reply reads and checks the person's answer (see Kind.Answer).
	Reply func(ctx context.Context, req Req, decode func(any) error, set SetVariable) (Ans, error)
	// Text, when set, is what the agent reads back from an answer.
	Text func(Req, Ans) string
}

// Define makes a Kind of d.
func Define[Req, Ans any](d Def[Req, Ans]) Kind { return defined[Req, Ans]{d} }

type defined[Req, Ans any] struct{ d Def[Req, Ans] }

func (k defined[Req, Ans]) Name() string { return k.d.Name }
func (k defined[Req, Ans]) Tool() Tool   { return k.d.Tool }

func (k defined[Req, Ans]) FromAgent(decode func(any) error) (any, error) {
	var r Req
	if err := decode(&r); err != nil {
		return nil, err
	}
	if k.d.CheckAgent != nil {
		if err := k.d.CheckAgent(&r); err != nil {
			return nil, err
		}
	}
	return r, k.d.Check(&r)
}

func (k defined[Req, Ans]) FromApp(request any) (any, error) {
	r, ok := request.(Req)
	if !ok || k.d.AgentOnly {
		return nil, fault.Invalid("a %s card cannot carry a %T; use the request type of its kind", k.d.Name, request)
	}
	if k.d.CheckApp != nil {
		if err := k.d.CheckApp(&r); err != nil {
			return nil, err
		}
	}
	return r, k.d.Check(&r)
}

func (k defined[Req, Ans]) Request(raw json.RawMessage) (any, error) { return Decode[Req](raw) }

// request returns the kind's request held in v.
func (k defined[Req, Ans]) request(v any) (Req, error) {
	switch r := v.(type) {
	case Req:
		return r, nil
	case *Req:
		return *r, nil
	}
	var zero Req
	return zero, fmt.Errorf("a %s card holds a %T, not its request type", k.d.Name, v)
}

func (k defined[Req, Ans]) Summary(request any) (string, string, error) {
	r, err := k.request(request)
	if err != nil {
		return "", "", err
	}
	title, body := k.d.Summarize(r)
	return title, body, nil
}

func (k defined[Req, Ans]) Answer(ctx context.Context, request any, decode func(any) error, set SetVariable) (any, error) {
	r, err := k.request(request)
	if err != nil {
		return nil, err
	}
	return k.d.Reply(ctx, r, decode, set)
}

func (k defined[Req, Ans]) AnswerText(request, answer json.RawMessage) (string, bool, error) {
	if k.d.Text == nil {
		return "", false, nil
	}
	r, err := Decode[Req](request)
	if err != nil {
		return "", true, err
	}
	a, err := Decode[Ans](answer)
	if err != nil {
		return "", true, err
	}
	return k.d.Text(r, a), true, nil
}

// Decode reads stored card data (a request or an answer) into its type.
func Decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("decode a %T: %w", v, err)
	}
	return v, nil
}
