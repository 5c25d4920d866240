package foreman

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// Serve follows the onboarding's first card until ctx ends (watch), and
// the first card StartOnboarding raises meanwhile.
func (f *Foreman) Serve(ctx context.Context) error {
	f.serveMu.Lock()
	f.serving = ctx
	f.serveMu.Unlock()
	f.watch(ctx)
	<-ctx.Done()
	f.serveMu.Lock()
	f.serving = nil
	f.serveMu.Unlock()
	f.group.Wait()
	return nil
}

// watch follows the answer to the onboarding's first card while one waits,
// until ctx ends: answered, the Brain gets a first page from the answers at
// once (with or without a model); dismissed, onboarding is skipped. It
// listens only while a first card is pending, and one watcher runs at a time
// (StartOnboarding starts one for a new card).
func (f *Foreman) watch(ctx context.Context) {
	for f.watching.CompareAndSwap(false, true) {
		f.watchFirstCard(ctx)
		f.watching.Store(false)
		// A card started while this watcher was stopping gets it back.
		if ctx.Err() != nil || !f.firstCardPending(ctx) {
			return
		}
	}
}

// watchLater starts watch when the Foreman is served (Serve starts it
// otherwise).
func (f *Foreman) watchLater() {
	f.serveMu.Lock()
	ctx := f.serving
	if ctx != nil {
		f.group.Add(1)
	}
	f.serveMu.Unlock()
	if ctx == nil {
		return
	}
	go func() {
		defer f.group.Done()
		f.watch(ctx)
	}()
}

func (f *Foreman) watchFirstCard(ctx context.Context) {
	if !f.firstCardPending(ctx) {
		return
	}
	changes, stop := f.d.Bus.Subscribe()
	defer stop()
	id := f.d.Workspace
	f.settleFirstCard(ctx) // answered before this watcher listened
	// Only the Foreman's own changes can settle or end the card: the
	// workspace's other traffic (a webhook burst) costs no query here.
	for f.firstCardPending(ctx) {
		var c event.Change
		for c.Workspace != id || c.Agent != AgentID {
			select {
			case <-ctx.Done():
				return
			case c = <-changes:
			}
		}
		if c.Kind == "pause.updated" {
			f.settleFirstCard(ctx)
		}
	}
}

// firstCardPending reports whether the onboarding's first card is open, or
// answered and not yet acted on.
func (f *Foreman) firstCardPending(ctx context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, err := f.readOnboarding(ctx)
	if err != nil || rec.State != OnboardingRunning || rec.FirstCard == "" || rec.Seeded {
		return false
	}
	p, err := f.d.Runs.GetPause(ctx, rec.FirstCard)
	return err == nil && p.Status != pause.Cancelled
}

// settleFirstCard acts once on the answered first card.
func (f *Foreman) settleFirstCard(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rec, err := f.readOnboarding(ctx)
	if err != nil || rec.State != OnboardingRunning || rec.FirstCard == "" || rec.Seeded {
		return
	}
	p, err := f.d.Runs.GetPause(ctx, rec.FirstCard)
	if err != nil {
		return
	}
	log := f.log
	switch p.Status {
	case pause.Dismissed:
		if _, err := f.skipLocked(ctx); err != nil {
			log.Warn("skip onboarding after its card was dismissed", "err", err)
		}
		return
	case pause.Answered:
	default:
		return
	}
	req, err := pause.Decode[pause.QuestionRequest](p.Request)
	if err != nil {
		log.Warn("read the onboarding's first card", "card", p.ID, "err", err)
		return
	}
	ans, err := pause.Decode[pause.QuestionAnswer](p.Answer)
	if err != nil {
		log.Warn("read the answer to the onboarding's first card", "card", p.ID, "err", err)
		return
	}
	title, body, summary := companyPage(req, ans)
	_, err = f.d.Brain.Save(ctx, brain.Write{Title: title, Body: body, Summary: &summary, By: brain.Foreman, UnlessPersonEdited: true})
	switch {
	case errors.Is(err, brain.ErrPersonEdited):
		log.Info("onboarding left the person's page as it is", "page", title)
	case err != nil:
		log.Warn("write the onboarding's first Brain page", "err", err)
		return // tried again on the next change
	}
	rec.Seeded = true
	if err := f.writeOnboarding(ctx, rec); err != nil {
		log.Warn("save onboarding state", "err", err)
	}
}

// CompanyPageTitle is the Brain page onboarding writes from the first
// card's answers.
const CompanyPageTitle = "Company profile"

// companyPage is the Brain page of the first card's answers.
func companyPage(req pause.QuestionRequest, ans pause.QuestionAnswer) (title, body, summary string) {
	get := func(header string) string {
		for i, q := range req.Questions {
			if q.Header == header && i < len(ans.Answers) {
				return strings.TrimSpace(ans.Answers[i])
			}
		}
		return ""
	}
	company, offer, customers := get("Company"), get("Offer"), get("Customers")
	var b strings.Builder
	name := company
	if name == "" {
		name = "Our company"
	}
	fmt.Fprintf(&b, "# %s\n\n", name)
	for _, row := range []struct{ label, header string }{
		{"What we sell", "Offer"}, {"Who buys it", "Customers"}, {"Our tone", "Tone"},
		{"Tools we use", "Tools"}, {"Website", "Website"},
	} {
		if v := get(row.header); v != "" {
			fmt.Fprintf(&b, "- **%s:** %s\n", row.label, strings.Join(strings.Fields(v), " "))
		}
	}
	b.WriteString("\n_From the onboarding answers. The Foreman adds what it learns from the website._\n")
	summary = fmt.Sprintf("%s sells %s to %s.", name, lowerFirst(strings.TrimSuffix(offer, ".")), lowerFirst(strings.TrimSuffix(customers, ".")))
	if offer == "" || customers == "" {
		summary = name + ": the company this workspace works for."
	}
	if r := []rune(summary); len(r) > brain.MaxSummaryLen {
		summary = string(r[:brain.MaxSummaryLen-1]) + "…"
	}
	return CompanyPageTitle, b.String(), summary
}

func lowerFirst(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	r := []rune(s)
	if len(r) > 1 && r[1] >= 'a' && r[1] <= 'z' && r[0] >= 'A' && r[0] <= 'Z' {
		r[0] += 'a' - 'A'
	}
	return string(r)
}
