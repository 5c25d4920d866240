// Package pause defines the five ways an agent hands a decision back to a
// person — a question, an approval, a connector to set up, a credential to
// fill, a browser to take over — as plain values: what the agent asks, what the person may answer,
// the checks on both, and the text the agent reads back. Storing a pause and
// resuming its run belong to package run; this package holds no state.
package pause

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Kinds of pause.
const (
	Question   = "question"
	Approval   = "approval"
	Connector  = "connector"
	Credential = "credential"
	Takeover   = "takeover"
)

// Statuses of a pause.
const (
	Open      = "open"
	Answered  = "answered"
	Dismissed = "dismissed"
	Cancelled = "cancelled"
)

// Limits of a card, so it stays something a person can answer at a glance.
const (
	MaxQuestions = 6
	MaxOptions   = 6
	MaxItems     = 20
	MaxFields    = 20
	maxText      = 2000     // a question, title or description
	maxDetail    = 64 << 10 // an approval item's detail (a diff can be long)
	maxAnswer    = 8000     // one free-text answer
	MaxValue     = 64 << 10 // a secret value
	maxLabel     = 200
)

// QuestionRequest is 1 to 6 questions in one card.
type QuestionRequest struct {
	Questions []QuestionItem `json:"questions"`
}

// QuestionItem is one question with its suggested answers.
type QuestionItem struct {
	Question string   `json:"question"`
	Header   string   `json:"header"`
	Options  []string `json:"options"`
	Multiple bool     `json:"multiple"`
}

// QuestionAnswer holds one answer per question, in order.
type QuestionAnswer struct {
	Answers []string `json:"answers"`
}

// ApprovalRequest lists actions for the person to approve or decline one by
// one. Policy is set when the runtime raised it because of an ask-first
// switch rather than the agent asking.
type ApprovalRequest struct {
	Title  string         `json:"title"`
	Reason string         `json:"reason"`
	Policy bool           `json:"policy"`
	Items  []ApprovalItem `json:"items"`
}

// Item kinds say how the detail is shown.
const (
	ItemCommand = "command"
	ItemTarget  = "target"
	ItemDiff    = "diff"
	ItemText    = "text"
)

// ApprovalItem is one action. When Tool is set the runtime performs it on
// approval (as a tool call recorded as approved) and never on decline.
type ApprovalItem struct {
	ID     string          `json:"id"`
	Title  string          `json:"title"`
	Kind   string          `json:"kind"`
	Detail string          `json:"detail"`
	Tool   string          `json:"tool"`
	Input  json.RawMessage `json:"input"`
}

// ApprovalAnswer decides every item.
type ApprovalAnswer struct {
	Decisions []Decision `json:"decisions"`
}

// Decision is the person's verdict on one item.
type Decision struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Note     string `json:"note"`
}

// ConnectorRequest asks the person to set up an integration; it carries the
// connector's setup form.
type ConnectorRequest struct {
	Connector   string  `json:"connector"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Fields      []Field `json:"fields"`
}

// Field types of a setup form.
const (
	FieldText   = "text"
	FieldURL    = "url"
	FieldSecret = "secret"
	FieldSelect = "select"
)

// Field is one input of a setup form.
type Field struct {
	Name        string   `json:"name"`
	Label       string   `json:"label"`
	Type        string   `json:"type"`
	Required    bool     `json:"required"`
	Options     []string `json:"options"`
	Placeholder string   `json:"placeholder"`
	Help        string   `json:"help"`
}

// ConnectorAnswer is the filled form. Once stored, a secret field's value is
// replaced by the reference of the variable it went into ("${NAME}").
type ConnectorAnswer struct {
	Values map[string]string `json:"values"`
}

// CredentialRequest asks for one secret, stored as the named variable.
type CredentialRequest struct {
	Variable    string `json:"variable"`
	Label       string `json:"label"`
	Description string `json:"description"`
	URL         string `json:"url"`
}

// CredentialAnswer is what is kept of a filled credential: never the value.
type CredentialAnswer struct {
	Variable string `json:"variable"`
	Filled   bool   `json:"filled"`
}

// TakeoverRequest asks the person to take over the agent's browser (a
// captcha, a sign-in, a two-factor code). URL is the page it shows, filled
// in by the browser tool, not by the model.
type TakeoverRequest struct {
	Reason string `json:"reason"`
	URL    string `json:"url"`
}

// TakeoverAnswer says the person handed the browser back.
type TakeoverAnswer struct {
	HandedBack bool `json:"handed_back"`
}

// DismissAnswer records that the person closed the card without answering.
type DismissAnswer struct {
	Dismissed bool   `json:"dismissed"`
	Note      string `json:"note"`
}

var (
	variableName = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)
	fieldName    = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	nonWord      = regexp.MustCompile(`[^A-Za-z0-9]+`)
)

// ValidVariable reports whether name can name a workspace variable.
func ValidVariable(name string) bool { return variableName.MatchString(name) }

func text(field, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case required && s == "":
		return "", fault.Invalid("%s is empty; write it", field)
	case utf8.RuneCountInString(s) > max:
		return "", fault.Invalid("%s is %d characters; keep it under %d", field, utf8.RuneCountInString(s), max)
	case !utf8.ValidString(s):
		return "", fault.Invalid("%s is not valid UTF-8 text", field)
	}
	return s, nil
}

// Check validates and normalises a question card.
func (q *QuestionRequest) Check() error {
	if n := len(q.Questions); n == 0 || n > MaxQuestions {
		return fault.Invalid("ask 1 to %d questions in one card (got %d); batch what you need to know, and ask the rest later", MaxQuestions, n)
	}
	for i := range q.Questions {
		it := &q.Questions[i]
		var err error
		if it.Question, err = text(fmt.Sprintf("questions[%d].question", i), it.Question, maxText, true); err != nil {
			return err
		}
		if it.Header, err = text(fmt.Sprintf("questions[%d].header", i), it.Header, maxLabel, false); err != nil {
			return err
		}
		if len(it.Options) > MaxOptions {
			return fault.Invalid("questions[%d] has %d suggested answers; give at most %d (the person can always type another)", i, len(it.Options), MaxOptions)
		}
		if it.Options == nil {
			it.Options = []string{}
		}
		for j := range it.Options {
			if it.Options[j], err = text(fmt.Sprintf("questions[%d].options[%d]", i, j), it.Options[j], maxLabel, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckAnswer validates an answer to q: one non-empty answer per question.
func (q QuestionRequest) CheckAnswer(a *QuestionAnswer) error {
	if len(a.Answers) != len(q.Questions) {
		return fault.Invalid("give one answer per question: %d questions, %d answers", len(q.Questions), len(a.Answers))
	}
	for i := range a.Answers {
		var err error
		if a.Answers[i], err = text(fmt.Sprintf("answers[%d]", i), a.Answers[i], maxAnswer, true); err != nil {
			return err
		}
	}
	return nil
}

// Check validates and normalises an approval card, numbering the items that
// have no id.
func (r *ApprovalRequest) Check() error {
	var err error
	if r.Title, err = text("title", r.Title, maxText, false); err != nil {
		return err
	}
	if r.Reason, err = text("reason", r.Reason, maxText, false); err != nil {
		return err
	}
	if n := len(r.Items); n == 0 || n > MaxItems {
		return fault.Invalid("list 1 to %d actions to approve (got %d)", MaxItems, n)
	}
	seen := map[string]bool{}
	for i := range r.Items {
		it := &r.Items[i]
		if it.ID == "" {
			it.ID = fmt.Sprintf("a%d", i+1)
		}
		if seen[it.ID] {
			return fault.Invalid("items[%d] repeats id %q", i, it.ID)
		}
		seen[it.ID] = true
		if it.Title, err = text(fmt.Sprintf("items[%d].title", i), it.Title, maxText, true); err != nil {
			return err
		}
		if it.Kind == "" {
			it.Kind = ItemText
		}
		if !slices.Contains([]string{ItemCommand, ItemTarget, ItemDiff, ItemText}, it.Kind) {
			return fault.Invalid("items[%d].kind %q is unknown; use command, target, diff or text", i, it.Kind)
		}
		if len(it.Detail) > maxDetail {
			return fault.Invalid("items[%d].detail is %d bytes; keep it under %d", i, len(it.Detail), maxDetail)
		}
		if it.Tool == "" && len(it.Input) > 0 && string(it.Input) != "null" {
			return fault.Invalid("items[%d] has an input but no tool; name the tool to run on approval, or drop the input", i)
		}
		if it.Tool != "" && (len(it.Input) == 0 || string(it.Input) == "null") {
			it.Input = json.RawMessage(`{}`)
		}
		if it.Tool != "" && !json.Valid(it.Input) {
			return fault.Invalid("items[%d].input is not valid JSON", i)
		}
	}
	return nil
}

// CheckAnswer validates decisions: every item decided exactly once.
func (r ApprovalRequest) CheckAnswer(a *ApprovalAnswer) error {
	got := map[string]bool{}
	for i, d := range a.Decisions {
		if !slices.ContainsFunc(r.Items, func(it ApprovalItem) bool { return it.ID == d.ID }) {
			return fault.Invalid("decisions[%d] is for item %q, which this card does not have", i, d.ID)
		}
		if got[d.ID] {
			return fault.Invalid("item %q is decided twice", d.ID)
		}
		got[d.ID] = true
		var err error
		if a.Decisions[i].Note, err = text(fmt.Sprintf("decisions[%d].note", i), d.Note, maxAnswer, false); err != nil {
			return err
		}
	}
	for _, it := range r.Items {
		if !got[it.ID] {
			return fault.Invalid("approve or decline every item; %q (%s) has no decision", it.ID, it.Title)
		}
	}
	return nil
}

// Decision returns the decision on item id.
func (a ApprovalAnswer) Decision(id string) (Decision, bool) {
	for _, d := range a.Decisions {
		if d.ID == id {
			return d, true
		}
	}
	return Decision{}, false
}

// Check validates and normalises a connector card.
func (r *ConnectorRequest) Check() error {
	var err error
	if r.Connector, err = text("connector", r.Connector, maxLabel, true); err != nil {
		return err
	}
	if r.Title, err = text("title", r.Title, maxLabel, false); err != nil {
		return err
	}
	if r.Title == "" {
		r.Title = "Connect " + r.Connector
	}
	if r.Description, err = text("description", r.Description, maxText, false); err != nil {
		return err
	}
	if len(r.Fields) > MaxFields {
		return fault.Invalid("the setup form has %d fields; keep it to %d", len(r.Fields), MaxFields)
	}
	seen := map[string]bool{}
	for i := range r.Fields {
		f := &r.Fields[i]
		if !fieldName.MatchString(f.Name) {
			return fault.Invalid("fields[%d].name %q must be lowercase letters, digits and _ (e.g. api_token)", i, f.Name)
		}
		if seen[f.Name] {
			return fault.Invalid("fields[%d] repeats name %q", i, f.Name)
		}
		seen[f.Name] = true
		if f.Label, err = text(fmt.Sprintf("fields[%d].label", i), f.Label, maxLabel, false); err != nil {
			return err
		}
		if f.Label == "" {
			f.Label = f.Name
		}
		if f.Type == "" {
			f.Type = FieldText
		}
		if !slices.Contains([]string{FieldText, FieldURL, FieldSecret, FieldSelect}, f.Type) {
			return fault.Invalid("fields[%d].type %q is unknown; use text, url, secret or select", i, f.Type)
		}
		if f.Type == FieldSelect && len(f.Options) == 0 {
			return fault.Invalid("fields[%d] is a select without options; list them", i)
		}
		if f.Options == nil {
			f.Options = []string{}
		}
	}
	return nil
}

// SecretVariable names the variable a connector's secret field is stored in.
func (r ConnectorRequest) SecretVariable(field string) string {
	base := strings.Trim(nonWord.ReplaceAllString(r.Connector, "_"), "_")
	name := strings.ToUpper(strings.Trim(base+"_"+field, "_"))
	if name == "" || name[0] < 'A' || name[0] > 'Z' {
		name = "C_" + name
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// CheckAnswer validates a filled form: required fields present, URLs and
// choices valid, no unknown fields.
func (r ConnectorRequest) CheckAnswer(a *ConnectorAnswer) error {
	if a.Values == nil {
		a.Values = map[string]string{}
	}
	for name := range a.Values {
		if !slices.ContainsFunc(r.Fields, func(f Field) bool { return f.Name == name }) {
			return fault.Invalid("the form has no field %q", name)
		}
	}
	for _, f := range r.Fields {
		v := a.Values[f.Name]
		if f.Type != FieldSecret {
			v = strings.TrimSpace(v)
		}
		switch {
		case v == "" && f.Required:
			return fault.Invalid("%s is required", f.Label)
		case v == "":
			delete(a.Values, f.Name)
			continue
		case len(v) > MaxValue:
			return fault.Invalid("%s is too long (%d bytes)", f.Label, len(v))
		case f.Type == FieldURL && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://"):
			return fault.Invalid("%s must be a URL starting with http:// or https://", f.Label)
		case f.Type == FieldSelect && !slices.Contains(f.Options, v):
			return fault.Invalid("%s must be one of %v", f.Label, f.Options)
		case f.Type == FieldSecret && len(v) < 4:
			return fault.Invalid("%s is shorter than 4 characters, too short to keep out of outputs reliably", f.Label)
		}
		a.Values[f.Name] = v
	}
	return nil
}

// Check validates a credential card.
func (r *CredentialRequest) Check() error {
	r.Variable = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r.Variable), "${"), "}"))
	if !ValidVariable(r.Variable) {
		return fault.Invalid("variable %q must be uppercase letters, digits and _, starting with a letter (e.g. STRIPE_API_KEY)", r.Variable)
	}
	var err error
	if r.Label, err = text("label", r.Label, maxLabel, false); err != nil {
		return err
	}
	if r.Label == "" {
		r.Label = r.Variable
	}
	if r.Description, err = text("description", r.Description, maxText, false); err != nil {
		return err
	}
	if r.URL, err = text("url", r.URL, maxText, false); err != nil {
		return err
	}
	if r.URL != "" && !strings.HasPrefix(r.URL, "https://") && !strings.HasPrefix(r.URL, "http://") {
		return fault.Invalid("url %q must start with https:// (where the person gets the key)", r.URL)
	}
	return nil
}

// CheckValue validates a credential's value.
func CheckValue(v string) error {
	switch {
	case len(v) < 4:
		return fault.Invalid("the value is shorter than 4 characters, too short to keep out of outputs reliably")
	case len(v) > MaxValue:
		return fault.Invalid("the value is %d bytes; the limit is %d", len(v), MaxValue)
	case !utf8.ValidString(v):
		return fault.Invalid("the value is not valid UTF-8 text")
	}
	return nil
}

// Check validates a takeover card.
func (r *TakeoverRequest) Check() error {
	var err error
	if r.Reason, err = text("reason", r.Reason, maxText, true); err != nil {
		return err
	}
	if r.URL, err = text("url", r.URL, maxText, false); err != nil {
		return err
	}
	return nil
}

// CheckAnswer validates the hand-back: the only answer is handed_back true.
func (r TakeoverRequest) CheckAnswer(a *TakeoverAnswer) error {
	if !a.HandedBack {
		return fault.Invalid(`answer a takeover card with {"handed_back": true} once you are done in the browser, or dismiss it`)
	}
	return nil
}
