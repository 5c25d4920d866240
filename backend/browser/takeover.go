package browser

import (
	"context"
	"encoding/json"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// TakeoverTool is request_takeover for one agent: a card asking the person
// to take over its browser, with the page it shows. Like the human family's
// cards, it ends the agent's turn: the runtime stores the request (a
// pause.TakeoverRequest) and hands the answer back when the person hands
// the browser back.
func (m *Manager) TakeoverTool(agentID string) tool.Tool {
	return tool.Tool{
		Name:   "request_takeover",
		Family: Family,
		Description: "Ask the person to take over your browser for what only they can do on the current page: a captcha, a two-factor code, a sign-in you have no credentials for, a payment to confirm. " +
			"Your turn ends here; they act in your browser and hand it back, and this tool's result tells you the page you are on then. Open the page that needs them first.",
		Schema: schema(`"reason":{"type":"string","description":"What they need to do, in one sentence, e.g. Solve the captcha on the login page."}`, "reason"),
		Pause: func(input json.RawMessage) (string, any, error) {
			var req pause.TakeoverRequest
			if err := jsonarg.Decode(input, &req); err != nil {
				return "", nil, err
			}
			if req.URL != "" {
				return "", nil, fault.Invalid("url is not an argument: the card shows the page your browser is on")
			}
			b, ok := m.Lookup(agentID)
			if !ok || b.running() == nil {
				return "", nil, fault.Invalid("your browser is not open; open the page that needs the person with browser_open first, then ask")
			}
			req.URL = b.State().URL
			return pause.Takeover, req, req.Check()
		},
		Run: func(context.Context, *tool.Env, json.RawMessage) (string, error) {
			return "", fault.Invalid("request_takeover pauses the run; only the runtime can carry it out")
		},
	}
}
