package pause_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

func TestQuestionChecks(t *testing.T) {
	tests := []struct {
		name, req, answer, wantErr string
	}{
		{"two questions answered", `{"questions":[{"question":"A?","options":["x","y"]},{"question":"B?"}]}`, `{"answers":["x","free text"]}`, ""},
		{"no questions", `{"questions":[]}`, ``, "1 to 6"},
		{"seven options", `{"questions":[{"question":"A?","options":["1","2","3","4","5","6","7"]}]}`, ``, "at most 6"},
		{"empty question", `{"questions":[{"question":"  "}]}`, ``, "empty"},
		{"missing answer", `{"questions":[{"question":"A?"},{"question":"B?"}]}`, `{"answers":["x"]}`, "one answer per question"},
		{"blank answer", `{"questions":[{"question":"A?"}]}`, `{"answers":[" "]}`, "answers[0] is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q pause.QuestionRequest
			json.Unmarshal([]byte(tt.req), &q)
			err := q.Check()
			if err == nil && tt.answer != "" {
				var a pause.QuestionAnswer
				json.Unmarshal([]byte(tt.answer), &a)
				err = q.CheckAnswer(&a)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, fault.ErrInvalid)) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestApprovalChecks(t *testing.T) {
	var r pause.ApprovalRequest
	json.Unmarshal([]byte(`{"items":[{"title":"Run it","tool":"run_command","input":{"command":"ls"}},{"title":"Tell Bob"}]}`), &r)
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	if r.Items[0].ID != "a1" || r.Items[1].ID != "a2" || r.Items[1].Kind != pause.ItemText {
		t.Fatalf("normalised items = %+v", r.Items)
	}
	for _, tt := range []struct{ answer, wantErr string }{
		{`{"decisions":[{"id":"a1","approved":true}]}`, `"a2" (Tell Bob) has no decision`},
		{`{"decisions":[{"id":"a1","approved":true},{"id":"a1","approved":false},{"id":"a2"}]}`, "decided twice"},
		{`{"decisions":[{"id":"a9","approved":true}]}`, "does not have"},
		{`{"decisions":[{"id":"a1","approved":true},{"id":"a2","approved":false}]}`, ""},
	} {
		var a pause.ApprovalAnswer
		json.Unmarshal([]byte(tt.answer), &a)
		err := r.CheckAnswer(&a)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s: got %v, want %q", tt.answer, err, tt.wantErr)
		}
	}
}

func TestTakeoverChecks(t *testing.T) {
	tests := []struct {
		name, req, answer, wantErr string
	}{
		{"handed back", `{"reason":"  a captcha  ","url":"https://example.com/login"}`, `{"handed_back":true}`, ""},
		{"no reason", `{"reason":" ","url":"https://example.com"}`, ``, "reason is empty"},
		{"long reason", `{"reason":"` + strings.Repeat("x", 2001) + `"}`, ``, "keep it under"},
		{"not handed back", `{"reason":"sign in"}`, `{"handed_back":false}`, "handed_back"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r pause.TakeoverRequest
			json.Unmarshal([]byte(tt.req), &r)
			err := r.Check()
			if err == nil && tt.answer != "" {
				var a pause.TakeoverAnswer
				json.Unmarshal([]byte(tt.answer), &a)
				err = r.CheckAnswer(&a)
			}
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, fault.ErrInvalid)) {
				t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
			}
			if tt.wantErr == "" && r.Reason != "a captcha" {
				t.Fatalf("reason = %q, want it trimmed", r.Reason)
			}
		})
	}
}

func TestConnectorSecretVariable(t *testing.T) {
	r := pause.ConnectorRequest{Connector: "Acme CRM (EU)"}
	if got := r.SecretVariable("api_token"); got != "ACME_CRM_EU_API_TOKEN" || !pause.ValidVariable(got) {
		t.Fatalf("SecretVariable = %q", got)
	}
	r = pause.ConnectorRequest{Connector: "42 things"}
	if got := r.SecretVariable("key"); !pause.ValidVariable(got) {
		t.Fatalf("SecretVariable = %q is not a valid variable name", got)
	}
}

// FuzzPause feeds any JSON to every card's request and answer checks: they
// never panic, and what passes keeps the card's limits.
func FuzzPause(f *testing.F) {
	f.Add(`{"questions":[{"question":"A?","options":["x"]}]}`, `{"answers":["x"]}`)
	f.Add(`{"items":[{"title":"t","tool":"run_command","input":{}}]}`, `{"decisions":[{"id":"a1","approved":true}]}`)
	f.Add(`{"connector":"X","fields":[{"name":"token","type":"secret","required":true}]}`, `{"values":{"token":"abcd"}}`)
	f.Add(`{"variable":"API_KEY"}`, `{"value":"abcd"}`)
	f.Add(`{"reason":"a captcha","url":"https://example.com"}`, `{"handed_back":true}`)
	f.Add(`{"scope":"agent","period":"day","unit":"usd","owner":"agent","limit":5,"spent":4.9,"need":0.2}`, `{"choice":"raise","amount":10}`)
	f.Fuzz(func(t *testing.T, req, answer string) {
		var b pause.BudgetRequest
		if json.Unmarshal([]byte(req), &b) == nil && b.Check() == nil {
			var a pause.BudgetAnswer
			if json.Unmarshal([]byte(answer), &a) == nil && b.CheckAnswer(&a) == nil {
				switch {
				case a.Choice == pause.BudgetAllow && !(a.Amount > 0):
					t.Fatalf("allow %v passed", a.Amount)
				case a.Choice == pause.BudgetRaise && !(a.Amount > b.Spent):
					t.Fatalf("raise to %v passed with %v spent", a.Amount, b.Spent)
				case a.Choice == pause.BudgetStop && a.Amount != 0:
					t.Fatalf("stop with amount %v", a.Amount)
				case a.Choice != pause.BudgetAllow && a.Choice != pause.BudgetRaise && a.Choice != pause.BudgetStop:
					t.Fatalf("choice %q passed", a.Choice)
				}
			}
		}
		var q pause.QuestionRequest
		if json.Unmarshal([]byte(req), &q) == nil && q.Check() == nil {
			if n := len(q.Questions); n < 1 || n > pause.MaxQuestions {
				t.Fatalf("%d questions passed", n)
			}
			var a pause.QuestionAnswer
			if json.Unmarshal([]byte(answer), &a) == nil && q.CheckAnswer(&a) == nil && len(a.Answers) != len(q.Questions) {
				t.Fatal("answer count differs from question count")
			}
		}
		var ap pause.ApprovalRequest
		if json.Unmarshal([]byte(req), &ap) == nil && ap.Check() == nil {
			var a pause.ApprovalAnswer
			if json.Unmarshal([]byte(answer), &a) == nil && ap.CheckAnswer(&a) == nil {
				for _, it := range ap.Items {
					if _, ok := a.Decision(it.ID); !ok {
						t.Fatalf("item %s passed without a decision", it.ID)
					}
				}
			}
		}
		var c pause.ConnectorRequest
		if json.Unmarshal([]byte(req), &c) == nil && c.Check() == nil {
			for _, fl := range c.Fields {
				if !pause.ValidVariable(c.SecretVariable(fl.Name)) {
					t.Fatalf("field %q gives variable %q", fl.Name, c.SecretVariable(fl.Name))
				}
			}
			var a pause.ConnectorAnswer
			if json.Unmarshal([]byte(answer), &a) == nil {
				c.CheckAnswer(&a)
			}
		}
		var cr pause.CredentialRequest
		if json.Unmarshal([]byte(req), &cr) == nil && cr.Check() == nil && !pause.ValidVariable(cr.Variable) {
			t.Fatalf("credential variable %q passed", cr.Variable)
		}
		var tr pause.TakeoverRequest
		if json.Unmarshal([]byte(req), &tr) == nil && tr.Check() == nil {
			if strings.TrimSpace(tr.Reason) == "" {
				t.Fatal("a takeover card without a reason passed")
			}
			var a pause.TakeoverAnswer
			if json.Unmarshal([]byte(answer), &a) == nil && tr.CheckAnswer(&a) == nil && !a.HandedBack {
				t.Fatal("a takeover answer without handed_back passed")
			}
		}
	})
}
