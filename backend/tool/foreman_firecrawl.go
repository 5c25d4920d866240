package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

// FirecrawlDefaultURL is Firecrawl's hosted API.
const FirecrawlDefaultURL = "https://api.firecrawl.dev"

// Firecrawl reaches Firecrawl's scrape API (POST /v1/scrape). Key returns
// the API key at call time (a workspace variable, else the environment);
// it goes into the Authorization header only, never into a result or an
// error.
type Firecrawl struct {
	BaseURL string // "" = FirecrawlDefaultURL
	Key     func() string
	Client  *http.Client // nil = a client with a 60 s timeout
}

// maxFirecrawlBody bounds what is read of Firecrawl's answer.
const maxFirecrawlBody = 4 << 20

// FirecrawlPage is what firecrawl_scrape hands the model: the page as
// markdown, with its title and address.
type FirecrawlPage struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	Markdown string `json:"markdown"`
}

// ParseFirecrawlScrape reads the body of a /v1/scrape answer:
// {"success":true,"data":{"markdown":…,"metadata":{"title":…,"sourceURL":…}}}
// or {"success":false,"error":"…"}.
func ParseFirecrawlScrape(body []byte) (FirecrawlPage, error) {
	var out struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
		Data    *struct {
			Markdown string `json:"markdown"`
			Metadata struct {
				Title     string `json:"title"`
				SourceURL string `json:"sourceURL"`
				URL       string `json:"url"`
			} `json:"metadata"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return FirecrawlPage{}, fmt.Errorf("Firecrawl answered something that is not its JSON: %v", err)
	}
	if out.Success == nil || !*out.Success {
		msg := strings.TrimSpace(out.Error)
		if msg == "" {
			msg = "no reason given"
		}
		return FirecrawlPage{}, fmt.Errorf("Firecrawl could not scrape the page: %s", clip(msg, 500))
	}
	if out.Data == nil {
		return FirecrawlPage{}, fmt.Errorf("Firecrawl answered success without data")
	}
	p := FirecrawlPage{Title: out.Data.Metadata.Title, URL: out.Data.Metadata.SourceURL, Markdown: out.Data.Markdown}
	if p.URL == "" {
		p.URL = out.Data.Metadata.URL
	}
	return p, nil
}

// Scrape fetches one page through Firecrawl as markdown.
func (f Firecrawl) Scrape(ctx context.Context, pageURL string) (page FirecrawlPage, err error) {
	u, err := url.Parse(strings.TrimSpace(pageURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return FirecrawlPage{}, fault.Invalid("url %q is not a web address; send a full http(s) URL such as https://example.com", pageURL)
	}
	key := ""
	if f.Key != nil {
		key = strings.TrimSpace(f.Key())
	}
	if key == "" {
		return FirecrawlPage{}, fault.Invalid("FIRECRAWL_API_KEY is not set any more; read the site with the browser tools instead")
	}
	// Firecrawl may quote what it was sent in its error text: the key never
	// reaches the model (a key from the environment is no workspace
	// variable, so the runtime's redaction would not catch it).
	defer func() {
		if err != nil && strings.Contains(err.Error(), key) {
			err = errors.New(strings.ReplaceAll(err.Error(), key, "[FIRECRAWL_API_KEY]"))
		}
		page.Title = strings.ReplaceAll(page.Title, key, "[FIRECRAWL_API_KEY]")
		page.Markdown = strings.ReplaceAll(page.Markdown, key, "[FIRECRAWL_API_KEY]")
	}()
	base := strings.TrimRight(f.BaseURL, "/")
	if base == "" {
		base = FirecrawlDefaultURL
	}
	reqBody, _ := json.Marshal(map[string]any{"url": u.String(), "formats": []string{"markdown"}, "onlyMainContent": true})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/scrape", bytes.NewReader(reqBody))
	if err != nil {
		return FirecrawlPage{}, fmt.Errorf("Firecrawl's address %q is not usable: check FIRECRAWL_BASE_URL", base)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	client := f.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		// The error names the address, never the key (it is in a header).
		return FirecrawlPage{}, fmt.Errorf("reach Firecrawl: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFirecrawlBody))
	if err != nil {
		return FirecrawlPage{}, fmt.Errorf("read Firecrawl's answer: %v", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return FirecrawlPage{}, fmt.Errorf("Firecrawl refused the API key (HTTP %d): the person should check FIRECRAWL_API_KEY; read the site with the browser tools meanwhile", resp.StatusCode)
	case resp.StatusCode == http.StatusPaymentRequired || resp.StatusCode == http.StatusTooManyRequests:
		return FirecrawlPage{}, fmt.Errorf("Firecrawl is out of credits or rate-limited (HTTP %d); read the site with the browser tools instead", resp.StatusCode)
	}
	p, err := ParseFirecrawlScrape(body)
	if err != nil {
		if resp.StatusCode >= 300 {
			return FirecrawlPage{}, fmt.Errorf("Firecrawl answered HTTP %d: %v", resp.StatusCode, err)
		}
		return FirecrawlPage{}, err
	}
	if p.URL == "" {
		p.URL = u.String()
	}
	return p, nil
}

// FirecrawlTool is firecrawl_scrape over f.
func FirecrawlTool(f Firecrawl) Tool {
	return Tool{
		Name:   "firecrawl_scrape",
		Family: ForemanFamily,
		Description: "Read one web page through Firecrawl and get its main content as markdown. Faster than the browser for reading " +
			"a company's website: start with its home page, then the pages its links name (about, pricing, products, customers).",
		Schema: json.RawMessage(`{"type":"object","properties":{` +
			`"url":{"type":"string","description":"The full address of the page, e.g. https://example.com/about."}` +
			`},"required":["url"],"additionalProperties":false}`),
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (string, error) {
			var in struct {
				URL string `json:"url"`
			}
			if err := jsonarg.Decode(input, &in); err != nil {
				return "", err
			}
			p, err := f.Scrape(ctx, in.URL)
			if err != nil {
				return "", err
			}
			return env.clip(fmt.Sprintf("# %s\n(%s)\n\n%s", p.Title, p.URL, p.Markdown), maxFirecrawlOutput), nil
		},
	}
}

// maxFirecrawlOutput bounds one scraped page handed to the model.
const maxFirecrawlOutput = 48 << 10
