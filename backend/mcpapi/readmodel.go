package mcpapi

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
)

// roster is what list_agents and list_spaces answer from: the workspace's
// boxes and agents (without souls) as read at one revision of the
// workspace, and the answers encoded from them. It is current while the
// workspace's Revision is rev: every write of an agent or a box, here or
// applied by sync, publishes a change that moves it on, so the call after
// a change reads again. Neither tool shows anything live (runs, waits).
type roster struct {
	rev    uint64
	boxes  []box.Box
	agents []agent.Agent

	mu      sync.Mutex
	answers map[string]*answer // by tool and argument ("agents:" + space id)
}

// rosterSlot holds a workspace's current roster.
type rosterSlot struct{ p atomic.Pointer[roster] }

// rosters are the workspaces' slots, held weakly: a closed workspace's
// slot goes with it.
var rosters sync.Map // weak.Pointer[workspace.Workspace] → *rosterSlot

// rosterOf returns w's roster, reading it again if w changed since.
func rosterOf(ctx context.Context, w *workspace.Workspace) (*roster, error) {
	key := weak.Make(w)
	v, ok := rosters.Load(key)
	if !ok {
		var loaded bool
		if v, loaded = rosters.LoadOrStore(key, &rosterSlot{}); !loaded {
			runtime.AddCleanup(w, func(k weak.Pointer[workspace.Workspace]) { rosters.Delete(k) }, key)
		}
	}
	slot := v.(*rosterSlot)
	rev := w.Revision() // before the reads: a change during them moves it on
	if r := slot.p.Load(); r != nil && r.rev == rev {
		return r, nil
	}
	boxes, err := w.Boxes.List(ctx)
	if err != nil {
		return nil, err
	}
	agents, err := w.Agents.Roster(ctx)
	if err != nil {
		return nil, err
	}
	r := &roster{rev: rev, boxes: boxes, agents: agents, answers: map[string]*answer{}}
	for { // a slower read of an older revision does not replace a newer one
		old := slot.p.Load()
		if old != nil && old.rev > rev || slot.p.CompareAndSwap(old, r) {
			return r, nil
		}
	}
}

// answer returns the answer kept under key, encoding build's result the
// first time.
func (r *roster) answer(key string, build func() any) (*answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a := r.answers[key]; a != nil {
		return a, nil
	}
	a, err := newAnswer(build())
	if err != nil {
		return nil, err
	}
	r.answers[key] = a
	return a, nil
}

// answer is a tool's result encoded once and sent as it is by every call
// that returns it (see roster): handle puts it in the result as an
// encodedText, so neither the result nor its wire form is encoded again.
type answer struct {
	text string // the result, compact JSON
	wire []byte // the text content carrying it: {"type":"text","text":"…"}
}

func newAnswer(v any) (*answer, error) {
	var b strings.Builder
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	text := strings.TrimSuffix(b.String(), "\n")
	wire, err := json.Marshal(mcp.NewTextContent(text))
	if err != nil {
		return nil, err
	}
	return &answer{text: text, wire: wire}, nil
}

// MarshalJSON is the result itself, for callers that encode it (InProcess).
func (a *answer) MarshalJSON() ([]byte, error) { return []byte(a.text), nil }

// encodedText is a text content whose wire form is already encoded: mcp-go
// writes wire as it is (encoding/json only checks it) instead of escaping
// the text into the envelope again. Go code reading the result in process
// sees the TextContent.
type encodedText struct {
	mcp.TextContent
	wire []byte
}

func (c encodedText) MarshalJSON() ([]byte, error) { return c.wire, nil }
