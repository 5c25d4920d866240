package run_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// send sends a message and waits for its run to end.
func (f *fixture) send(req run.SendRequest) run.Run {
	f.t.Helper()
	r, err := f.svc.Send(context.Background(), req)
	if err != nil {
		f.t.Fatalf("send %+v: %v", req, err)
	}
	return f.wait(r.ID)
}

// Without a session a message goes to the agent's conversation of its
// source's kind (chat: the chat session), opened on the first message; a
// given session is used when it is the agent's, and refused when not.
func TestSendChoosesTheSession(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	ctx := context.Background()
	a, other := f.agent("Ada"), f.agent("Bo")
	f.fake.Script(llmtest.Text("1"), llmtest.Text("2"), llmtest.Text("3"), llmtest.Text("4"), llmtest.Text("5"), llmtest.Text("6"))

	first := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceChat, Input: "hello"})
	chat, err := f.svc.ChatSession(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if first.SessionID != chat.ID || first.Source != run.SourceChat || first.Status != run.Done {
		t.Fatalf("first chat message = %s in %s (%s), want done in the chat session %s", first.Source, first.SessionID, first.Status, chat.ID)
	}
	if again := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceChat, Input: "again"}); again.SessionID != chat.ID {
		t.Errorf("second chat message in %s, want the chat session %s", again.SessionID, chat.ID)
	}
	steps, _ := f.svc.Steps(ctx, first.ID)
	if !strings.Contains(string(steps[0].Data), `"from":"you"`) {
		t.Errorf("a chat message's input step = %s, want it from you", steps[0].Data)
	}

	api := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceAPI, Input: "from the api"})
	if sess, _ := f.svc.Session(ctx, api.SessionID); api.SessionID == chat.ID || sess.Kind != run.SourceAPI {
		t.Fatalf("API message in %s (kind %q), want a session of its own of kind api", api.SessionID, sess.Kind)
	}
	if same := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceAPI, Input: "more"}); same.SessionID != api.SessionID {
		t.Errorf("second API message in %s, want the same API session %s", same.SessionID, api.SessionID)
	}
	fresh := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceAPI, NewSession: true, Input: "start over"})
	if fresh.SessionID == api.SessionID || fresh.SessionID == chat.ID {
		t.Errorf("new_session message in %s, want a new session", fresh.SessionID)
	}
	if given := f.send(run.SendRequest{AgentID: a.ID, SessionID: api.SessionID, Source: run.SourceChat, Input: "here"}); given.SessionID != api.SessionID {
		t.Errorf("message to session %s went to %s", api.SessionID, given.SessionID)
	}

	otherChat, _ := f.svc.ChatSession(ctx, other.ID)
	for name, c := range map[string]struct {
		req  run.SendRequest
		want error
	}{
		"another agent's session": {run.SendRequest{AgentID: a.ID, SessionID: otherChat.ID, Source: run.SourceChat, Input: "x"}, fault.ErrInvalid},
		"unknown session":         {run.SendRequest{AgentID: a.ID, SessionID: "ses_nope", Source: run.SourceChat, Input: "x"}, fault.ErrNotFound},
		"unknown agent":           {run.SendRequest{AgentID: "agt_nope", Source: run.SourceChat, Input: "x"}, fault.ErrNotFound},
		"session and new session": {run.SendRequest{AgentID: a.ID, SessionID: chat.ID, NewSession: true, Source: run.SourceChat, Input: "x"}, fault.ErrInvalid},
		"automation source":       {run.SendRequest{AgentID: a.ID, Source: run.SourceSchedule, Input: "x"}, fault.ErrInvalid},
	} {
		if _, err := f.svc.Send(ctx, c.req); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if runs, _ := f.svc.List(ctx, run.ListOptions{SessionID: otherChat.ID}); len(runs) != 0 {
		t.Errorf("the other agent's session got %d runs, want none", len(runs))
	}
}

// While a card is open in a conversation a message to it is refused, with
// what to do, and starts nothing; once the card is answered it goes through.
func TestSendRefusedWhileACardIsOpen(t *testing.T) {
	f := setup(t, "openai", run.Config{})
	ctx := context.Background()
	a := f.agent("Ada")
	chat, _ := f.svc.ChatSession(ctx, a.ID)
	asked, p, err := f.svc.StartScripted(ctx, a.ID, chat.ID, run.ScriptedCard{
		Input: "set me up", Text: "One question first.", Kind: pause.Question,
		Call:    run.ToolCall{ID: "q", Name: "ask_question"},
		Request: pause.QuestionRequest{Questions: []pause.QuestionItem{{Question: "Which team?", Options: []string{"A", "B"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, src := range []string{run.SourceChat, run.SourceAPI} {
		_, err := f.svc.Send(ctx, run.SendRequest{AgentID: a.ID, SessionID: chat.ID, Source: src, Input: "are you there?"})
		if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "answer or dismiss the card in the Rerun app first") {
			t.Errorf("%s message while a card is open: %v, want a conflict saying to answer the card", src, err)
		}
	}
	if _, err := f.svc.Send(ctx, run.SendRequest{AgentID: a.ID, Source: run.SourceChat, Input: "no session given"}); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("chat message to the default session while its card is open: %v, want a conflict", err)
	}
	if runs, _ := f.svc.List(ctx, run.ListOptions{SessionID: chat.ID}); len(runs) != 1 {
		t.Fatalf("session has %d runs after refused messages, want only the one with the card", len(runs))
	}

	// Another conversation of the agent is not held up.
	f.fake.Script(llmtest.Text("Elsewhere."))
	if r := f.send(run.SendRequest{AgentID: a.ID, Source: run.SourceChat, NewSession: true, Input: "elsewhere"}); r.Status != run.Done {
		t.Fatalf("message to a new session = %s %q, want done", r.Status, r.Error)
	}

	f.fake.Script(llmtest.Text("Team A it is."), llmtest.Text("Yes."))
	if done := f.answer(p, `{"answers":["A"]}`); done.ID != asked.ID || done.Status != run.Done {
		t.Fatalf("run after the answer = %s %q", done.Status, done.Error)
	}
	if r := f.send(run.SendRequest{AgentID: a.ID, SessionID: chat.ID, Source: run.SourceChat, Input: "are you there?"}); r.Status != run.Done || r.SessionID != chat.ID {
		t.Fatalf("message after the answer = %s in %s, want done in the chat session", r.Status, r.SessionID)
	}
}
