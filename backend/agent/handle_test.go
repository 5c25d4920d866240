package agent

import (
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

func TestDeriveHandle(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"simple", "Support", "support"},
		{"spaces and case", "Support Inbox Bot", "support-inbox-bot"},
		{"accents dropped", "Zoé Müller", "zoe-muller"},
		{"punctuation collapses", "  Sales -- (EU) !! ", "sales-eu"},
		{"leading digit gets prefix", "42 Watcher", "a-42-watcher"},
		{"nothing usable", "!!!", "agent"},
		{"non-latin only", "助手", "agent"},
		{"single letter padded", "Q", "q-agent"},
		{"cut to 32", strings.Repeat("abcdefghij", 5), "abcdefghijabcdefghijabcdefghijab"},
		{"no trailing dash after cut", strings.Repeat("a", 31) + " b", strings.Repeat("a", 31)},
		{"ligature", "ﬁnance", "finance"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := DeriveHandle(tc.in)
			if got != tc.want {
				t.Errorf("DeriveHandle(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if err := ValidateHandle(got); err != nil {
				t.Errorf("derived handle %q is not valid: %v", got, err)
			}
		})
	}
}

func TestValidateHandle(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		hint string
	}{
		{"ab", true, ""},
		{"support-bot-2", true, ""},
		{strings.Repeat("a", 32), true, ""},
		{"", false, "empty"},
		{"a", false, "too short"},
		{strings.Repeat("a", 33), false, "keep it to 32"},
		{"2fast", false, "start with a lowercase letter"},
		{"-ab", false, "start with a lowercase letter"},
		{"Support", false, "start with a lowercase letter"},
		{"sup port", false, "only lowercase letters"},
		{"sup_port", false, "only lowercase letters"},
		{"supÉ", false, "only lowercase letters"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			err := ValidateHandle(tc.in)
			if (err == nil) != tc.ok {
				t.Fatalf("ValidateHandle(%q) = %v, want ok=%v", tc.in, err, tc.ok)
			}
			if err != nil {
				if !errors.Is(err, fault.ErrInvalid) {
					t.Errorf("error kind: got %v, want ErrInvalid", err)
				}
				if !strings.Contains(err.Error(), tc.hint) {
					t.Errorf("error %q does not say %q", err, tc.hint)
				}
			}
		})
	}
}

func TestWithSuffixFits(t *testing.T) {
	long := strings.Repeat("a", 32)
	if got := withSuffix(long, 12); got != strings.Repeat("a", 29)+"-12" {
		t.Errorf("withSuffix = %q, want 29 a's + -12", got)
	}
	if got := withSuffix("bot", 2); got != "bot-2" {
		t.Errorf("withSuffix = %q, want bot-2", got)
	}
}
