package secret

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

func TestCheckStored(t *testing.T) {
	v := newTestVariables(t)
	ctx := context.Background()
	if _, err := v.Set(ctx, "GITHUB_TOKEN", "tok-0123456789abcdef"); err != nil {
		t.Fatal(err)
	}
	v.Mask("app", map[string]string{"OPENAI_API_KEY": "app-key-0123456789"})
	tests := []struct {
		name, text string
		allow      bool
		want       string // in the error; "" for none
		credential bool
	}{
		{"a reference is fine", "use ${GITHUB_TOKEN} for the API", false, "", false},
		{"a variable's value", "token: tok-0123456789abcdef", false, "write ${GITHUB_TOKEN} instead", false},
		{"a variable's value, base64", base64.StdEncoding.EncodeToString([]byte("tok-0123456789abcdef")), true, "value of the variable GITHUB_TOKEN", false},
		{"an app secret", "key app-key-0123456789", false, "a secret of the app itself", false},
		{"a GitHub token", "ghp_" + strings.Repeat("a1", 18), false, "looks like a GitHub token (ghp_a1…); a soul never carries credentials", true},
		{"an AWS key", "AKIAABCDEFGHIJKLMNOP", false, "an AWS access key", true},
		{"an OpenAI project key", "sk-proj-abc123def456ghi789", false, "an OpenAI or Anthropic API key", true},
		{"an Anthropic key", "sk-ant-api03-abc123def456ghi789", false, "an OpenAI or Anthropic API key", true},
		{"a Slack token", "xoxb-123456789012-abc", false, "a Slack token", true},
		{"a Stripe key", "rk_live_abc123def456ghi789jk", false, "a Stripe secret key", true},
		{"a Google key", "AIza" + strings.Repeat("x", 35), false, "a Google API key", true},
		{"a webhook secret", "whsec_abc123def456ghi789", false, "a webhook signing secret", true},
		{"credential-like, allowed by the person", "AKIAABCDEFGHIJKLMNOP", true, "", false},
		{"a placeholder", "sk-your-key-goes-here", false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.CheckStored("the soul", "a soul", tt.text, tt.allow)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.want == "":
				return
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
			if !errors.Is(err, fault.ErrInvalid) || errors.Is(err, ErrCredentialLike) != tt.credential {
				t.Errorf("err = %v: invalid %v, credential-like %v; want invalid, credential-like %v", err,
					errors.Is(err, fault.ErrInvalid), errors.Is(err, ErrCredentialLike), tt.credential)
			}
			if strings.Contains(err.Error(), "0123456789abcdef") || strings.Contains(err.Error(), "0123456789") {
				t.Errorf("the error %q holds the value", err)
			}
		})
	}
	var none *Variables
	if err := none.CheckStored("the soul", "a soul", "AKIAABCDEFGHIJKLMNOP", false); !errors.Is(err, ErrCredentialLike) {
		t.Errorf("nil Variables: err = %v, want credential-like", err)
	}
}

func newTestVariables(t *testing.T) *Variables {
	t.Helper()
	v, err := NewVariables(storetest.Open(t), testBox(t, 1), "ws1", nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The app's own secrets are masked like variables, under their names, and
// are no variables: nothing resolves them.
func TestMask(t *testing.T) {
	v := newTestVariables(t)
	v.Mask("app", map[string]string{"OPENAI_API_KEY": "sk-app-0123456789", "SHORT": "k"})
	if got := v.Redact("key sk-app-0123456789 k"); got != "key [redacted:OPENAI_API_KEY] k" {
		t.Errorf("Redact = %q, want the app key masked and the too-short value left", got)
	}
	if _, err := v.Resolve("${OPENAI_API_KEY}"); err == nil {
		t.Error("an app secret resolved as a variable")
	}
	if _, err := v.Set(context.Background(), "OPENAI_API_KEY", "sk-var-9876543210"); err != nil {
		t.Fatal(err)
	}
	if got := v.Redact("sk-app-0123456789 sk-var-9876543210"); got != "[redacted:OPENAI_API_KEY_APP] [redacted:OPENAI_API_KEY]" {
		t.Errorf("Redact = %q, want both masked, the variable under its name", got)
	}
	v.Mask("app", nil)
	if got := v.Redact("sk-app-0123456789"); got != "sk-app-0123456789" {
		t.Errorf("Redact = %q after the group was emptied, want it unmasked", got)
	}
}
