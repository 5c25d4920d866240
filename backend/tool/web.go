package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
	"github.com/rerun-build/rerun-desktop/backend/secret"
)

// Limits of the web family.
const (
	FetchTimeout   = 20 * time.Second
	MaxFetchBytes  = 2 << 20   // bytes of response body read
	MaxFetchText   = 128 << 10 // bytes of text returned to the model
	MaxRedirects   = 5
	maxFetchLinks  = 100
	maxLinkBytes   = 300
	maxHTMLDepth   = 512
	fetchUserAgent = "RerunDesktop/1 (AI coworker; fetch_url)"
)

// fetchLimits are the knobs of one fetch; tests shrink them.
type fetchLimits struct {
	timeout   time.Duration
	maxBody   int
	maxText   int
	redirects int
	// redactor masks the variables' values in the body before it is cut
	// (nil: none to mask).
	redactor *secret.Redactor
	// checkHost refuses a redirect to a host the request's variables may
	// not be sent to (nil: any host).
	checkHost func(host string) error
}

var defaultFetchLimits = fetchLimits{timeout: FetchTimeout, maxBody: MaxFetchBytes, maxText: MaxFetchText, redirects: MaxRedirects}

func webTools() []Tool {
	return []Tool{{
		Name:   "fetch_url",
		Family: "web",
		Description: "Fetch a web page or API over http or https (GET or POST). HTML comes back as readable text (scripts, styles " +
			"and navigation removed; headings as #, list items as -, links numbered [n] with a link list at the end); JSON and " +
			"other text as is; binary content is only described. Returns the status, content type, final URL (after at most 5 " +
			"redirects) and the text, cut at 128 KiB. Times out after 20 s. Addresses on this computer and the local network " +
			"are reachable too.",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"url":{"type":"string","description":"Absolute http:// or https:// URL."},` +
			`"method":{"type":"string","enum":["GET","POST"],"description":"HTTP method (default GET)."},` +
			`"headers":{"type":"object","additionalProperties":{"type":"string"},"description":"Extra request headers, e.g. {\"Authorization\": \"Bearer ${API_TOKEN}\"}; ${NAME} is replaced by the workspace variable NAME."},` +
			`"body":{"type":"string","description":"Request body for POST (set Content-Type in headers; default application/json when the body looks like JSON)."}` +
			`},"required":["url"],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			var in fetchInput
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", err
			}
			written := in.written()
			if err := in.resolve(env); err != nil {
				return "", err
			}
			lim := defaultFetchLimits
			lim.redactor = env.redactor()
			lim.checkHost = func(host string) error { return env.CheckSend(written, host) }
			if u, err := url.Parse(strings.TrimSpace(in.URL)); err == nil && u.Host != "" {
				if err := lim.checkHost(u.Host); err != nil {
					return "", err
				}
			}
			return fetch(ctx, in, lim)
		},
		// A GET only reads; any other method may change what it reaches.
		Acts: func(input json.RawMessage) bool {
			m := argsOf(input).str("method")
			return m != "" && !strings.EqualFold(m, "GET")
		},
		Preview: previewFetch,
	}}
}

// previewFetch shows a request as it goes out: method, URL, headers, body.
func previewFetch(_ *Env, input json.RawMessage) (string, string, string) {
	in := argsOf(input)
	method := strings.ToUpper(in.str("method"))
	if method == "" {
		method = "GET"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", method, in.str("url"))
	for _, kv := range in.sortedPairs("headers") {
		fmt.Fprintf(&b, "\n%s: %s", kv[0], kv[1])
	}
	if body := in.str("body"); body != "" {
		b.WriteString("\n\n" + body)
	}
	return "Send a " + method + " request", "target", b.String()
}

type fetchInput struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// written is the URL and the header values as the model wrote them, with
// their ${NAME} references.
func (in *fetchInput) written() []string {
	out := []string{in.URL}
	for _, k := range slices.Sorted(maps.Keys(in.Headers)) {
		out = append(out, in.Headers[k])
	}
	return out
}

// resolve replaces ${NAME} variable references in the URL and the header
// values, all or nothing.
func (in *fetchInput) resolve(env *Env) error {
	u, err := env.resolve(in.URL)
	if err != nil {
		return fault.Invalid("url: %v", err)
	}
	headers := make(map[string]string, len(in.Headers))
	for k, v := range in.Headers {
		if headers[k], err = env.resolve(v); err != nil {
			return fault.Invalid("header %s: %v", k, err)
		}
	}
	in.URL, in.Headers = u, headers
	return nil
}

// fetch performs one request and renders the answer for the model. Loopback
// and private addresses are deliberately not blocked: the agent runs on the
// user's own computer, with the user's own network reach, and local
// services (a dev server, Ollama) are legitimate targets. The app's own API
// on 127.0.0.1 authenticates every request, so reaching it gains nothing.
func fetch(ctx context.Context, in fetchInput, lim fetchLimits) (string, error) {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || in.URL == "" {
		return "", fault.Invalid("url %q is not a valid URL; give an absolute one like https://example.com/page", in.URL)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fault.Invalid("url scheme %q is not supported; only http:// and https:// URLs can be fetched", u.Scheme)
	}
	if u.Host == "" {
		return "", fault.Invalid("url %q has no host; give an absolute one like https://example.com/page", in.URL)
	}
	method := strings.ToUpper(in.Method)
	switch method {
	case "":
		method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		return "", fault.Invalid("method %q is not supported; use GET or POST", in.Method)
	}
	if method == http.MethodGet && in.Body != "" {
		return "", fault.Invalid("a body needs method POST; set method to POST or drop the body")
	}
	ctx, cancel := context.WithTimeout(ctx, lim.timeout)
	defer cancel()
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(in.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return "", fault.Invalid("cannot build the request: %v", err)
	}
	req.Header.Set("User-Agent", fetchUserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5")
	if method == http.MethodPost {
		ct := "text/plain; charset=utf-8"
		if json.Valid([]byte(in.Body)) {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range in.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			return "", fault.Invalid("header %q is set by the HTTP client; leave it out", k)
		}
		req.Header.Set(k, v)
	}

	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(next *http.Request, via []*http.Request) error {
			if len(via) > lim.redirects {
				return fault.Invalid("stopped after %d redirects (the next was to %s); fetch the final URL directly", lim.redirects, next.URL.Redacted())
			}
			if next.URL.Scheme != "http" && next.URL.Scheme != "https" {
				return fault.Invalid("the server redirected to a %s: URL, which cannot be fetched", next.URL.Scheme)
			}
			if lim.checkHost != nil {
				if err := lim.checkHost(next.URL.Host); err != nil {
					return fault.Invalid("the server redirected to %s: %s", next.URL.Redacted(), fault.Message(err))
				}
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) && errors.Is(uerr.Err, fault.ErrInvalid) {
			return "", uerr.Err
		}
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return "", fault.Invalid("fetching %s took longer than %s and was stopped", u.Redacted(), lim.timeout)
		}
		return "", fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()

	// Read past the cut what a value reaching across it needs, to mask
	// it before cutting.
	over := maskContext(lim.redactor)
	raw, err := io.ReadAll(io.LimitReader(resp.Body, int64(lim.maxBody+over)+1))
	if err != nil {
		return "", fmt.Errorf("read answer of %s: %w", u.Redacted(), err)
	}
	cut := len(raw) > lim.maxBody
	if cut || lim.redactor != nil {
		raw = []byte(lim.redactor.RedactRange(string(raw), 0, lim.maxBody))
	}
	contentType := resp.Header.Get("Content-Type")
	if contentType == "" {
		contentType = http.DetectContentType(raw)
	}
	final := resp.Request.URL

	var b strings.Builder
	fmt.Fprintf(&b, "status: %s\ncontent_type: %s\nfinal_url: %s\n", resp.Status, contentType, final.Redacted())
	if cut {
		fmt.Fprintf(&b, "[the body is larger than %d bytes; only the first %d were read]\n", lim.maxBody, lim.maxBody)
	}
	b.WriteString("\n")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	switch {
	case len(raw) == 0:
		b.WriteString("(empty body)")
	case mediaType == "text/html" || mediaType == "application/xhtml+xml":
		text, links := htmlToText(decodeCharset(raw, contentType), final)
		b.WriteString(clipMasked(lim.redactor, text, lim.maxText))
		if len(links) > 0 {
			b.WriteString("\n\nLinks:\n")
			for i, l := range links {
				fmt.Fprintf(&b, "[%d] %s\n", i+1, l)
			}
		}
	case isTextType(mediaType):
		b.WriteString(clipMasked(lim.redactor, string(decodeCharset(raw, contentType)), lim.maxText))
	default:
		fmt.Fprintf(&b, "[binary content: %d bytes of %s, not shown]", len(raw), mediaType)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// isTextType reports whether a media type is text the model can read as is.
func isTextType(t string) bool {
	switch {
	case strings.HasPrefix(t, "text/"),
		strings.HasSuffix(t, "+json"), strings.HasSuffix(t, "+xml"),
		t == "application/json", t == "application/xml", t == "application/javascript",
		t == "application/x-ndjson", t == "application/yaml", t == "application/x-yaml",
		t == "application/x-www-form-urlencoded", t == "application/graphql-response+json":
		return true
	}
	return false
}

// decodeCharset converts a body to UTF-8 using the Content-Type charset or,
// for HTML, a <meta> declaration.
func decodeCharset(raw []byte, contentType string) []byte {
	r, err := charset.NewReader(bytes.NewReader(raw), contentType)
	if err != nil {
		return raw
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return raw
	}
	return out
}

// skipped are the elements whose content is not part of a page's reading text.
var skipped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Nav: true, atom.Svg: true, atom.Iframe: true, atom.Head: true,
	atom.Canvas: true, atom.Object: true, atom.Select: true,
}

// blocks are the elements that start and end on their own line.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Footer: true, atom.Aside: true, atom.Ul: true, atom.Ol: true,
	atom.Table: true, atom.Tr: true, atom.Blockquote: true, atom.Figure: true, atom.Figcaption: true,
	atom.Form: true, atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Hr: true, atom.Pre: true,
	atom.Address: true, atom.Details: true, atom.Summary: true, atom.Body: true, atom.Caption: true,
}

// htmlToText renders an HTML page as readable text: the title, then the body
// with headings as "#", list items as "-", link texts followed by [n], and
// the numbered absolute link URLs.
func htmlToText(page []byte, base *url.URL) (string, []string) {
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return string(page), nil
	}
	w := &textWriter{base: base, seen: map[string]int{}}
	if t := findTitle(doc, 0); t != "" {
		w.block(2)
		w.text("Title: " + t)
		w.block(2)
	}
	w.walk(doc, 0)
	return strings.TrimSpace(string(w.buf)), w.links
}

func findTitle(n *html.Node, depth int) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		return strings.Join(strings.Fields(nodeText(n)), " ")
	}
	if depth > maxHTMLDepth {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := findTitle(c, depth+1); t != "" {
			return t
		}
	}
	return ""
}

func nodeText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return b.String()
}

// textWriter accumulates readable text, collapsing whitespace outside <pre>.
type textWriter struct {
	buf   []byte
	pre   int
	base  *url.URL
	links []string
	seen  map[string]int // link URL → its number
}

func (w *textWriter) walk(n *html.Node, depth int) {
	if depth > maxHTMLDepth {
		return
	}
	switch n.Type {
	case html.TextNode:
		if w.pre > 0 {
			w.buf = append(w.buf, n.Data...)
		} else {
			w.text(n.Data)
		}
		return
	case html.ElementNode:
	case html.DocumentNode:
		w.children(n, depth)
		return
	default:
		return
	}
	a := n.DataAtom
	if skipped[a] {
		return
	}
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.block(2)
		w.text(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
		w.children(n, depth)
		w.block(2)
	case atom.Li:
		w.block(1)
		w.text("- ")
		w.children(n, depth)
		w.block(1)
	case atom.Br:
		w.buf = append(bytes.TrimRight(w.buf, " "), '\n')
	case atom.Td, atom.Th:
		w.text(" ")
		w.children(n, depth)
		w.text(" ")
	case atom.Img:
		if alt := strings.TrimSpace(attr(n, "alt")); alt != "" {
			w.text(" [image: " + alt + "] ")
		}
	case atom.A:
		w.children(n, depth)
		if i := w.link(attr(n, "href")); i > 0 {
			w.text(fmt.Sprintf(" [%d]", i))
		}
	case atom.Pre:
		w.block(2)
		w.pre++
		w.children(n, depth)
		w.pre--
		w.block(2)
	default:
		if blocks[a] {
			gap := 1
			if a == atom.P || a == atom.Blockquote || a == atom.Table || a == atom.Ul || a == atom.Ol {
				gap = 2
			}
			w.block(gap)
			w.children(n, depth)
			w.block(gap)
			return
		}
		w.children(n, depth)
	}
}

func (w *textWriter) children(n *html.Node, depth int) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, depth+1)
	}
}

// text appends s with runs of whitespace collapsed to one space and no
// space at the start of a line.
func (w *textWriter) text(s string) {
	for _, r := range s {
		if unicode.IsSpace(r) {
			if len(w.buf) == 0 || w.buf[len(w.buf)-1] == ' ' || w.buf[len(w.buf)-1] == '\n' {
				continue
			}
			w.buf = append(w.buf, ' ')
			continue
		}
		w.buf = utf8.AppendRune(w.buf, r)
	}
}

// block ends the current line and leaves n-1 blank lines (at most), never
// at the very start.
func (w *textWriter) block(n int) {
	w.buf = bytes.TrimRight(w.buf, " ")
	if len(w.buf) == 0 {
		return
	}
	have := len(w.buf) - len(bytes.TrimRight(w.buf, "\n"))
	for ; have < n; have++ {
		w.buf = append(w.buf, '\n')
	}
}

// link records an href and returns its number, 0 when it is not worth
// listing (a fragment, javascript:, unparsable) or the list is full.
func (w *textWriter) link(href string) int {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return 0
	}
	ref, err := url.Parse(href)
	if err != nil {
		return 0
	}
	abs := ref
	if w.base != nil {
		abs = w.base.ResolveReference(ref)
	}
	switch abs.Scheme {
	case "http", "https", "mailto":
	default:
		return 0
	}
	s := abs.String()
	if len(s) > maxLinkBytes {
		return 0
	}
	if i, ok := w.seen[s]; ok {
		return i
	}
	if len(w.links) == maxFetchLinks {
		return 0
	}
	w.links = append(w.links, s)
	w.seen[s] = len(w.links)
	return len(w.links)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
