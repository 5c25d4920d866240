// Package foreman owns the Foreman, the built-in agent that onboards a new
// workspace: its definition, its own tools (tools.go), and the onboarding of
// each workspace it runs (onboarding.go: the state, the first card, the
// Brain page of its answers).
package foreman

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/store"
	"github.com/rerun-build/rerun-desktop/backend/template"
)

// AgentID is the Foreman's fixed id, the same on every device.
const AgentID = "ag_foreman"

// Kind is the agents.builtin value of the Foreman.
const Kind = "foreman"

// Agent is the built-in agent that onboards a new workspace: it interviews
// the person, reads the company's website, writes the first Brain pages and
// proposes the first coworkers (onboarding.go).
var Agent = agent.Builtin{
	Kind: Kind, ID: AgentID, Handle: "foreman", Name: "Foreman", BoxID: box.SystemID,
	// browser: it reads the website itself; memory: propose_brain_edit for
	// the pages the person wrote; web: fetch_url as a fallback reader.
	Capabilities: []string{"browser", "human", "memory", "web"},
	Soul: `# You are the Foreman

You set up a new Rerun workspace with the person: you learn what their company does, write it down in the Brain (the pages every coworker reads), and propose their first coworkers.

## How onboarding goes
1. The person has answered your first questions: the company's name, what it sells, to whom, the tone to write in, the tools they use, and the website. Read the answers carefully.
2. Read the website. With firecrawl_scrape when you have it; otherwise with your browser: browser_open the address, browser_snapshot to read it, then open the two or three pages that matter most (about, products or pricing, customers). Do not read more than six pages. Never sign in, buy or submit anything.
3. If something important is still unclear, ask ONE more question card (ask_question), with suggested answers. Do not ask what the website already says.
4. Write the first Brain pages with write_brain_page, each short and factual (what you read or were told, nothing invented):
   - "What we sell": the offer, prices if public, what makes it different.
   - "Who we sell to": the customers, their problems, how they buy.
   - "How we work": tone of voice, tools in use, anything about how the team works.
   A page the person edited is theirs: if write_brain_page says so, propose your change with propose_brain_edit instead.
5. Propose two or three first coworkers with ONE propose_coworkers call: jobs this company plainly needs (e.g. answering customer emails, following up leads, watching competitors). Prefer a template from the library when one fits. Give each a specific soul: its job, inputs, output, tone, what to ask the person.
6. End with a short summary: the pages you wrote, the coworkers created, and what the person could do next.

## Rules
- Keep messages short and warm. The person is new to Rerun.
- Never ask for a password or API key in the chat.
- If the person declines a coworker, do not create it another way.`,
}

// Deps are what the Foreman of one workspace works with.
type Deps struct {
	// Workspace is the workspace's id, on the changes it publishes.
	Workspace string
	// DB's meta table keeps the onboarding state of this device.
	DB     *store.DB
	Bus    *event.Bus
	Logger *slog.Logger // nil: discard
	// Runs run the onboarding; Models say whether a model is configured.
	Runs   *run.Service
	Models run.Models
	// Brain, Agents, Boxes and Templates are what the Foreman's tools write:
	// the first pages and the first coworkers.
	Brain     *brain.Service
	Agents    *agent.Service
	Boxes     *box.Service
	Templates *template.Service
	// Variables may hold FirecrawlKeyVariable, which wins over
	// FirecrawlAPIKey, the environment's key. FirecrawlBaseURL "" is
	// Firecrawl's.
	Variables        *secret.Variables
	FirecrawlAPIKey  string
	FirecrawlBaseURL string
}

// Foreman is the Foreman of one workspace: its onboarding, and the tool
// source of its runs (run.SourceGuide).
type Foreman struct {
	d   Deps
	log *slog.Logger
	// mu serialises the onboarding's state changes (onboarding.go).
	mu       sync.Mutex
	watching atomic.Bool // an onboarding watcher runs (onboarding_seed.go)

	// serving is Serve's context while it runs: a first card raised then
	// gets a watcher at once (watchLater), which group waits for.
	serveMu sync.Mutex
	serving context.Context
	group   sync.WaitGroup
}

// New returns the Foreman of the workspace d names.
func New(d Deps) *Foreman {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Foreman{d: d, log: log}
}

// onboardingCard is the first card of every onboarding: the app raises it
// itself, so it shows at once and with no model configured.
func onboardingCard() pause.QuestionRequest {
	return pause.QuestionRequest{Questions: []pause.QuestionItem{
		{Header: "Company", Question: "What is your company called?", Options: []string{}},
		{Header: "Offer", Question: "What do you sell? A sentence or two is plenty.", Options: []string{}},
		{Header: "Customers", Question: "Who buys it?", Options: []string{"Small businesses", "Large companies", "Consumers", "Developers"}},
		{Header: "Tone", Question: "How should your coworkers sound when they write for you?", Options: []string{"Friendly and plain", "Formal and precise", "Short and direct", "Playful"}},
		{Header: "Tools", Question: "Which tools does your team use every day?", Options: []string{"Gmail", "Slack", "Notion", "HubSpot", "Stripe", "Google Sheets"}, Multiple: true},
		{Header: "Website", Question: "What is your website's address? I will read it to learn more.", Options: []string{"We have no website"}},
	}}
}

// onboardingIntro is what the Foreman says above its first card.
const onboardingIntro = "Hi, I am the Foreman. I will set up this workspace with you: a few questions about your company, " +
	"then I read your website, write what I learn in the Brain (the pages every coworker reads) and propose your first coworkers. " +
	"You can skip this and come back later from Settings."

// onboardingInput is the run's opening message, written by Rerun.
const onboardingInput = "A new workspace: onboard the person."

// onboardingResume is the message that continues an onboarding whose run
// stopped (no model was configured, or it failed).
const onboardingResume = "Go on with the onboarding from where you stopped: use the answers above."
