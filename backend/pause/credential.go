package pause

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Credential is the kind of a card asking for one secret, stored as a
// variable.
const Credential = "credential"

var credential = Define(Def[CredentialRequest, CredentialAnswer]{
	Name: Credential,
	Tool: Tool{
		Name: "request_credential",
		Description: "Ask the person for an API key or password through a masked form. NEVER ask for a secret in the chat. The value " +
			"goes straight into the workspace variable you name; you only learn that it was filled, then reference it as " +
			"${NAME} in a command, its env, or a request header.",
		Schema: `{"type":"object","properties":{` +
			`"variable":{"type":"string","description":"Variable name, UPPER_CASE, e.g. STRIPE_API_KEY."},` +
			`"label":{"type":"string","description":"What it is, e.g. Stripe secret key."},` +
			`"description":{"type":"string","description":"What you will use it for."},` +
			`"url":{"type":"string","description":"Where the person can get it."}` +
			`},"required":["variable"],"additionalProperties":false}`,
	},
	Check: (*CredentialRequest).Check,
	Summarize: func(c CredentialRequest) (string, string) {
		return "Needs a credential: " + c.Label, c.Description
	},
	// The value goes straight into the variable; only its name is kept.
	Reply: func(ctx context.Context, r CredentialRequest, decode func(any) error, set SetVariable) (CredentialAnswer, error) {
		var a struct {
			Value string `json:"value"`
		}
		if err := decode(&a); err != nil {
			return CredentialAnswer{}, err
		}
		if err := CheckValue(a.Value); err != nil {
			return CredentialAnswer{}, err
		}
		if err := set(ctx, r.Variable, a.Value); err != nil {
			return CredentialAnswer{}, err
		}
		return CredentialAnswer{Variable: r.Variable, Filled: true}, nil
	},
	Text: func(_ CredentialRequest, a CredentialAnswer) string {
		return fmt.Sprintf("The person filled the variable %s. Write ${%s} where the value goes (a command, its env, a request header); it is resolved when that runs and never shown to you.", a.Variable, a.Variable)
	},
})

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
