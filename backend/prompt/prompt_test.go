package prompt

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestSystemGolden(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database")
	}
	now := time.Date(2026, 11, 30, 9, 15, 0, 0, berlin)
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"full", Input{Name: "Inbox Keeper", Handle: "inbox-keeper", Box: "Support",
			Soul:  "# Role\nYou answer the support inbox.\n\n- Be kind\n- Escalate refunds to @refunds",
			Guide: "### Files\nYour folder holds your files; `shared/…` is the shared folder.", Now: now}},
		{"empty-soul-no-tools", Input{Name: "New", Handle: "new", Box: "Main", Now: now.UTC()}},
		{"skills-and-memories", Input{Name: "Inbox Keeper", Handle: "inbox-keeper", Box: "Support",
			Soul:     "You answer the support inbox.",
			Guide:    "### Skills\nLoad a skill with load_skill.",
			Skills:   "refund-policy: Decide refunds. Use when a customer asks for money back.\nweekly-report: Write the Friday support report.\n",
			Memories: []string{"[mem_1] Refunds above 200 EUR go to @refunds.", "[mem_2] Maria prefers\nshort answers."}, Now: now}},
		{"variables", Input{Name: "Deployer", Handle: "deployer", Box: "Ops", Variables: []string{"GITHUB_TOKEN", "STRIPE_KEY"}, Now: now}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name, System(tc.in)) })
	}
}

func TestMemoriesBounded(t *testing.T) {
	fact := func(i int) string { return fmt.Sprintf("[mem_%d] %s", i, strings.Repeat("x", 480)) }
	tests := []struct {
		name      string
		facts     []string
		want      []string
		notWant   []string
		noneAtAll bool
	}{
		{"none: no section", nil, nil, []string{"## What you remember"}, true},
		{"blank facts: no section", []string{" ", "\n"}, nil, []string{"## What you remember"}, true},
		{"all fit", []string{fact(1), fact(2)}, []string{"- [mem_1] x", "- [mem_2] x"}, []string{"more not shown"}, false},
		{"whole facts dropped past the bound", []string{fact(1), fact(2), fact(3), fact(4), fact(5), fact(6)},
			[]string{"- [mem_4] x", "(2 more not shown; use recall to search)"}, []string{"[mem_5]", "[mem_6]"}, false},
		{"a single huge fact is cut", []string{"[mem_9] " + strings.Repeat("é", 2000)}, []string{"- [mem_9] éé", "é…\n"}, []string{"more not shown"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := System(Input{Name: "A", Handle: "a", Box: "B", Memories: tt.facts, Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("prompt lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("prompt holds %q", w)
				}
			}
			if tt.noneAtAll {
				return
			}
			start := strings.Index(got, "- [mem_")
			end := strings.Index(got, "\n## How you work")
			if section := got[start:end]; len(strings.TrimSuffix(section, "\n(2 more not shown; use recall to search)\n")) > MaxMemoriesBytes {
				t.Errorf("got %d bytes of memories, want at most %d", len(section), MaxMemoriesBytes)
			}
		})
	}
}
