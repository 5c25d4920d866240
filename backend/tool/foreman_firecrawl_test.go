package tool_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/tool"
)

func TestFirecrawlScrapeErrors(t *testing.T) {
	const key = "fc-secret-abc123"
	for _, tc := range []struct {
		name, answer string
		status       int
		want         string
	}{
		{"refused key", `{"success":false,"error":"Unauthorized"}`, 401, "refused the API key"},
		{"no credits", `{"success":false,"error":"Payment required"}`, 402, "out of credits"},
		{"not JSON", `<html>oops</html>`, 502, "HTTP 502"},
		{"failed scrape", `{"success":false,"error":"Site blocked"}`, 200, "Site blocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			}))
			defer srv.Close()
			_, err := tool.Firecrawl{BaseURL: srv.URL, Key: func() string { return key }}.Scrape(context.Background(), "https://example.com")
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), key) {
				t.Errorf("got %v, want an error saying %q and never the key", err, tc.want)
			}
		})
	}
	if _, err := (tool.Firecrawl{Key: func() string { return key }}).Scrape(context.Background(), "file:///etc/passwd"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("a file URL: %v, want refused as invalid", err)
	}
	if _, err := (tool.Firecrawl{Key: func() string { return "" }}).Scrape(context.Background(), "https://example.com"); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("no key: %v, want refused as invalid", err)
	}
}

func FuzzFirecrawlScrape(f *testing.F) {
	f.Add([]byte(`{"success":true,"data":{"markdown":"# Hi","metadata":{"title":"Hi","sourceURL":"https://x.example/"}}}`))
	f.Add([]byte(`{"success":false,"error":"nope"}`))
	f.Add([]byte(`{"success":true}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := tool.ParseFirecrawlScrape(body)
		if err != nil && (p.Markdown != "" || p.Title != "" || p.URL != "") {
			t.Fatalf("an error with a page: %+v", p)
		}
		if err != nil && len(err.Error()) > 700 {
			t.Fatalf("error of %d bytes: keep it short", len(err.Error()))
		}
	})
}

// Firecrawl may quote the key it refused (or anything it was sent) in its
// error text; the key must not reach the model through it. The env key is
// not a workspace variable, so the runtime's redaction does not cover it.
func TestFirecrawlErrorsNeverEchoTheKey(t *testing.T) {
	const key = "fc-secret-abc123"
	for _, tc := range []struct {
		name, answer string
		status       int
	}{
		{"bad request", `{"success":false,"error":"Invalid API key: fc-secret-abc123"}`, 400},
		{"failed scrape", `{"success":false,"error":"token fc-secret-abc123 has no scrape scope"}`, 200},
		{"not JSON", `<html>Bearer fc-secret-abc123</html>`, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.answer)
			}))
			defer srv.Close()
			out, err := tool.FirecrawlTool(tool.Firecrawl{BaseURL: srv.URL, Key: func() string { return key }}).
				Run(context.Background(), nil, []byte(`{"url":"https://example.com"}`))
			if err == nil || strings.Contains(err.Error(), key) || strings.Contains(out, key) {
				t.Errorf("got %q, %v: want an error that never quotes the key", out, err)
			}
		})
	}
}
