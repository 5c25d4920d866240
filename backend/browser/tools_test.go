package browser

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func TestToolsFillAndSubmitAForm(t *testing.T) {
	s, m, env := setup(t, "agent-1")
	env.Vars = vars{"PASSWORD": "hunter2-correct-horse", "EMAIL": "ada@example.com"}

	out := must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/form"})
	if !strings.Contains(out, `("Sign in")`) {
		t.Errorf("open result = %q, want the page title", out)
	}
	snap := must(t, m, env, "browser_snapshot", nil)
	for _, want := range []string{
		"# Sign in",
		`textbox "Email" type=email value=""`,
		`textbox "Password" type=password value=""`,
		`combobox "Country" value="France" options=["France", "Germany", "Italy"]`,
		`checkbox "Remember me" unchecked`,
		`button "Sign in"`,
	} {
		if !strings.Contains(snap, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	email, pass, country := ref(t, snap, `textbox "Email"`), ref(t, snap, `"Password"`), ref(t, snap, "combobox")
	remember, note, submit := ref(t, snap, "checkbox"), ref(t, snap, `textbox "A note"`), ref(t, snap, `button "Sign in"`)

	out = must(t, m, env, "browser_type", map[string]any{"element": email, "text": "${EMAIL}"})
	if strings.Contains(out, "ada@") {
		t.Errorf("type result shows the variable's value: %q", out)
	}
	must(t, m, env, "browser_type", map[string]any{"element": pass, "text": "${PASSWORD}"})
	must(t, m, env, "browser_type", map[string]any{"element": note, "text": "first"})
	must(t, m, env, "browser_type", map[string]any{"element": note, "text": "replaced"})
	if out := must(t, m, env, "browser_select", map[string]any{"element": country, "option": "germany"}); !strings.Contains(out, `Selected "Germany"`) {
		t.Errorf("select result = %q", out)
	}
	must(t, m, env, "browser_click", map[string]any{"element": remember})

	snap = must(t, m, env, "browser_snapshot", nil)
	for n, want := range map[int]string{
		email:    `value="[redacted:EMAIL]"`,
		pass:     `value="•••"`,
		country:  `value="Germany"`,
		remember: "checked",
		note:     `value="replaced"`,
	} {
		if l := line(snap, n); !strings.Contains(l, want) {
			t.Errorf("element [%d] reads %q, want %q", n, l, want)
		}
	}
	if strings.Contains(snap, "hunter2") || strings.Contains(snap, "ada@example.com") {
		t.Fatalf("snapshot shows a variable's value:\n%s", snap)
	}

	out = must(t, m, env, "browser_click", map[string]any{"element": submit})
	if !strings.Contains(out, "/submit") {
		t.Errorf("submit click result = %q, want it to say the tab went to /submit", out)
	}
	if a := m.browsers["agent-1"].LastAction(); a != fmt.Sprintf(`clicked [%d] button "Sign in"`, submit) {
		t.Errorf("LastAction = %q, want the submit click", a)
	}
	got := s.form(0)
	want := map[string]string{"email": "ada@example.com", "password": "hunter2-correct-horse", "country": "de", "remember": "yes", "note": "replaced"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("the site got %s=%q, want %q", k, got[k], v)
		}
	}
	// The site echoes the password into its text: the snapshot masks it.
	snap = must(t, m, env, "browser_snapshot", nil)
	if strings.Contains(snap, "hunter2") || !strings.Contains(snap, "Echo: [redacted:PASSWORD]") {
		t.Errorf("snapshot of the echo page:\n%s\nwant the password masked", snap)
	}
}

func TestTypeSubmitAndVariables(t *testing.T) {
	s, m, env := setup(t, "a") // no variables at all
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/form"})
	snap := must(t, m, env, "browser_snapshot", nil)
	pass := ref(t, snap, `"Password"`)
	mustFail(t, m, env, "browser_type", map[string]any{"element": pass, "text": "${PASSWORD}"}, "no workspace variable named PASSWORD")
	if l := line(must(t, m, env, "browser_snapshot", nil), pass); !strings.Contains(l, `value=""`) {
		t.Errorf("after a failed resolve the field reads %q, want it untouched", l)
	}

	env = agentEnv("a", vars{"PW": "s3cret-value", "PIN": "735"})
	snap = must(t, m, env, "browser_snapshot", nil)
	// Too short to mask in free text, a PIN is still masked as a field's value.
	note := ref(t, snap, `textbox "A note"`)
	must(t, m, env, "browser_type", map[string]any{"element": note, "text": "${PIN}"})
	if l := line(must(t, m, env, "browser_snapshot", nil), note); !strings.Contains(l, `value="[redacted:PIN]"`) {
		t.Errorf("a short secret in a text field reads %q, want it masked", l)
	}
	out := must(t, m, env, "browser_type", map[string]any{"element": ref(t, snap, `"Password"`), "text": "${PW}", "submit": true})
	if !strings.Contains(out, "pressed Enter") || !strings.Contains(out, "/submit") {
		t.Errorf("type+submit result = %q, want Enter pressed and the new page", out)
	}
	if got := s.form(0)["password"]; got != "s3cret-value" {
		t.Errorf("the site got password %q, want the variable's value", got)
	}
	if a := m.browsers["a"].LastAction(); !strings.Contains(a, `"${PW}"`) || strings.Contains(a, "s3cret") {
		t.Errorf("LastAction = %q, want the reference, never the value", a)
	}
}

func TestNavigationBackAndStaleNumbers(t *testing.T) {
	s, m, env := setup(t, "nav")

	mustFail(t, m, env, "browser_click", map[string]any{"element": 1}, "no snapshot of this tab yet")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	snap := must(t, m, env, "browser_snapshot", nil)
	for _, want := range []string{"# Welcome home", "Some text about the site.", "- First item", `link "Next page" href=/next`} {
		if !strings.Contains(snap, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	// An anchor changes the address without loading anything: the click
	// must not wait for a load.
	if out := must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `link "To the end"`)}); !strings.HasSuffix(out, "The address is now "+s.URL+"/#end.") {
		t.Errorf("anchor click result = %q, want the new address and nothing loading", out)
	}
	next := ref(t, snap, `link "Next page"`)
	mustFail(t, m, env, "browser_click", map[string]any{"element": 99}, "no element [99]")
	out := must(t, m, env, "browser_click", map[string]any{"element": next})
	if !strings.Contains(out, `/next ("Next")`) {
		t.Errorf("click result = %q, want the tab's new page", out)
	}
	mustFail(t, m, env, "browser_click", map[string]any{"element": next}, "call browser_snapshot")

	out = must(t, m, env, "browser_back", nil)
	if !strings.Contains(out, `("Home")`) {
		t.Errorf("back result = %q, want the home page", out)
	}
	must(t, m, env, "browser_back", nil) // to / before the anchor
	must(t, m, env, "browser_back", nil) // to about:blank
	mustFail(t, m, env, "browser_back", nil, "no earlier page")

	// A string number, as models sometimes send it, is taken.
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	snap = must(t, m, env, "browser_snapshot", nil)
	must(t, m, env, "browser_click", `{"element": "[`+strconv.Itoa(ref(t, snap, `link "Next page"`))+`]"}`)
	mustFail(t, m, env, "browser_click", `{"element": 1, "button": "right"}`, `unknown field "button"`)
}

func TestWait(t *testing.T) {
	s, m, env := setup(t, "w")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/slow"})
	snap := must(t, m, env, "browser_snapshot", nil)
	later := ref(t, snap, `button "Later"`)
	if !strings.Contains(line(snap, later), "disabled") {
		t.Errorf("button reads %q, want disabled", line(snap, later))
	}
	s.ready.Store(true)
	if out := must(t, m, env, "browser_wait", map[string]any{"text": "Ready now", "timeout_seconds": 60}); !strings.Contains(out, `The page shows "Ready now"`) {
		t.Errorf("wait text result = %q", out)
	}
	must(t, m, env, "browser_wait", map[string]any{"text_gone": "Loading…"})
	must(t, m, env, "browser_wait", map[string]any{"element": later})
	mustFail(t, m, env, "browser_wait", map[string]any{"text": "Never shown", "timeout_seconds": 0.3}, "timed out after 300ms")
	mustFail(t, m, env, "browser_wait", map[string]any{"text": "a", "navigation": true}, "give one of")
	mustFail(t, m, env, "browser_wait", map[string]any{"timeout_seconds": 61}, "at most 60")

	// The link navigates 400 ms after the click returns.
	must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `link "Go later"`)})
	out := must(t, m, env, "browser_wait", map[string]any{"navigation": true, "timeout_seconds": 60})
	if !strings.Contains(out, "/next") {
		t.Errorf("wait navigation result = %q, want the new page", out)
	}
	start := time.Now()
	must(t, m, env, "browser_wait", map[string]any{"timeout_seconds": 0.2})
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("a plain wait of 0.2 s returned after %s", d)
	}
}

func TestTabs(t *testing.T) {
	s, m, env := setup(t, "tabs")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/tabs"})
	snap := must(t, m, env, "browser_snapshot", nil)
	if l := line(snap, ref(t, snap, "link")); !strings.Contains(l, "(new tab)") {
		t.Errorf("target=_blank link reads %q, want it marked", l)
	}
	out := must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `link "Next in a new tab"`)})
	if !strings.Contains(out, "opened a new tab (tab 2)") {
		t.Errorf("click result = %q, want the new tab announced", out)
	}
	snap2 := must(t, m, env, "browser_snapshot", nil)
	if !strings.HasPrefix(snap2, "Tab 2 of 2") || !strings.Contains(snap2, "# Next page") {
		t.Errorf("snapshot after the click is not the new tab:\n%s", snap2)
	}
	must(t, m, env, "browser_switch_tab", map[string]any{"tab": 1})
	// window.open from a click is a user gesture: the popup blocker lets it through.
	out = must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Open the form"`)})
	if !strings.Contains(out, "(tab 3)") {
		t.Errorf("window.open click result = %q, want tab 3", out)
	}
	list := must(t, m, env, "browser_tabs", nil)
	for _, want := range []string{` tab 1: "Tabs"`, ` tab 2: "Next"`, `* tab 3: "Sign in"`} {
		if !strings.Contains(list, want) {
			t.Errorf("tabs lack %q:\n%s", want, list)
		}
	}
	if out := must(t, m, env, "browser_close_tab", nil); !strings.Contains(out, "Closed tab 3") {
		t.Errorf("close result = %q", out)
	}
	must(t, m, env, "browser_close_tab", map[string]any{"tab": 1})
	list = must(t, m, env, "browser_tabs", nil)
	if !strings.HasPrefix(list, "1 tab(s)") || !strings.Contains(list, `* tab 2: "Next"`) {
		t.Errorf("tabs after closing two:\n%s", list)
	}
	mustFail(t, m, env, "browser_switch_tab", map[string]any{"tab": 7}, "no tab 7")
	must(t, m, env, "browser_close_tab", nil)
	if list := must(t, m, env, "browser_tabs", nil); !strings.Contains(list, "about:blank") {
		t.Errorf("closing the last tab left %q, want a blank tab", list)
	}
	out = must(t, m, env, "browser_open", map[string]any{"url": s.URL, "new_tab": true})
	if !strings.Contains(out, "in a new tab") {
		t.Errorf("open new_tab result = %q", out)
	}
}

func TestScreenshot(t *testing.T) {
	s, m, env := setup(t, "shot")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL})
	out := must(t, m, env, "browser_screenshot", nil)
	png, ok := m.TakeImage(out)
	if !ok {
		t.Fatalf("TakeImage(%q) found no image", out)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
	if _, again := m.TakeImage(out); again {
		t.Error("TakeImage returned the same image twice")
	}
	if !strings.Contains(out, `("Home")`) {
		t.Errorf("screenshot result = %q, want the page named", out)
	}
}

func TestScroll(t *testing.T) {
	s, m, env := setup(t, "scroll")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/long"})
	snap := must(t, m, env, "browser_snapshot", nil)
	out := must(t, m, env, "browser_scroll", map[string]any{"direction": "down", "amount": 500})
	if !strings.Contains(out, "now at 500 of") {
		t.Errorf("scroll result = %q, want the page at 500", out)
	}
	out = must(t, m, env, "browser_scroll", map[string]any{"element": ref(t, snap, `button "At the end"`)})
	if !strings.Contains(out, "into view") {
		t.Errorf("scroll to element = %q", out)
	}
	if snap := must(t, m, env, "browser_snapshot", nil); strings.Contains(snap, "scrolled to 0 of") || strings.Contains(snap, "scrolled to 500 of") {
		t.Errorf("after scrolling to the end the snapshot says:\n%s", snap[:200])
	}
	mustFail(t, m, env, "browser_scroll", map[string]any{"direction": "sideways"}, "is not up, down")
}

func TestRefusals(t *testing.T) {
	app, appHits := appServer(t)
	s := newSite(t, app)
	m := testManager(t, func(c *Config) { c.Forbidden = []string{addrOf(app), "localhost:" + port(app)} })
	env := agentEnv("guard", nil)
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/local"})
	for _, u := range []string{
		"file:///etc/passwd",
		"chrome://settings",
		"about:config",
		"javascript:alert(1)",
		app.URL + "/api/agents",
		"http://localhost:" + port(app) + "/",
		"http://[::1]:" + port(app) + "/",
		"localhost:" + port(app),
	} {
		mustFail(t, m, env, "browser_open", map[string]any{"url": u}, "refused")
	}
	must(t, m, env, "browser_open", map[string]any{"url": "about:blank"})
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/local"})

	mustFail(t, m, env, "browser_open", map[string]any{"url": s.URL + "/redirect-local"}, "refused")
	snap := must(t, m, env, "browser_snapshot", nil)
	if !strings.Contains(snap, "# Local") {
		t.Errorf("after a refused redirect the tab shows:\n%s\nwant it back on /local", snap)
	}
	out := must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `link "The app"`)})
	if !strings.Contains(out, "refused") {
		t.Errorf("clicking a link to the app = %q, want it refused", out)
	}
	snap = must(t, m, env, "browser_snapshot", nil)
	if !strings.Contains(snap, "# Local") {
		t.Errorf("after a refused link the tab shows:\n%s", snap)
	}
	out = must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `link "The app in a new tab"`)})
	if !strings.Contains(out, "Refused 1 request(s)") {
		t.Errorf("a new tab to the app = %q, want the refusal noted", out)
	}
	must(t, m, env, "browser_close_tab", nil)
	snap = must(t, m, env, "browser_snapshot", nil)
	out = must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Fetch"`)})
	must(t, m, env, "browser_wait", map[string]any{"timeout_seconds": 0.3})
	if tabs := must(t, m, env, "browser_tabs", nil); !strings.Contains(tabs, `"blocked"`) {
		t.Errorf("a fetch() to the app was not blocked: %s (click: %s)", tabs, out)
	}
	if *appHits != 0 {
		t.Errorf("the app's server got %d requests, want none", *appHits)
	}
}

func TestDialogsAreAnsweredAndReported(t *testing.T) {
	s, m, env := setup(t, "dlg")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/dialog"})
	snap := must(t, m, env, "browser_snapshot", nil)
	out := must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Delete"`)})
	if !strings.Contains(out, `confirm dialog "Delete it?"; it was accepted`) {
		t.Errorf("click result = %q, want the dialog reported", out)
	}
	if snap := must(t, m, env, "browser_snapshot", nil); !strings.Contains(snap, "\nyes") {
		t.Errorf("after the dialog the page reads:\n%s", snap)
	}
}

func TestDownloadsLandInTheAgentsFolder(t *testing.T) {
	s, m, env := setup(t, "dl")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/downloads"})
	snap := must(t, m, env, "browser_snapshot", nil)
	out := must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, "link")})
	path := filepath.Join(m.cfg.AgentsDir, "dl", "files", "downloads", "report.csv")
	waittest.Until(t, "the download note", func() bool {
		if strings.Contains(out, "downloads/report.csv") {
			return true
		}
		out += must(t, m, env, "browser_tabs", nil)
		return false
	})
	if !strings.Contains(out, "Downloaded report.csv (8 bytes) to downloads/report.csv") {
		t.Errorf("no download note in %q", out)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a,b\n1,2\n" {
		t.Errorf("download file: %q, %v", b, err)
	}
}

func TestNoBrowserInstalled(t *testing.T) {
	m, err := New(Config{AgentsDir: t.TempDir(), Bin: filepath.Join(t.TempDir(), "no-chrome")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = call(t, m, agentEnv("x", nil), "browser_open", map[string]any{"url": "https://example.com"})
	if !errors.Is(err, ErrNoBrowser) || !strings.Contains(err.Error(), "RERUN_CHROME") {
		t.Fatalf("err = %v, want ErrNoBrowser naming RERUN_CHROME", err)
	}
}

func TestBadAgentIDs(t *testing.T) {
	m, err := New(Config{AgentsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "..", "a/b", `a\b`, "."} {
		if _, err := m.For(t.Context(), id); !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("For(%q) = %v, want ErrInvalid", id, err)
		}
	}
}

func TestSnapshotReadsRichPages(t *testing.T) {
	s, m, env := setup(t, "rich")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/rich"})
	must(t, m, env, "browser_wait", map[string]any{"text": "Inside shadow"})
	snap := must(t, m, env, "browser_snapshot", nil)
	for _, want := range []string{"## Section", "Name | Price", "Tea | 3 €", "Inside shadow", `button "Shadow button"`, `clickable "Div that acts"`, "In the frame", `button "Frame button"`, `button "Accept"`} {
		if !strings.Contains(snap, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	for _, hidden := range []string{"HIDDEN TEXT", "ARIA HIDDEN"} {
		if strings.Contains(snap, hidden) {
			t.Errorf("snapshot shows hidden %q", hidden)
		}
	}
	for _, tc := range []struct{ el, done string }{
		{`button "Shadow button"`, "Shadow done"}, {`clickable "Div that acts"`, "Div done"}, {`button "Frame button"`, "Frame done"},
	} {
		must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, tc.el)})
		if after := must(t, m, env, "browser_snapshot", nil); !strings.Contains(after, tc.done) {
			t.Errorf("clicking %s did not reach it:\n%s", tc.el, after)
		}
		snap = must(t, m, env, "browser_snapshot", nil)
	}
	// A button under a fixed banner: the model is told what covers it.
	mustFail(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Under banner"`)}, `covered by div#banner "Cookie banner Accept"`)
	must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Accept"`)})
	snap = must(t, m, env, "browser_snapshot", nil)
	must(t, m, env, "browser_click", map[string]any{"element": ref(t, snap, `button "Under banner"`)})
	if after := must(t, m, env, "browser_snapshot", nil); !strings.Contains(after, "Under done") {
		t.Errorf("the button under the removed banner was not clicked:\n%s", after)
	}
}

func TestLongSnapshotPages(t *testing.T) {
	s, m, env := setup(t, "long")
	must(t, m, env, "browser_open", map[string]any{"url": s.URL + "/huge"})
	first := must(t, m, env, "browser_snapshot", nil)
	if len(first) > MaxSnapshot+300 {
		t.Fatalf("snapshot is %d bytes, want at most about %d", len(first), MaxSnapshot)
	}
	i := strings.Index(first, "with offset ")
	if i < 0 {
		t.Fatalf("a cut snapshot has no note on how to go on:\n…%s", first[len(first)-300:])
	}
	var off int
	fmt.Sscan(first[i+len("with offset "):], &off)
	// Page on to the part with the 1000th paragraph.
	var part string
	for tries := 0; tries < 10; tries++ {
		part = must(t, m, env, "browser_snapshot", map[string]any{"offset": off})
		if strings.Contains(part, `link "Link 1000"`) {
			break
		}
		j := strings.Index(part, "with offset ")
		if j < 0 {
			t.Fatal("ran out of parts before Link 1000")
		}
		fmt.Sscan(part[j+len("with offset "):], &off)
	}
	// Numbers in a later part belong to the same snapshot.
	must(t, m, env, "browser_click", map[string]any{"element": ref(t, part, `link "Link 1000"`)})
	if out := must(t, m, env, "browser_tabs", nil); !strings.Contains(out, "/next?from=1000") {
		t.Errorf("clicking a link from a later part went to %s", out)
	}
	mustFail(t, m, env, "browser_snapshot", map[string]any{"offset": off}, "out of date")
}
