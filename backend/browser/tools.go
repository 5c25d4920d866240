package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/secret"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

// Family is the capability id that switches the browser tools on.
const Family = "browser"

// Guide is the capability guide of the browser family, for the prompt next
// to tool.Guide's.
const Guide = `## Browser
- You have your own Chromium; sign-ins and cookies persist between runs. browser_open loads a page; browser_snapshot returns it as text with numbered elements ([12] button "Sign in"); act on those numbers with browser_click, browser_type, browser_select, browser_scroll. Numbers last until the page changes: after a navigation, take a new snapshot.
- Type secrets as ${NAME} (a workspace variable) in browser_type: the value is typed but never shown to you, and snapshots mask it.
- When a page needs a person (a captcha, a two-factor code, a sign-in you lack), call request_takeover saying what they should do; they may also take over on their own. Your browser tools wait meanwhile, and the next result tells you the page you are on.
- file://, browser-internal pages and the Rerun app's own local server are refused.`

// Tools returns the browser tools. Each runs in the browser of env.AgentID,
// starting it when needed; when no browser is installed they fail with an
// error saying what to install.
//
// browser_screenshot returns text naming an image; the runtime gets the PNG
// with TakeImage(result) and attaches it for providers that take images.
func (m *Manager) Tools() []tool.Tool {
	return []tool.Tool{
		{
			Name:   "browser_open",
			Family: Family,
			Description: "Open a web page (http or https) in your browser's current tab, or in a new tab, and wait for it to load. " +
				"Returns the final address and title; call browser_snapshot next to read the page.",
			Schema: schema(`"url":{"type":"string","description":"Address to open, e.g. https://example.com/login."},`+
				`"new_tab":{"type":"boolean","description":"Open in a new tab instead of the current one (default false)."}`, "url"),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					URL    string `json:"url"`
					NewTab bool   `json:"new_tab"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				out, err := o.open(ctx, in.URL, in.NewTab)
				return out, "opened " + o.cutURL(strings.TrimSpace(in.URL), 120), err
			}),
		},
		{
			Name:   "browser_snapshot",
			Family: Family,
			Description: "Read the current tab as text: title and address, headings (#), text, and every interactive element numbered in reading order, " +
				`e.g. [12] button "Sign in", [13] textbox "Email" value="", [14] link "Pricing" href=/pricing, [15] combobox "Country" value="France" options=[…]. ` +
				"Use the numbers with the other browser tools; they stay valid until the page changes. Long pages are cut at 24 KiB: pass the offset the note gives to read on. Password fields show •••.",
			Schema: schema(`"offset":{"type":"integer","minimum":0,"description":"Continue a cut snapshot from this byte offset (from its note); the element numbers stay those of that snapshot."}`),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Offset int `json:"offset"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				if in.Offset < 0 {
					return "", "", fault.Invalid("offset must not be negative")
				}
				out, err := o.snapshot(ctx, in.Offset)
				return out, "read the page", err
			}),
		},
		{
			Name:        "browser_click",
			Family:      Family,
			Description: "Click element [n] of the last snapshot with the mouse (it is scrolled into view first). Says where the page went if the click navigated or opened a tab.",
			Schema:      schema(`"element":{"type":"integer","minimum":1,"description":"Element number from the last browser_snapshot."}`, "element"),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Element *elemArg `json:"element"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				if in.Element == nil {
					return "", "", fault.Invalid("element is required: the number of the element from the last browser_snapshot")
				}
				return o.click(ctx, int(*in.Element))
			}),
		},
		{
			Name:   "browser_type",
			Family: Family,
			Description: "Type text into text field [n] of the last snapshot, replacing what it holds (an empty text clears it); submit presses Enter afterwards. " +
				"Write ${NAME} for a workspace variable (a password, an API key): it is typed, never shown to you, and masked in later snapshots.",
			Schema: schema(`"element":{"type":"integer","minimum":1,"description":"Element number of a textbox from the last browser_snapshot."},`+
				`"text":{"type":"string","description":"Text to type; ${NAME} is replaced by the workspace variable NAME ($${NAME} for a literal ${NAME})."},`+
				`"submit":{"type":"boolean","description":"Press Enter after typing (default false)."}`, "element", "text"),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Element *elemArg `json:"element"`
					Text    *string  `json:"text"`
					Submit  bool     `json:"submit"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				if in.Element == nil || in.Text == nil {
					return "", "", fault.Invalid("element and text are required")
				}
				resolved, values, err := resolveVars(env, *in.Text)
				if err != nil {
					return "", "", err
				}
				o.b.remember(values)
				var check func(host string) error
				if len(values) > 0 {
					check = func(host string) error { return env.CheckSend([]string{*in.Text}, host) }
				}
				return o.typeText(ctx, int(*in.Element), *in.Text, resolved, in.Submit, check)
			}),
		},
		{
			Name:        "browser_select",
			Family:      Family,
			Description: "Choose an option of drop-down [n] (a <select>) of the last snapshot, by its visible text or its value. For other menus, click them open and click the option.",
			Schema: schema(`"element":{"type":"integer","minimum":1,"description":"Element number of a combobox or listbox from the last browser_snapshot."},`+
				`"option":{"type":"string","description":"The option's text as the snapshot lists it, or its value."}`, "element", "option"),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Element *elemArg `json:"element"`
					Option  *string  `json:"option"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				if in.Element == nil || in.Option == nil {
					return "", "", fault.Invalid("element and option are required")
				}
				return o.selectOption(ctx, int(*in.Element), *in.Option)
			}),
		},
		{
			Name:   "browser_scroll",
			Family: Family,
			Description: "Scroll the page with the mouse wheel (direction, amount in CSS pixels, default most of a screen), or scroll inside element [n] when given with a direction, " +
				"or bring element [n] into view when given alone. Element numbers stay valid.",
			Schema: schema(`"direction":{"type":"string","enum":["up","down","left","right"],"description":"Which way to scroll (default down)."},` +
				`"amount":{"type":"integer","minimum":1,"description":"How far, in CSS pixels (default 80% of the viewport)."},` +
				`"element":{"type":"integer","minimum":1,"description":"Element number: scrolled into view, or the area to scroll inside when a direction is given."}`),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Direction string   `json:"direction"`
					Amount    int      `json:"amount"`
					Element   *elemArg `json:"element"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				n := 0
				if in.Element != nil {
					n = int(*in.Element)
				}
				if in.Amount < 0 {
					return "", "", fault.Invalid("amount must be positive")
				}
				return o.scroll(ctx, in.Direction, in.Amount, n)
			}),
		},
		{
			Name:   "browser_wait",
			Family: Family,
			Description: "Wait until the page shows a text, until a text is gone, until element [n] is visible and enabled, or until the page navigates (since your last browser tool call); " +
				"with none of those, just wait timeout_seconds. Default timeout 10 s, at most 60.",
			Schema: schema(`"text":{"type":"string","description":"Wait until the page's text contains this."},` +
				`"text_gone":{"type":"string","description":"Wait until the page's text no longer contains this (e.g. Loading…)."},` +
				`"element":{"type":"integer","minimum":1,"description":"Wait until this element of the last snapshot is visible and enabled."},` +
				`"navigation":{"type":"boolean","description":"Wait until the tab has gone to another page and loaded it."},` +
				`"timeout_seconds":{"type":"number","exclusiveMinimum":0,"maximum":60,"description":"How long to wait at most (default 10)."}`),
			Run: m.runnerFor(maxWait+actionTimeout, func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in waitInput
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				return o.wait(ctx, in)
			}),
		},
		{
			Name:   "browser_screenshot",
			Family: Family,
			Description: "Take a PNG screenshot of what the current tab shows (the viewport), to look at layout, images or charts. " +
				"The image is attached to the result when your model takes images; otherwise read the page with browser_snapshot.",
			Schema: schema(""),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				if err := jsonarg.Decode(input, &struct{}{}); err != nil {
					return "", "", err
				}
				t, png, err := o.screenshot(ctx)
				if err != nil {
					return "", "", err
				}
				u, title := o.p.info(t)
				w, h := o.b.Viewport()
				ref := m.images.put(png)
				return fmt.Sprintf("Screenshot of %s (%q), %d×%d CSS px, %d KiB PNG %s", o.cutURL(u, 200), o.clip(title, 100), w, h, (len(png)+1023)/1024, ref),
					"took a screenshot", nil
			}),
		},
		{
			Name:        "browser_back",
			Family:      Family,
			Description: "Go back one page in the current tab's history, like the Back button.",
			Schema:      schema(""),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				if err := jsonarg.Decode(input, &struct{}{}); err != nil {
					return "", "", err
				}
				out, err := o.back(ctx)
				return out, "went back", err
			}),
		},
		{
			Name:        "browser_tabs",
			Family:      Family,
			Description: "List the open tabs with their numbers, titles and addresses; * marks the current tab.",
			Schema:      schema(""),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				if err := jsonarg.Decode(input, &struct{}{}); err != nil {
					return "", "", err
				}
				out, err := o.tabs(ctx)
				return out, "listed tabs", err
			}),
		},
		{
			Name:        "browser_switch_tab",
			Family:      Family,
			Description: "Make tab n (from browser_tabs) the current tab; the other tools act on the current tab.",
			Schema:      schema(`"tab":{"type":"integer","minimum":1,"description":"Tab number from browser_tabs."}`, "tab"),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Tab *elemArg `json:"tab"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				if in.Tab == nil {
					return "", "", fault.Invalid("tab is required: a tab number from browser_tabs")
				}
				out, err := o.switchTab(ctx, int(*in.Tab))
				return out, fmt.Sprintf("switched to tab %d", int(*in.Tab)), err
			}),
		},
		{
			Name:        "browser_close_tab",
			Family:      Family,
			Description: "Close tab n (default: the current tab). Closing the last tab leaves a blank one.",
			Schema:      schema(`"tab":{"type":"integer","minimum":1,"description":"Tab number from browser_tabs (default: the current tab)."}`),
			Run: m.runner(func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (string, string, error) {
				var in struct {
					Tab *elemArg `json:"tab"`
				}
				if err := jsonarg.Decode(input, &in); err != nil {
					return "", "", err
				}
				n := 0
				if in.Tab != nil {
					n = int(*in.Tab)
				}
				out, err := o.closeTab(ctx, n)
				return out, "closed a tab", err
			}),
		},
	}
}

// schema builds an object schema from property JSON and required names.
func schema(props string, required ...string) json.RawMessage {
	q := make([]string, len(required))
	for i, r := range required {
		q[i] = strconv.Quote(r)
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":[` + strings.Join(q, ",") + `],"additionalProperties":false}`)
}

// action is one tool's work: its result for the model, the last-action text
// for the Desktop panel, or an error.
type action func(ctx context.Context, o *op, env *tool.Env, input json.RawMessage) (out, did string, err error)

// runner wraps an action into a tool's Run: it waits while the person holds
// the browser, starts the browser if needed, bounds the call in time, and
// puts the notes the model must read around the result (the hand-back, a
// restart, dialogs, new tabs, downloads, refused requests), masking typed
// secrets everywhere.
func (m *Manager) runner(act action) func(ctx context.Context, env *tool.Env, input json.RawMessage) (string, error) {
	return m.runnerFor(actionTimeout, act)
}

// runnerFor is runner with the time the action may take.
func (m *Manager) runnerFor(limit time.Duration, act action) func(ctx context.Context, env *tool.Env, input json.RawMessage) (string, error) {
	return func(ctx context.Context, env *tool.Env, input json.RawMessage) (string, error) {
		if env == nil {
			return "", errors.New("browser tools need an agent")
		}
		b, err := m.browser(env.AgentID)
		if err != nil {
			return "", err
		}
		release, handBack, err := b.begin(ctx)
		if err != nil {
			return "", err
		}
		defer release()
		p, err := b.ensure(ctx)
		if err != nil {
			return "", err
		}
		var before []string
		b.mu.Lock()
		if b.stopNote != "" {
			before = append(before, b.stopNote)
			b.stopNote = ""
		}
		b.mu.Unlock()
		o := &op{b: b, p: p}
		if r, ok := env.Vars.(interface{ Redactor() *secret.Redactor }); ok {
			o.vars = r.Redactor()
		}
		if handBack {
			before = append(before, o.handBackNote(ctx))
		}
		actx, cancel := context.WithTimeout(ctx, limit)
		out, did, err := act(actx, o, env, input)
		cancel()
		if err != nil && !p.alive() && !errors.Is(err, context.Canceled) {
			err = errBrowserGone
		}
		if t, terr := p.current(ctx); terr == nil {
			// A page that wandered to a refused address is taken back.
			if blocked := o.leaveBlocked(ctx, t); blocked != "" && err == nil {
				out += fmt.Sprintf(" The page then tried to open %s, the Rerun app's own local server, which was refused; the tab went back.", o.cutURL(blocked, 120))
			}
			p.mu.Lock()
			t.seenNavs = t.navs
			p.mu.Unlock()
		}
		after := p.takeNotes()
		if err == nil && did != "" {
			b.setAction(did)
		}
		wrap := func(s string) string {
			parts := append(before, s)
			parts = append(parts, after...)
			return b.redact(strings.TrimSpace(strings.Join(parts, "\n")))
		}
		if err != nil {
			if len(before) == 0 && len(after) == 0 {
				return "", redactErr(b, err)
			}
			return "", noteErr{msg: wrap(redactErr(b, err).Error()), err: err}
		}
		return wrap(out), nil
	}
}

// handBackNote names the page the person left the browser on.
func (o *op) handBackNote(ctx context.Context) string {
	t, err := o.p.current(ctx)
	if err != nil {
		return "The person took over the browser and handed it back."
	}
	u, title := o.p.info(t)
	return fmt.Sprintf("The person took over the browser and handed it back; the page is now %s (%s). Element numbers from before are void: take a new snapshot.", o.cutURL(u, 300), o.clip(title, 150))
}

// noteErr is an error whose text carries notes along with the failure; it
// still matches the failure's kind with errors.Is.
type noteErr struct {
	msg string
	err error
}

func (e noteErr) Error() string { return e.msg }
func (e noteErr) Unwrap() error { return e.err }

func redactErr(b *Browser, err error) error {
	msg := err.Error()
	if r := b.redact(msg); r != msg {
		return noteErr{msg: r, err: err}
	}
	return err
}

// resolveVars replaces ${NAME} references in text with workspace variables
// and returns the values it used (name → value), to be masked later.
func resolveVars(env *tool.Env, text string) (string, map[string]string, error) {
	values := map[string]string{}
	out, err := secret.Resolve(text, func(name string) (string, bool) {
		if env.Vars == nil {
			return "", false
		}
		v, err := env.Vars.Resolve("${" + name + "}")
		if err != nil {
			return "", false
		}
		values[name] = v
		return v, true
	})
	if err != nil {
		return "", nil, err
	}
	return out, values, nil
}

// elemArg is an element or tab number. Models sometimes send "12" or "[12]"
// for 12; those are taken too.
type elemArg int

func (e *elemArg) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*e = elemArg(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		s = strings.Trim(strings.TrimSpace(s), "[]")
		if n, err := strconv.Atoi(s); err == nil {
			*e = elemArg(n)
			return nil
		}
	}
	return fault.Invalid("%s is not an element number; give the integer shown in brackets in the snapshot, e.g. 12 for [12]", clip(string(b), 40))
}

// images holds screenshots until the runtime takes them.
type images struct {
	mu    sync.Mutex
	n     int
	byRef map[string][]byte
	order []string
}

// maxImages bounds the screenshots kept for the runtime to take.
const maxImages = 8

var imageRef = regexp.MustCompile(`\[image:(browser-[0-9]+)\]`)

func (im *images) put(png []byte) string {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.byRef == nil {
		im.byRef = map[string][]byte{}
	}
	im.n++
	ref := fmt.Sprintf("browser-%d", im.n)
	im.byRef[ref] = png
	im.order = append(im.order, ref)
	for len(im.order) > maxImages {
		delete(im.byRef, im.order[0])
		im.order = im.order[1:]
	}
	return "[image:" + ref + "]"
}

// TakeImage returns the PNG a browser_screenshot result refers to (its
// "[image:browser-N]" marker) and forgets it. The runtime calls it with a
// browser_screenshot result to attach the image for models that take images;
// only the last few screenshots are kept.
func (m *Manager) TakeImage(result string) (png []byte, ok bool) {
	match := imageRef.FindStringSubmatch(result)
	if match == nil {
		return nil, false
	}
	m.images.mu.Lock()
	defer m.images.mu.Unlock()
	png, ok = m.images.byRef[match[1]]
	if ok {
		delete(m.images.byRef, match[1])
	}
	return png, ok
}

// Screenshot returns a PNG of the agent's current tab, for a panel or a
// board thumbnail; it starts the browser if needed.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	p, err := b.ensure(ctx)
	if err != nil {
		return nil, err
	}
	_, png, err := (&op{b: b, p: p}).screenshot(ctx)
	return png, err
}
