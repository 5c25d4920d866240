package run_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

func TestAskRaisesACardWithoutAModelTurn(t *testing.T) {
	f, vars, n := hitl(t)
	a := f.careful("Installed", "human")
	ctx := context.Background()

	p, err := f.svc.Ask(ctx, a.ID, pause.Credential, pause.CredentialRequest{Variable: "${ACME_KEY}", Label: "Acme key", URL: "https://acme.example/keys"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.svc.Get(ctx, p.RunID)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := f.svc.Session(ctx, r.SessionID)
	if r.Status != run.Paused || r.Source != run.SourceTemplate || sess.Kind != run.SourceTemplate {
		t.Fatalf("run %s from %s in a %s session, want paused from template in a template session", r.Status, r.Source, sess.Kind)
	}
	if p.Status != pause.Open || p.Kind != pause.Credential || !strings.Contains(string(p.Request), `"variable":"ACME_KEY"`) {
		t.Fatalf("pause = %s %s %s", p.Status, p.Kind, p.Request)
	}
	if p.Automated {
		t.Error("a card raised by the person's own install is marked automated")
	}
	got := n.list()
	if len(got) != 1 || got[0].PauseID != p.ID || got[0].Kind != pause.Credential {
		t.Fatalf("notices = %+v, want one credential notice for the card", got)
	}

	// A second card for the same agent opens its own run: one open card per run.
	q, err := f.svc.Ask(ctx, a.ID, pause.Question, pause.QuestionRequest{Questions: []pause.QuestionItem{{Question: "Which region?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if q.RunID == p.RunID || q.SessionID == p.SessionID {
		t.Fatal("the second card shares the first one's run or session")
	}

	// Answering stores the value and ends the run; no model is called.
	if _, err := f.svc.Answer(ctx, p.ID, json.RawMessage(`{"value":"acme-secret-1234"}`)); err != nil {
		t.Fatal(err)
	}
	if v, _ := vars.Lookup("ACME_KEY"); v != "acme-secret-1234" {
		t.Fatalf("ACME_KEY = %q", v)
	}
	if _, err := f.svc.Answer(ctx, q.ID, json.RawMessage(`{"dismiss":true}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		want run.Status
	}{{p.RunID, run.Done}, {q.RunID, run.Cancelled}} {
		r, _ := f.svc.Get(ctx, tc.id)
		if r.Status != tc.want || r.EndedAt == nil {
			t.Errorf("run %s = %s, want %s and ended", tc.id, r.Status, tc.want)
		}
	}
	if reqs := f.fake.Requests(); len(reqs) != 0 {
		t.Fatalf("the model was called %d times for cards raised without one", len(reqs))
	}
}

func TestAskRefusesMismatchedRequests(t *testing.T) {
	f, _, _ := hitl(t)
	a := f.careful("Installed", "human")
	for name, tc := range map[string]struct {
		kind string
		req  any
	}{
		"wrong type":          {pause.Credential, pause.QuestionRequest{Questions: []pause.QuestionItem{{Question: "x"}}}},
		"pointer":             {pause.Credential, &pause.CredentialRequest{Variable: "X_KEY"}},
		"bad variable":        {pause.Credential, pause.CredentialRequest{Variable: "lower"}},
		"takeover":            {pause.Takeover, pause.TakeoverRequest{Reason: "x"}},
		"approval with tools": {pause.Approval, pause.ApprovalRequest{Items: []pause.ApprovalItem{{Title: "t", Tool: "run_command"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := f.svc.Ask(context.Background(), a.ID, tc.kind, tc.req); !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("got %v, want invalid", err)
			}
		})
	}
	runs, _ := f.svc.List(context.Background(), run.ListOptions{AgentID: a.ID})
	if len(runs) != 0 {
		t.Fatalf("refused cards left %d runs behind", len(runs))
	}
}
