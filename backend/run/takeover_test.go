package run_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// hands is an agent's browser as a takeover card sees it: a source with
// request_takeover and a guide, and the browsers the runtime hands back.
type hands struct {
	mu       sync.Mutex
	url      string
	running  bool
	handBack []string // agents whose browser was handed back
}

func (h *hands) Tools(_ context.Context, a agent.Agent) ([]tool.Tool, error) {
	return []tool.Tool{{Name: "request_takeover", Family: "browser", Description: "Ask the person to take over.",
		Schema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}},"required":["reason"]}`),
		Pause: func(in json.RawMessage) (string, any, error) {
			var r pause.TakeoverRequest
			json.Unmarshal(in, &r)
			r.URL = h.url
			return pause.Takeover, r, r.Check()
		}}}, nil
}

func (h *hands) Guide(a agent.Agent) string {
	return "## Browser\n- request_takeover when a page needs the person."
}

func (h *hands) HandBack(agentID string) (string, string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handBack = append(h.handBack, agentID)
	return h.url, "Inbox", h.running
}

func TestTakeoverCard(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string
		running bool
		want    string // in the tool result the model reads
	}{
		{"handed back", `{"handed_back":true}`, true, "The person handed the browser back; the page is now https://mail.example/inbox (Inbox)."},
		{"browser gone meanwhile", `{"handed_back":true}`, false, "your browser is no longer open"},
		{"dismissed", `{"dismiss":true,"note":"do it later"}`, true, "dismissed the card without answering. They wrote: do it later"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, n := hitlFixture(t)
			h := &hands{url: "https://mail.example/inbox", running: tc.running}
			f.svc = run.NewService(run.Deps{DB: f.db, Workspace: "ws", Agents: f.agents, Boxes: f.boxes, Models: newModels(t, f.fake, "anthropic"),
				Bus: f.bus, SharedDir: filepath.Join(f.dir, "shared"), SharedDB: filepath.Join(f.dir, "shared.db"),
				Vars: f.vars, Notifier: f.notes, Sources: []run.ToolSource{h}, Browsers: h}, run.Config{})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { f.svc.Serve(ctx); close(done) }()
			defer func() { cancel(); <-done }()

			a := f.careful("Mailer", "files")
			f.fake.Script(llmtest.Reply{Text: "I need you.", ToolCalls: []llmtest.ToolCall{{ID: "t1", Name: "request_takeover", Args: `{"reason":"Solve the captcha"}`}}},
				llmtest.Text("Back at it."))
			r := f.say(a, "read my mail")
			if r.Status != run.Paused {
				t.Fatalf("run = %s %s, want paused", r.Status, r.Error)
			}
			if sys := f.fake.Requests()[0].System; !strings.Contains(sys, "- request_takeover when a page needs the person.") {
				t.Errorf("the source's guide is not in the prompt:\n%s", sys)
			}
			p := f.openPause(r.ID)
			var req pause.TakeoverRequest
			json.Unmarshal(p.Request, &req)
			if p.Kind != pause.Takeover || req.Reason != "Solve the captcha" || req.URL != h.url {
				t.Fatalf("card = %s %s", p.Kind, p.Request)
			}
			if got := n.list(); len(got) != 1 || got[0].Kind != pause.Takeover || got[0].Title != "Needs your hands in its browser" || got[0].Body != "Solve the captcha" {
				t.Fatalf("notices = %+v", got)
			}
			if _, err := f.svc.Answer(context.Background(), p.ID, json.RawMessage(`{"handed_back":false}`)); err == nil {
				t.Fatal("a takeover card took handed_back false")
			}
			if r := f.answer(p, tc.answer); r.Status != run.Done || r.Output != "Back at it." {
				t.Fatalf("after the answer: run = %s %q %s", r.Status, r.Output, r.Error)
			}
			got, isErr := lastToolResult(f.fake, "t1")
			if isErr || !strings.Contains(got, tc.want) {
				t.Fatalf("the model read %q, want it to contain %q", got, tc.want)
			}
			if len(h.handBack) != 1 || h.handBack[0] != a.ID {
				t.Fatalf("browsers handed back = %v, want the agent's once", h.handBack)
			}
		})
	}
}
