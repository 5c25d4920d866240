package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/brain"
	"github.com/rerun-build/rerun-desktop/backend/browser"
	"github.com/rerun-build/rerun-desktop/backend/foreman"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// companySite is a small company website: a home page linking an about
// page and a pricing page.
func companySite(t *testing.T) *httptest.Server {
	pages := map[string]string{
		"/": `<html><head><title>Skyline Kites</title></head><body><h1>Skyline Kites</h1>
			<p>Handmade stunt kites, built in Lisbon since 2009.</p>
			<a href="/about">About us</a> <a href="/pricing">Pricing</a></body></html>`,
		"/about": `<html><head><title>About Skyline Kites</title></head><body><h1>About us</h1>
			<p>We sell to kite schools and beach clubs across Europe.</p></body></html>`,
		"/pricing": `<html><head><title>Pricing</title></head><body><h1>Pricing</h1><p>School pack of 10 kites: 890 EUR.</p></body></html>`,
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}))
	t.Cleanup(site.Close)
	return site
}

func (e *env) onboarding(t *testing.T) foreman.Onboarding {
	t.Helper()
	var o foreman.Onboarding
	if code := e.do(t, "GET", "/api/workspaces/"+e.ws+"/onboarding", "", &o); code != 200 {
		t.Fatalf("GET onboarding: %d", code)
	}
	return o
}

// answerFirstCard answers the Foreman's scripted card through the answer API.
func (e *env) answerFirstCard(t *testing.T, o foreman.Onboarding, website string) {
	t.Helper()
	if o.State != foreman.OnboardingRunning || o.CardID == "" {
		t.Fatalf("onboarding = %+v, want running with its first card open", o)
	}
	ans, _ := json.Marshal(pause.QuestionAnswer{Answers: []string{"Skyline Kites", "Handmade stunt kites.", "Kite schools and beach clubs",
		"Friendly and plain", "Gmail, Stripe", website}})
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/pauses/"+o.CardID+"/answer", string(ans), nil); code != 200 {
		t.Fatalf("answer the first card: %d", code)
	}
}

func (e *env) workspace(t *testing.T) *workspace.Workspace {
	w, err := e.home.Workspace(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// waitRun waits until run id is paused or has ended.
func waitRun(t *testing.T, w *workspace.Workspace, id string) run.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waittest.Patience)
	defer cancel()
	for {
		r, err := w.Runs.Wait(ctx, id)
		if err != nil {
			t.Fatalf("wait for run %s: %v", id, err)
		}
		if r.Status != run.Queued && r.Status != run.Running {
			return r
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// toolResult is the output the model was sent for tool call id.
func toolResult(reqs []llmtest.Request, id string) string {
	for _, req := range reqs {
		for _, m := range req.Messages {
			for _, tr := range m.ToolResults {
				if tr.ToolCallID == id {
					return tr.Content
				}
			}
		}
	}
	return ""
}

func coworkers(t *testing.T, w *workspace.Workspace) []agent.Agent {
	all, err := w.Agents.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(all, func(a agent.Agent) bool { return a.Builtin != "" })
}

const proposal = `{"reason":"A kite shop lives on school orders.","coworkers":[` +
	`{"name":"Inbox Keeper","role":"answers customer emails","soul":"# You answer Skyline Kites' customer emails"},` +
	`{"name":"Lead Finder","role":"finds new kite schools","soul":"# You find kite schools"},` +
	`{"name":"Order Clerk","role":"tracks school orders","soul":"# You track orders"}]}`

// The whole onboarding: the scripted card on first start, answered through
// the API; the model reads the local site with the real browser, writes
// Brain pages and proposes three coworkers on one card; two approved, two
// created.
func TestForemanOnboardsANewWorkspace(t *testing.T) {
	bin, err := browser.FindChrome(os.Getenv("RERUN_CHROME"))
	if errors.Is(err, browser.ErrNoBrowser) {
		t.Skip("no Chromium found (install chromium or set RERUN_CHROME): ", err)
	}
	site := companySite(t)
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{Onboarding: true, Chrome: bin, LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	w := e.workspace(t)
	ctx := context.Background()

	o := e.onboarding(t)
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "open1", Name: "browser_open", Args: fmt.Sprintf(`{"url":%q}`, site.URL)}),
		llmtest.Tools(llmtest.ToolCall{ID: "snap1", Name: "browser_snapshot", Args: `{}`}),
		llmtest.Tools(llmtest.ToolCall{ID: "open2", Name: "browser_open", Args: fmt.Sprintf(`{"url":%q}`, site.URL+"/about")}),
		llmtest.Tools(llmtest.ToolCall{ID: "snap2", Name: "browser_snapshot", Args: `{}`}),
		llmtest.Tools(
			llmtest.ToolCall{ID: "w1", Name: "write_brain_page", Args: `{"title":"What we sell","body":"# What we sell\n\nHandmade stunt kites; a school pack of 10 is 890 EUR.","summary":"Handmade stunt kites."}`},
			llmtest.ToolCall{ID: "w2", Name: "write_brain_page", Args: `{"title":"Who we sell to","body":"# Who we sell to\n\nKite schools and beach clubs across Europe.","summary":"Kite schools and beach clubs."}`},
		),
		llmtest.Tools(llmtest.ToolCall{ID: "p1", Name: "propose_coworkers", Args: proposal}),
		llmtest.Text("All set: two pages in the Brain and two coworkers."),
	)
	e.answerFirstCard(t, o, site.URL)
	r := waitRun(t, w, o.RunID)
	if r.Status != run.Paused {
		t.Fatalf("run after the answers = %s (%s), want paused on the coworkers card", r.Status, r.Error)
	}
	reqs := fake.Requests()
	if first := reqs[0]; !slices.ContainsFunc(first.Tools, func(tl llmtest.Tool) bool { return tl.Name == "write_brain_page" }) ||
		!slices.ContainsFunc(first.Tools, func(tl llmtest.Tool) bool { return tl.Name == "browser_open" }) ||
		slices.ContainsFunc(first.Tools, func(tl llmtest.Tool) bool { return tl.Name == "firecrawl_scrape" }) {
		t.Errorf("the Foreman's tools = %v, want write_brain_page and the browser, no firecrawl_scrape without a key", toolNames(first))
	}
	if got := toolResult(reqs, "toolu_onboarding_"+strings.TrimPrefix(o.SessionID, "ses_")); !strings.Contains(got, "Skyline Kites") || !strings.Contains(got, site.URL) {
		t.Errorf("the model read the answers as %q, want them all", got)
	}
	if got := toolResult(reqs, "snap1"); !strings.Contains(got, "Handmade stunt kites") || !strings.Contains(got, "About us") {
		t.Errorf("the browser's snapshot of the home page = %q, want its text and links", got)
	}
	if got := toolResult(reqs, "snap2"); !strings.Contains(got, "kite schools and beach clubs") {
		t.Errorf("the browser's snapshot of /about = %q, want its text", got)
	}

	// Pages: the two the model wrote and the one of the answers, all by the Foreman.
	for _, title := range []string{"What we sell", "Who we sell to", foreman.CompanyPageTitle} {
		p, err := w.Brain.Get(ctx, title)
		if err != nil {
			t.Fatalf("Brain page %q: %v", title, err)
		}
		if p.UpdatedBy != brain.Foreman || p.EditedByPerson {
			t.Errorf("page %q written by %q (edited by person %v), want the foreman", title, p.UpdatedBy, p.EditedByPerson)
		}
	}
	if p, _ := w.Brain.Get(ctx, "What we sell"); !strings.Contains(p.Body, "890 EUR") || p.Summary.Summary != "Handmade stunt kites." {
		t.Errorf("What we sell = %q / %q", p.Body, p.Summary.Summary)
	}
	if p, _ := w.Brain.Get(ctx, foreman.CompanyPageTitle); !strings.Contains(p.Body, "Gmail, Stripe") || !strings.Contains(p.Summary.Summary, "Skyline Kites sells handmade stunt kites") {
		t.Errorf("the page of the answers = %q / %q", p.Body, p.Summary.Summary)
	}

	// One card, three coworkers; approve two.
	o = e.onboarding(t)
	card, err := w.Runs.GetPause(ctx, o.CardID)
	if err != nil || card.Kind != pause.Approval {
		t.Fatalf("open card = %+v, %v; want the coworkers' approval card", card, err)
	}
	var req pause.ApprovalRequest
	json.Unmarshal(card.Request, &req)
	if len(req.Items) != 3 || req.Items[0].Title != "Create Inbox Keeper: answers customer emails" || req.Items[1].Tool != "create_coworker" {
		t.Fatalf("card items = %+v, want the three coworkers by name and role", req.Items)
	}
	if n := len(coworkers(t, w)); n != 0 {
		t.Fatalf("%d coworkers exist before any approval", n)
	}
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/pauses/"+card.ID+"/answer",
		`{"decisions":[{"id":"c1","approved":true},{"id":"c2","approved":false},{"id":"c3","approved":true}]}`, nil); code != 200 {
		t.Fatalf("answer the coworkers card: %d", code)
	}
	if r := waitRun(t, w, o.RunID); r.Status != run.Done {
		t.Fatalf("run = %s (%s), want done", r.Status, r.Error)
	}
	var names []string
	for _, a := range coworkers(t, w) {
		names = append(names, a.Name)
	}
	if !slices.Equal(names, []string{"Inbox Keeper", "Order Clerk"}) {
		t.Errorf("coworkers = %v, want the two approved", names)
	}
	if a, err := w.Agents.ByHandle(ctx, "inbox-keeper"); err != nil || a.Soul != "# You answer Skyline Kites' customer emails" {
		t.Errorf("@inbox-keeper = %+v, %v", a, err)
	}
	if o := e.onboarding(t); o.State != foreman.OnboardingDone {
		t.Errorf("onboarding after the run = %+v, want done", o)
	}
}

// A page the person edited is not overwritten: write_brain_page refuses and
// the Foreman's proposal becomes an approval card; declined, nothing changes.
func TestForemanNeverOverwritesThePersonsPage(t *testing.T) {
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{Onboarding: true, LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	w := e.workspace(t)
	ctx := context.Background()
	mine, err := w.Brain.Create(ctx, brain.NewPage{Title: "What we sell", Body: "# Mine\n\nWritten by me.", By: brain.Person})
	if err != nil {
		t.Fatal(err)
	}
	newBody := "# What we sell\n\nKites."
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "w1", Name: "write_brain_page", Args: fmt.Sprintf(`{"title":"What we sell","body":%q,"summary":"Kites."}`, newBody)}),
		llmtest.Tools(llmtest.ToolCall{ID: "pr1", Name: "propose_brain_edit", Args: fmt.Sprintf(`{"title":"What we sell","body":%q,"base_version":1,"reason":"From the website."}`, newBody)}),
		llmtest.Text("Proposed."),
	)
	o := e.onboarding(t)
	e.answerFirstCard(t, o, "We have no website")
	if r := waitRun(t, w, o.RunID); r.Status != run.Paused {
		t.Fatalf("run = %s (%s), want paused on the proposal", r.Status, r.Error)
	}
	if got := toolResult(fake.Requests(), "w1"); !strings.Contains(got, "the person edited") || !strings.Contains(got, "propose_brain_edit") {
		t.Errorf("write_brain_page on the person's page said %q, want a refusal pointing to propose_brain_edit", got)
	}
	if p, _ := w.Brain.Get(ctx, "What we sell"); p.Body != mine.Body || p.Version != 1 {
		t.Fatalf("the person's page became %q (version %d)", p.Body, p.Version)
	}
	o = e.onboarding(t)
	card, _ := w.Runs.GetPause(ctx, o.CardID)
	var req pause.ApprovalRequest
	json.Unmarshal(card.Request, &req)
	if card.Kind != pause.Approval || len(req.Items) != 1 || !strings.Contains(req.Items[0].Title, "What we sell") {
		t.Fatalf("card = %s %+v, want an approval of the edit", card.Kind, req.Items)
	}
	if code := e.do(t, "POST", "/api/workspaces/"+e.ws+"/pauses/"+card.ID+"/answer", `{"decisions":[{"id":"`+req.Items[0].ID+`","approved":false}]}`, nil); code != 200 {
		t.Fatalf("decline: %d", code)
	}
	waitRun(t, w, o.RunID)
	if p, _ := w.Brain.Get(ctx, "What we sell"); p.Body != mine.Body || p.UpdatedBy != brain.Person {
		t.Errorf("after declining, the page is %q by %s, want the person's", p.Body, p.UpdatedBy)
	}
}

// With FIRECRAWL_API_KEY the Foreman reads the site through Firecrawl's
// /v1/scrape; the key goes only to Firecrawl.
func TestForemanReadsTheSiteThroughFirecrawl(t *testing.T) {
	const key = "fc-test-1f2e3d4c5b6a"
	var got struct {
		auth string
		body map[string]any
	}
	fc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" || r.URL.Path != "/v1/scrape" {
			http.NotFound(w, r)
			return
		}
		got.auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&got.body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"success":true,"data":{"markdown":"# Skyline Kites\n\nHandmade stunt kites for kite schools.",`+
			`"metadata":{"title":"Skyline Kites","sourceURL":"https://skyline.example/","statusCode":200}}}`)
	}))
	defer fc.Close()
	fake := llmtest.New(t)
	e := newEnvWith(t, workspace.Config{Onboarding: true, FirecrawlAPIKey: key, FirecrawlBaseURL: fc.URL,
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	w := e.workspace(t)
	fake.Script(
		llmtest.Tools(llmtest.ToolCall{ID: "fc1", Name: "firecrawl_scrape", Args: `{"url":"https://skyline.example/"}`}),
		llmtest.Text("Read it."),
	)
	o := e.onboarding(t)
	e.answerFirstCard(t, o, "https://skyline.example/")
	if r := waitRun(t, w, o.RunID); r.Status != run.Done {
		t.Fatalf("run = %s (%s)", r.Status, r.Error)
	}
	if got.auth != "Bearer "+key || got.body["url"] != "https://skyline.example/" || !strings.Contains(fmt.Sprint(got.body["formats"]), "markdown") {
		t.Errorf("Firecrawl got auth %q body %v", got.auth, got.body)
	}
	reqs := fake.Requests()
	if out := toolResult(reqs, "fc1"); !strings.Contains(out, "Handmade stunt kites for kite schools") {
		t.Errorf("firecrawl_scrape gave the model %q", out)
	}
	for i, req := range reqs {
		if strings.Contains(string(req.Body), key) {
			t.Errorf("request %d to the model holds the Firecrawl key", i)
		}
	}
	if !strings.Contains(reqs[0].System, "firecrawl_scrape reads a web page") {
		t.Errorf("the Foreman's guide does not mention firecrawl_scrape")
	}
}

// Skip cancels the card, survives a restart, and start runs onboarding
// again; with no model the stopped run says so and resumes on start. A
// workspace joined from another device and one opened without Onboarding
// start nothing.
func TestOnboardingSkipResumeAndRerun(t *testing.T) {
	e := newEnvWith(t, workspace.Config{Onboarding: true})
	w := e.workspace(t)
	ctx := context.Background()
	base := "/api/workspaces/" + e.ws + "/onboarding"
	first := e.onboarding(t)
	if first.State != foreman.OnboardingRunning || first.CardID == "" || first.AgentID != foreman.AgentID {
		t.Fatalf("first start: %+v, want running with the Foreman's card", first)
	}
	var o foreman.Onboarding
	if code := e.do(t, "POST", base+"/skip", "", &o); code != 200 || o.State != foreman.OnboardingSkipped {
		t.Fatalf("skip: %d %+v", code, o)
	}
	if p, _ := w.Runs.GetPause(ctx, first.CardID); p.Status != pause.Cancelled {
		t.Errorf("the first card after skip is %s, want cancelled", p.Status)
	}
	if r, _ := w.Runs.Get(ctx, first.RunID); r.Status != run.Cancelled {
		t.Errorf("the onboarding run after skip is %s, want cancelled", r.Status)
	}
	if o := e.onboarding(t); o.State != foreman.OnboardingSkipped {
		t.Errorf("after skip: %+v", o)
	}

	// Run again: a new run and card. With no model, answering stops it
	// and says where to set one up; start resumes it in the same chat.
	if code := e.do(t, "POST", base+"/start", "", &o); code != 200 || o.State != foreman.OnboardingRunning || o.CardID == "" || o.RunID == first.RunID {
		t.Fatalf("start again: %d %+v", code, o)
	}
	e.answerFirstCard(t, o, "We have no website")
	if r := waitRun(t, w, o.RunID); r.Status != run.Failed || !strings.Contains(r.Error, "Settings → Models") {
		t.Fatalf("run with no model = %s %q, want failed saying Settings → Models", r.Status, r.Error)
	}
	stopped := e.onboarding(t)
	if stopped.State != foreman.OnboardingRunning || !stopped.Stopped || !stopped.NeedsModel {
		t.Fatalf("after the answers with no model: %+v, want running, stopped, needs_model", stopped)
	}
	// The page of the answers is written with no model.
	waittest.Until(t, "the page of the answers is written", func() bool {
		_, err := w.Brain.Get(ctx, foreman.CompanyPageTitle)
		return err == nil
	})
	if code := e.do(t, "POST", base+"/start", "", &o); code != 200 || o.RunID == stopped.RunID || o.SessionID != stopped.SessionID {
		t.Fatalf("resume: %d %+v, want a new run in the same chat", code, o)
	}
	if r := waitRun(t, w, o.RunID); r.Input != "Go on with the onboarding from where you stopped: use the answers above." {
		t.Errorf("resumed run input = %q", r.Input)
	}

	// A person's edit survives a re-run's page of the answers.
	if _, err := w.Brain.Update(ctx, foreman.CompanyPageTitle, brain.Change{Body: ptr("# Ours\n\nHand-written."), By: brain.Person}); err != nil {
		t.Fatal(err)
	}
	e.do(t, "POST", base+"/skip", "", nil)
	e.do(t, "POST", base+"/start", "", &o)
	e.answerFirstCard(t, o, "We have no website")
	waitRun(t, w, o.RunID)
	time.Sleep(200 * time.Millisecond) // the page of the answers would be written by now
	if p, _ := w.Brain.Get(ctx, foreman.CompanyPageTitle); p.Body != "# Ours\n\nHand-written." {
		t.Errorf("a re-run replaced the person's page with %q", p.Body)
	}

	joined, err := e.home.Join(ctx, "ws_joined1", "Joined")
	if err != nil {
		t.Fatal(err)
	}
	jw, _ := e.home.Workspace(joined.ID)
	if o, err := jw.Foreman.Onboarding(ctx); err != nil || o.State != foreman.OnboardingNew {
		t.Errorf("joined workspace onboarding = %+v, %v; want new", o, err)
	}
	if runs, _ := jw.Runs.List(ctx, run.ListOptions{AgentID: foreman.AgentID}); len(runs) != 0 {
		t.Errorf("a joined workspace started %d Foreman runs", len(runs))
	}

	plain := newEnv(t) // Onboarding off: the zero Config
	if o := plain.onboarding(t); o.State != foreman.OnboardingNew {
		t.Errorf("with Onboarding off: %+v, want new", o)
	}
	pw := plain.workspace(t)
	if runs, _ := pw.Runs.List(ctx, run.ListOptions{}); len(runs) != 0 {
		t.Errorf("with Onboarding off, %d runs started", len(runs))
	}
}

func ptr[T any](v T) *T { return &v }

func toolNames(req llmtest.Request) []string {
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Name)
	}
	return names
}
