package run

import (
	"fmt"

	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// Browsers are the agents' browsers as a takeover card needs them (a
// browser.Manager behind an adapter).
type Browsers interface {
	// HandBack gives the agent's browser back to it if the person still
	// holds it, and returns the page it shows; running is false when the
	// browser is not running.
	HandBack(agentID string) (url, title string, running bool)
}

// takeoverText hands a takeover card back to its agent: whichever way the
// card was closed, the browser is the agent's again, and the agent reads
// the page the person left it on.
func (s *Service) takeoverText(p Pause, dismissed bool, note string) string {
	page, running := "", false
	if s.browsers != nil {
		var u, title string
		if u, title, running = s.browsers.HandBack(p.AgentID); running {
			page = fmt.Sprintf("the page is now %s (%s)", u, title)
		}
	}
	switch {
	case dismissed && running:
		return pause.DismissedText(note) + " Your browser is yours again; " + page + "."
	case dismissed:
		return pause.DismissedText(note)
	case running:
		return "The person handed the browser back; " + page + ". Take a new snapshot before you act on it."
	}
	return "The person handed the browser back, but your browser is no longer open (it was closed or the app restarted); open the page again with browser_open."
}
