package brain_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func newBrain(t *testing.T) (*brain.Service, <-chan event.Change) {
	t.Helper()
	bus := &event.Bus{}
	ch, stop := bus.Subscribe()
	t.Cleanup(stop)
	return brain.New(storetest.Open(t), "ws_1", bus), ch
}

func ptr(s string) *string { return &s }

// next returns the next change published, failing after a second.
func next(t *testing.T, ch <-chan event.Change) event.Change {
	t.Helper()
	select {
	case c := <-ch:
		return c
	case <-time.After(waittest.Patience):
		t.Fatal("no change published")
	}
	return event.Change{}
}

func TestCreateGetListAndTitleUniqueness(t *testing.T) {
	ctx := context.Background()
	b, ch := newBrain(t)
	p, err := b.Create(ctx, brain.NewPage{Title: "  What  we sell ", Body: "# Offer\n\nWe sell **hand-made** bikes\nto city commuters.\n\nMore later.", By: brain.Person})
	if err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != brain.EventCreated || c.ID != p.ID || c.Workspace != "ws_1" {
		t.Errorf("got change %+v, want %s of %s", c, brain.EventCreated, p.ID)
	}
	if p.Title != "What we sell" || p.Slug != "what-we-sell" || p.Version != 1 || !p.EditedByPerson || p.UpdatedBy != brain.Person {
		t.Errorf("got %+v", p.Summary)
	}
	if want := "We sell **hand-made** bikes to city commuters."; p.Summary.Summary != want {
		t.Errorf("got summary %q, want the first paragraph %q", p.Summary.Summary, want)
	}
	for _, ref := range []string{p.ID, "what-we-sell", "WHAT WE SELL", " what  we sell "} {
		got, err := b.Get(ctx, ref)
		if err != nil || got.ID != p.ID {
			t.Errorf("Get(%q) = %s, %v; want %s", ref, got.ID, err, p.ID)
		}
	}
	_, err = b.Create(ctx, brain.NewPage{Title: "what WE sell", Body: "x", By: brain.Foreman})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), `already has a page titled "What we sell"`) {
		t.Errorf("same title in other case: got %v, want a conflict naming the page", err)
	}
	if _, err := b.Create(ctx, brain.NewPage{Title: "What we sell!", Body: "x", By: brain.AgentAuthor("scout")}); err != nil {
		t.Fatal(err)
	}
	list, err := b.List(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %+v, %v; want 2 pages", list, err)
	}
	if list[1].Slug != "what-we-sell-2" || list[1].UpdatedBy != "agent:@scout" || list[1].EditedByPerson {
		t.Errorf("second page = %+v; want slug what-we-sell-2 by agent:@scout, not edited by a person", list[1])
	}
}

func TestInvalidInputIsRefusedAndNothingIsStored(t *testing.T) {
	ctx := context.Background()
	b, _ := newBrain(t)
	tests := []struct {
		name string
		page brain.NewPage
		want string
	}{
		{"no title", brain.NewPage{Title: " ", By: brain.Person}, "needs a title"},
		{"long title", brain.NewPage{Title: strings.Repeat("t", 121), By: brain.Person}, "keep it to 120"},
		{"control in title", brain.NewPage{Title: "a\x07b", By: brain.Person}, "control character"},
		{"body too big", brain.NewPage{Title: "Big", Body: strings.Repeat("x", brain.MaxBodyBytes+1), By: brain.Person}, "keep it to 64 KiB"},
		{"not utf-8", brain.NewPage{Title: "Bad", Body: "\xff", By: brain.Person}, "UTF-8"},
		{"summary too long", brain.NewPage{Title: "S", Summary: strings.Repeat("s", 301), By: brain.Person}, "keep it to 300"},
		{"unknown author", brain.NewPage{Title: "A", By: "robot"}, "author \"robot\" is unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.Create(ctx, tt.page)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want invalid saying %q", err, tt.want)
			}
		})
	}
	if list, _ := b.List(ctx); len(list) != 0 {
		t.Errorf("got %d pages after refused creates, want 0", len(list))
	}
}

func TestUpdateKeepsVersionsAndRefusesAStaleBase(t *testing.T) {
	ctx := context.Background()
	b, _ := newBrain(t)
	p, err := b.Create(ctx, brain.NewPage{Title: "Customers", Body: "Commuters.", By: brain.Foreman})
	if err != nil {
		t.Fatal(err)
	}
	if p.EditedByPerson {
		t.Errorf("a page the Foreman wrote counts as edited by a person")
	}
	p2, err := b.Update(ctx, p.ID, brain.Change{Body: ptr("Commuters and couriers."), Summary: ptr("Who buys."), By: brain.Person, BaseVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p2.Version != 2 || !p2.EditedByPerson || p2.Summary.Summary != "Who buys." || p2.OwnSummary != "Who buys." {
		t.Errorf("after update: %+v", p2.Summary)
	}
	// Someone else started from version 1 too: refused, nothing written.
	_, err = b.Update(ctx, "customers", brain.Change{Body: ptr("Students."), By: brain.Person, BaseVersion: 1})
	if !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "at version 2") || !strings.Contains(err.Error(), "reload the page") {
		t.Errorf("stale base: got %v, want a conflict saying the version and what to do", err)
	}
	// A change that changes nothing keeps the version.
	same, err := b.Update(ctx, p.ID, brain.Change{Body: ptr("Commuters and couriers."), By: brain.Person, BaseVersion: 2})
	if err != nil || same.Version != 2 {
		t.Errorf("no-op update: version %d, %v; want 2", same.Version, err)
	}
	renamed, err := b.Update(ctx, p.ID, brain.Change{Title: ptr("Our customers"), Summary: ptr(""), By: brain.AgentAuthor("writer")})
	if err != nil {
		t.Fatal(err)
	}
	if renamed.Slug != "our-customers" || renamed.Summary.Summary != "Commuters and couriers." {
		t.Errorf("after rename: slug %q summary %q", renamed.Slug, renamed.Summary.Summary)
	}
	vs, err := b.Versions(ctx, "our customers")
	if err != nil || len(vs) != 3 {
		t.Fatalf("versions = %d, %v; want 3", len(vs), err)
	}
	if vs[0].Version != 3 || vs[0].Author != "agent:@writer" || vs[2].Body != "Commuters." || vs[2].Author != brain.Foreman {
		t.Errorf("versions newest first: %+v", vs)
	}
	v1, err := b.Version(ctx, p.ID, 1)
	if err != nil || v1.Body != "Commuters." || v1.Title != "Customers" {
		t.Errorf("version 1 = %+v, %v", v1, err)
	}
	if _, err := b.Version(ctx, p.ID, 9); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("version 9: got %v, want not found", err)
	}
}

func TestDeleteKeepsHistoryAndFreesTheTitle(t *testing.T) {
	ctx := context.Background()
	b, ch := newBrain(t)
	p, _ := b.Create(ctx, brain.NewPage{Title: "Tone", Body: "Friendly.", By: brain.Foreman})
	next(t, ch)
	if err := b.Delete(ctx, "tone", brain.Person); err != nil {
		t.Fatal(err)
	}
	if c := next(t, ch); c.Kind != brain.EventDeleted || c.ID != p.ID {
		t.Errorf("got %+v, want %s", c, brain.EventDeleted)
	}
	if _, err := b.Get(ctx, "Tone"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("deleted page: got %v, want not found", err)
	}
	if vs, err := b.Versions(ctx, p.ID); err != nil || len(vs) != 1 || vs[0].Body != "Friendly." {
		t.Errorf("history of the deleted page = %+v, %v; want its version", vs, err)
	}
	// The Foreman does not bring back what the person deleted…
	_, err := b.Save(ctx, brain.Write{Title: "Tone", Body: "Formal.", By: brain.Foreman, UnlessPersonEdited: true})
	if !errors.Is(err, brain.ErrPersonEdited) || !errors.Is(err, fault.ErrConflict) {
		t.Errorf("Foreman re-creating a deleted page: got %v, want ErrPersonEdited", err)
	}
	// …but the person can make a new page with that title.
	q, err := b.Create(ctx, brain.NewPage{Title: "TONE", Body: "Warm.", By: brain.Person})
	if err != nil || q.ID == p.ID || q.Slug != "tone" {
		t.Errorf("new page with a deleted page's title: %+v, %v", q.Summary, err)
	}
}

func TestSaveForTheForemanNeverOverwritesThePerson(t *testing.T) {
	ctx := context.Background()
	b, _ := newBrain(t)
	p, err := b.Save(ctx, brain.Write{Title: "Offer", Body: "Bikes.", By: brain.Foreman, UnlessPersonEdited: true})
	if err != nil || p.Version != 1 {
		t.Fatalf("first save: %+v, %v", p.Summary, err)
	}
	if p, err = b.Save(ctx, brain.Write{Title: "offer", Body: "Bikes and repairs.", By: brain.Foreman, UnlessPersonEdited: true}); err != nil || p.Version != 2 || p.Title != "offer" {
		t.Fatalf("Foreman updating its own page: %+v, %v", p.Summary, err)
	}
	if _, err := b.Update(ctx, p.ID, brain.Change{Body: ptr("Bikes, repairs, rentals."), By: brain.Person}); err != nil {
		t.Fatal(err)
	}
	_, err = b.Save(ctx, brain.Write{Title: "Offer", Body: "Bikes only.", By: brain.Foreman, UnlessPersonEdited: true})
	if !errors.Is(err, brain.ErrPersonEdited) {
		t.Errorf("got %v, want ErrPersonEdited", err)
	}
	if got, _ := b.Get(ctx, "offer"); got.Body != "Bikes, repairs, rentals." {
		t.Errorf("the person's words were replaced: %q", got.Body)
	}
	// An approved agent edit based on the current version goes through.
	got, err := b.Save(ctx, brain.Write{Title: "Offer", Body: "Bikes, repairs, rentals, parts.", By: brain.AgentAuthor("scout"), BaseVersion: 3})
	if err != nil || got.Version != 4 || got.UpdatedBy != "agent:@scout" {
		t.Errorf("agent save: %+v, %v", got.Summary, err)
	}
	if _, err := b.Save(ctx, brain.Write{Title: "Offer", Body: "stale", By: brain.AgentAuthor("scout"), BaseVersion: 3}); !errors.Is(err, fault.ErrConflict) {
		t.Errorf("agent save on a stale base: got %v, want a conflict", err)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct{ name, explicit, body, want string }{
		{"explicit wins", " Short  one. ", "Body.", "Short one."},
		{"first paragraph after a heading", "", "# Title\n\nFirst line\nsecond line.\n\nNext.", "First line second line."},
		{"heading only", "", "# Only a heading", ""},
		{"code fence ends it", "", "Intro\n```\ncode\n```", "Intro"},
		{"empty", "", "", ""},
		{"long is cut", "", strings.Repeat("word ", 100), strings.TrimSpace(strings.Repeat("word ", 60)) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := brain.Summarize(tt.explicit, tt.body)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// FuzzPage checks the parsers of page input: a title either cleans to one
// line the store accepts or is refused, a slug is always an address, a
// summary is always one bounded line.
func FuzzPage(f *testing.F) {
	for _, s := range []string{"What we sell", "", "ÉCOLE  d'été", "a\nb", "\xff", strings.Repeat("é", 200), "# h\n\npara"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, title, body string) {
		if clean, err := brain.CleanTitle(title); err == nil {
			if clean == "" || strings.ContainsAny(clean, "\n\r\t") || utf8.RuneCountInString(clean) > brain.MaxTitleLen {
				t.Errorf("CleanTitle(%q) = %q", title, clean)
			}
		} else if !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("CleanTitle(%q) failed with %v, want an invalid-input error", title, err)
		}
		slug := brain.Slug(title)
		if slug == "" || len(slug) > 64 || strings.HasPrefix(slug, "-") || strings.HasSuffix(slug, "-") || strings.ContainsAny(slug, " /?#") {
			t.Errorf("Slug(%q) = %q", title, slug)
		}
		sum := brain.Summarize("", body)
		if utf8.ValidString(body) && (utf8.RuneCountInString(sum) > brain.MaxSummaryLen || strings.Contains(sum, "\n")) {
			t.Errorf("Summarize(%q) = %q: more than one bounded line", body, sum)
		}
	})
}

// A title that reads like another page's slug names a page of its own:
// Save writes by title only, and Get prefers a title over a slug.
func TestSaveBySlugLikeTitleMakesItsOwnPage(t *testing.T) {
	ctx := context.Background()
	b, _ := newBrain(t)
	first, err := b.Create(ctx, brain.NewPage{Title: "What we sell", Body: "Bikes.", By: brain.Person})
	if err != nil || first.Slug != "what-we-sell" {
		t.Fatalf("create: %+v, %v", first, err)
	}
	second, err := b.Save(ctx, brain.Write{Title: "what-we-sell", Body: "A page of its own.", By: brain.AgentAuthor("scout")})
	if err != nil {
		t.Fatal(err)
	}
	if second.ID == first.ID || second.Slug == first.Slug {
		t.Fatalf("saving %q wrote page %s (%s), want a new page beside %s", "what-we-sell", second.ID, second.Slug, first.ID)
	}
	if got, _ := b.Get(ctx, first.ID); got.Title != "What we sell" || got.Body != "Bikes." {
		t.Errorf("the first page became %q %q", got.Title, got.Body)
	}
	if got, _ := b.Get(ctx, "what-we-sell"); got.ID != second.ID {
		t.Errorf("Get(%q) = %s, want the page titled so (%s), not the one with that slug", "what-we-sell", got.ID, second.ID)
	}
}
