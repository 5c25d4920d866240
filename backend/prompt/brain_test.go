package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallBrain fits inline; largeBrain does not.
var smallBrain = []BrainPage{
	{Title: "What we sell", Version: 3, Summary: "Hand-made city bikes.", Body: "# Offer\n\nHand-made city bikes, from 1 200 EUR.\n\n- Repairs within 48 h\n"},
	{Title: "Tone", Version: 1, Summary: "Warm, short, no jargon.", Body: "Warm, short, no jargon. Sign as \"The Velo team\"."},
}

func largeBrain(n int) []BrainPage {
	var pages []BrainPage
	for i := 1; i <= n; i++ {
		pages = append(pages, BrainPage{
			Title:   fmt.Sprintf("Customer segment %02d", i),
			Version: i%3 + 1,
			Summary: fmt.Sprintf("Who segment %d is, what they buy and how we reach them.", i),
			Body:    strings.Repeat(fmt.Sprintf("Details about segment %d. ", i), 40),
		})
	}
	return pages
}

func TestBrainGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   Input
	}{
		{"brain-inline", Input{Name: "Inbox Keeper", Handle: "inbox-keeper", Box: "Support", Soul: "You answer the support inbox.",
			Brain: smallBrain, BrainPropose: true, Now: now}},
		{"brain-index", Input{Name: "Inbox Keeper", Handle: "inbox-keeper", Box: "Support", Soul: "You answer the support inbox.",
			Brain: largeBrain(8), Now: now}},
	} {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name, System(tc.in)) })
	}
}

func TestBrainSectionIsBounded(t *testing.T) {
	tests := []struct {
		name       string
		pages      []BrainPage
		inline     bool
		wantHidden int // pages left out of the index; -1: those not listed
	}{
		{"no page: no section", nil, false, 0},
		{"small: whole pages", smallBrain, true, 0},
		{"just past the inline budget: index", largeBrain(7), false, 0},
		{"huge: index cut, the rest counted", largeBrain(300), false, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec := brainSection(tt.pages, false)
			if len(tt.pages) == 0 {
				if sec != "" {
					t.Errorf("got a section for an empty Brain:\n%s", sec)
				}
				return
			}
			if got := strings.Contains(sec, "<page title="); got != tt.inline {
				t.Errorf("inline = %v, want %v", got, tt.inline)
			}
			if !tt.inline {
				if !strings.Contains(sec, "read_brain_page(title)") {
					t.Errorf("index without the read_brain_page hint:\n%s", sec)
				}
				if strings.Contains(sec, "Details about segment") {
					t.Errorf("index holds page bodies")
				}
			}
			max := MaxBrainIndexBytes + 600 // the index plus its fixed sentences
			if tt.inline {
				max = MaxBrainInlineBytes + 600
			}
			if len(sec) > max {
				t.Errorf("section is %d bytes, want at most %d", len(sec), max)
			}
			if tt.wantHidden < 0 {
				tt.wantHidden = len(tt.pages) - strings.Count(sec, "\n- Customer segment")
				if tt.wantHidden < 200 {
					t.Errorf("the index lists %d of %d pages; want it cut near %d bytes", len(tt.pages)-tt.wantHidden, len(tt.pages), MaxBrainIndexBytes)
				}
			}
			more := fmt.Sprintf("(%d more pages not listed;", tt.wantHidden)
			if got := strings.Contains(sec, more); got != (tt.wantHidden > 0) {
				t.Errorf("section says %q: %v, want %v\n%s", more, got, tt.wantHidden > 0, sec[len(sec)-200:])
			}
		})
	}
}

// golden compares a system prompt with testdata/<name>.golden (rewritten
// with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if got != string(want) {
		t.Errorf("system prompt differs from %s (run go test -update if intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// Titles are quoted in the inline form: a title full of characters that
// quoting escapes must not carry the section past its bound.
func TestBrainInlineBoundCountsQuotedTitles(t *testing.T) {
	var pages []BrainPage
	for i := 0; i < 37; i++ {
		pages = append(pages, BrainPage{Title: strings.Repeat(`"`, 118) + fmt.Sprintf("%02d", i), Version: 1, Body: "x"})
	}
	sec := brainSection(pages, false)
	if max := MaxBrainInlineBytes + 600; len(sec) > max {
		t.Errorf("section is %d bytes, want at most %d (inline: %v)", len(sec), max, strings.Contains(sec, "<page title="))
	}
}
