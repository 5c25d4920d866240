package pause

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Connector is the kind of a card asking the person to set up an
// integration with its setup form.
const Connector = "connector"

var connector = Define(Def[ConnectorRequest, ConnectorAnswer]{
	Name: Connector,
	Tool: Tool{
		Name: "request_connector",
		Description: "Ask the person to connect an integration you need, with its setup form (fields such as a URL, an account, an " +
			"API token). Your turn ends here. Secret fields go straight into workspace variables; you get back the other " +
			"values and, for each secret, the ${VARIABLE} to reference.",
		Schema: `{"type":"object","properties":{` +
			`"connector":{"type":"string","description":"The integration: an app's id from search_apps (its own setup form is used, leave fields out), or a name, e.g. GitHub."},` +
			`"title":{"type":"string","description":"The card's title (default: Connect <connector>)."},"description":{"type":"string","description":"What it is for."},` +
			`"fields":{"type":"array","description":"The setup form's fields.","maxItems":20,"items":{"type":"object","properties":{` +
			`"name":{"type":"string","description":"lowercase_id"},"label":{"type":"string"},` +
			`"type":{"type":"string","enum":["text","url","secret","select"]},"required":{"type":"boolean"},` +
			`"options":{"type":"array","items":{"type":"string"}},"placeholder":{"type":"string"},"help":{"type":"string"}` +
			`},"required":["name"],"additionalProperties":false}}},"required":["connector"],"additionalProperties":false}`,
	},
	Check: (*ConnectorRequest).Check,
	Summarize: func(c ConnectorRequest) (string, string) {
		return "Asks you to connect " + c.Connector, c.Description
	},
	// Secret fields go into variables; the stored answer names them.
	Reply: func(ctx context.Context, r ConnectorRequest, decode func(any) error, set SetVariable) (ConnectorAnswer, error) {
		var a ConnectorAnswer
		if err := decode(&a); err != nil {
			return a, err
		}
		if err := r.CheckAnswer(&a); err != nil {
			return a, err
		}
		for _, f := range r.Fields {
			v, ok := a.Values[f.Name]
			if f.Type != FieldSecret || !ok {
				continue
			}
			name := r.SecretVariable(f.Name)
			if err := set(ctx, name, v); err != nil {
				return a, err
			}
			a.Values[f.Name] = "${" + name + "}"
		}
		return a, nil
	},
	Text: func(r ConnectorRequest, a ConnectorAnswer) string {
		values, _ := json.Marshal(a.Values)
		return fmt.Sprintf("The person set up %s. Its configuration: %s. Values written ${NAME} are workspace variables: use them as written, they resolve when a command or request runs.", r.Connector, values)
	},
})

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
