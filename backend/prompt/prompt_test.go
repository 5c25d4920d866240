package prompt

import (
	"flag"
	"os"
	"path/filepath"
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := System(tc.in)
			path := filepath.Join("testdata", tc.name+".golden")
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
		})
	}
}
