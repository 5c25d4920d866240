package memory_test

import (
	"context"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/memory"
	"github.com/rerun-build/rerun-desktop/backend/memory/memorytest"
)

// pairs are an older memory, a newer text, and whether the newer one is a
// correction of the older (the same fact, its value changed) — the only
// case where the older should go, and only once the agent says so.
var pairs = []struct {
	old, new   string
	correction bool
}{
	// Different facts that share most of their words.
	{"Ana's phone number is 555-0101", "Ana's fax number is 555-0199", false},
	{"The staging deploy runs every Friday at 5pm", "The production deploy runs every Friday at 5pm", false},
	{"Sam approves refunds under 100 euros", "Sam approves discounts under 100 euros", false},
	{"The Berlin office opens at 9am", "The Paris office opens at 9am", false},
	{"Invoice 1042 was paid on March 3", "Invoice 1043 was paid on March 3", false},
	{"Lena prefers email for invoices", "Lena prefers phone for urgent issues", false},
	{"The API key for Stripe lives in STRIPE_KEY", "The API key for GitHub lives in GITHUB_TOKEN", false},
	{"Order 881 ships from the Leeds warehouse", "Order 882 ships from the Leeds warehouse", false},
	{"Marco's birthday is on May 4", "Marco's anniversary is on May 4", false},
	{"The support inbox is checked every morning", "The sales inbox is checked every morning", false},
	{"Acme pays on net 30 terms", "Globex pays on net 30 terms", false},
	{"Tom manages the Shopify store", "Tom manages the Amazon store", false},
	{"The newsletter goes out on Tuesdays", "The podcast goes out on Tuesdays", false},
	{"Customer Jane Doe lives in Lyon", "Customer John Doe lives in Lyon", false},
	{"Use the blue template for quotes", "Use the blue template for invoices", false},
	{"The Q3 report is due on October 15", "The Q4 report is due on January 15", false},
	// True corrections: the same fact, its value changed.
	{"The staging deploy runs every Friday at 5pm", "The staging deploy runs every Thursday at 5pm", true},
	{"Ana's phone number is 555-0101", "Ana's phone number is 555-0177", true},
	{"Sam approves refunds under 100 euros", "Sam approves refunds under 250 euros", true},
	{"The Berlin office opens at 9am", "The Berlin office opens at 8am", true},
	{"Acme pays on net 30 terms", "Acme pays on net 45 terms", true},
	{"Tom manages the Shopify store", "Priya manages the Shopify store", true},
	{"The newsletter goes out on Tuesdays", "The newsletter goes out on Wednesdays", true},
	{"Customer Jane Doe lives in Lyon", "Customer Jane Doe lives in Marseille", true},
	// Paraphrases: the same fact, said again in other words.
	{"The car is red", "The automobile is red", false},
	{"Lena wants invoices by email", "Lena wants her invoices sent by email", false},
	{"Standup is at 10 every weekday", "Every weekday the standup is at 10", false},
	// Names, numbers and dates that differ in one token.
	{"Flight LH400 leaves at 10:05", "Flight LH401 leaves at 10:05", false},
	{"The rent of 1,200 euros is due on the 1st", "The rent of 1,200 euros is due on the 5th", true},
	{"Contract with Initech ends 2027-06-30", "Contract with Initrode ends 2027-06-30", false},
	{"Room 4B has the projector", "Room 4C has the projector", false},
	{"Pia is on holiday until August 12", "Pia is on holiday until August 19", true},
}

// Whatever their overlap, no fact is deleted on similarity alone: the
// older memory stays active until the agent says it is corrected (with
// Supersedes), and then exactly it goes. Run with keywords only and with
// an embedder that makes paraphrases look alike.
func TestReplaceOnlyOnTheAgentsWord(t *testing.T) {
	for _, mode := range []string{"keywords", "embedder"} {
		t.Run(mode, func(t *testing.T) {
			ctx := context.Background()
			cfg := memory.Config{}
			if mode == "embedder" {
				srv := memorytest.NewEmbedServer(t, 64)
				srv.Synonym("car", "automobile")
				cfg.Embedder = embedder(srv, "fake-64")
			}
			deleted := 0
			for i, p := range pairs {
				f := newFixture(t, cfg)
				old := f.remember(t, "ag_a", p.old)
				r, err := f.svc.Remember(ctx, "ag_a", p.new, memory.Source{}, memory.RememberOptions{})
				if err != nil {
					t.Fatalf("pair %d: %v", i, err)
				}
				if got, _ := f.svc.Get(ctx, old.ID); got.State != memory.Active || r.Superseded != nil {
					deleted++
					t.Errorf("pair %d: %q replaced %q on similarity alone (%s)", i, p.new, p.old, r.Reason)
					continue
				}
				if !p.correction {
					continue
				}
				// The agent says it meant a correction: the named memory,
				// or the one it knows, is replaced, and no copy is stored.
				c, err := f.svc.Remember(ctx, "ag_a", p.new, memory.Source{}, memory.RememberOptions{Supersedes: old.ID})
				if err != nil {
					t.Fatalf("pair %d, confirming: %v", i, err)
				}
				if c.Superseded == nil || c.Superseded.ID != old.ID || c.Memory.ID != r.Memory.ID {
					t.Errorf("pair %d: confirming the correction gave %+v", i, c)
				}
				if got, _ := f.svc.Get(ctx, old.ID); got.State != memory.Superseded || got.SupersededBy != r.Memory.ID {
					t.Errorf("pair %d: after confirming, the old memory is %q by %q", i, got.State, got.SupersededBy)
				}
				if all, _ := f.svc.List(ctx, "ag_a", memory.ListOptions{IncludeRetired: true}); len(all) != 2 {
					t.Errorf("pair %d: %d memories after confirming, want 2", i, len(all))
				}
			}
			if deleted > 0 {
				t.Errorf("%d of %d pairs lost a fact on similarity alone", deleted, len(pairs))
			}
		})
	}
}
