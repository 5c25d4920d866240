package tool

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const testPage = `<!doctype html>
<html><head><title>Acme  Pricing</title><style>body{color:red}</style><script>var secret = 1;</script></head>
<body>
<nav><a href="/home">Home</a> <a href="/about">About</a></nav>
<h1>Plans</h1>
<p>Simple   pricing
for <b>everyone</b>. See <a href="/plans/pro">the Pro plan</a> or <a href="https://other.example/x">elsewhere</a>.</p>
<ul><li>Free</li><li>Pro <a href="/plans/pro">again</a></li></ul>
<h2>FAQ</h2>
<pre>  indented
    code</pre>
<noscript>enable js</noscript>
<img src="x.png" alt="a chart">
<a href="javascript:alert(1)">js link</a>
</body></html>`

func webServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, testPage)
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"a": [1, 2], "b": "<x>"}`)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s ct=%s x=%s body=%s", r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Token"), body)
	})
	mux.HandleFunc("/redirect/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			http.Redirect(w, r, "/json", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("b", 3000))
	})
	mux.HandleFunc("/png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\r\n\x1a\n0000"))
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchURL(t *testing.T) {
	srv := webServer(t)
	env := testEnv(t)
	u := srv.URL
	tests := []struct {
		name  string
		input map[string]any
		want  string // exact output; use {{u}} for the server URL
		err   string
	}{
		{"html as readable text", map[string]any{"url": u + "/page"}, `status: 200 OK
content_type: text/html; charset=utf-8
final_url: {{u}}/page

Title: Acme Pricing

# Plans

Simple pricing for everyone. See the Pro plan [1] or elsewhere [2].

- Free
- Pro again [1]

## FAQ

  indented
    code

[image: a chart] js link

Links:
[1] {{u}}/plans/pro
[2] https://other.example/x`, ""},
		{"json as is", map[string]any{"url": u + "/json"}, "status: 200 OK\ncontent_type: application/json\nfinal_url: {{u}}/json\n\n{\"a\": [1, 2], \"b\": \"<x>\"}", ""},
		{"post with headers", map[string]any{"url": u + "/echo", "method": "post", "headers": map[string]string{"X-Token": "t1"}, "body": `{"q":1}`},
			"status: 200 OK\ncontent_type: text/plain\nfinal_url: {{u}}/echo\n\nPOST /echo ct=application/json x=t1 body={\"q\":1}", ""},
		{"five redirects", map[string]any{"url": u + "/redirect/4"}, "status: 200 OK\ncontent_type: application/json\nfinal_url: {{u}}/json\n\n{\"a\": [1, 2], \"b\": \"<x>\"}", ""},
		{"binary described", map[string]any{"url": u + "/png"}, "status: 200 OK\ncontent_type: image/png\nfinal_url: {{u}}/png\n\n[binary content: 12 bytes of image/png, not shown]", ""},
		{"charset decoded", map[string]any{"url": u + "/latin1"}, "status: 200 OK\ncontent_type: text/plain; charset=iso-8859-1\nfinal_url: {{u}}/latin1\n\ncafé", ""},
		{"error status is a result", map[string]any{"url": u + "/missing"}, "status: 404 Not Found\ncontent_type: text/plain; charset=utf-8\nfinal_url: {{u}}/missing\n\nno such page", ""},

		{"six redirects", map[string]any{"url": u + "/redirect/5"}, "", "stopped after 5 redirects"},
		{"redirect to file", map[string]any{"url": u + "/to-file"}, "", "redirected to a file: URL"},
		{"file scheme", map[string]any{"url": "file:///etc/passwd"}, "", `url scheme "file" is not supported; only http:// and https://`},
		{"ftp scheme", map[string]any{"url": "ftp://example.com/x"}, "", `url scheme "ftp" is not supported`},
		{"relative url", map[string]any{"url": "/page"}, "", `url scheme "" is not supported`},
		{"no host", map[string]any{"url": "http:///x"}, "", "has no host"},
		{"bad method", map[string]any{"url": u + "/page", "method": "DELETE"}, "", `method "DELETE" is not supported; use GET or POST`},
		{"body on GET", map[string]any{"url": u + "/page", "body": "x"}, "", "a body needs method POST"},
		{"host header", map[string]any{"url": u + "/page", "headers": map[string]string{"host": "evil"}}, "", `header "host" is set by the HTTP client`},
		{"missing url", map[string]any{}, "", "is not a valid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := call(t, env, "fetch_url", tt.input)
			if tt.err != "" {
				wantErr(t, err, invalid, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tt.want, "{{u}}", u); got != want {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestFetchLimits(t *testing.T) {
	srv := webServer(t)
	lim := fetchLimits{timeout: 200 * time.Millisecond, maxBody: 1000, maxText: 100, redirects: 5}
	t.Run("body and text caps", func(t *testing.T) {
		got, err := fetch(context.Background(), fetchInput{URL: srv.URL + "/big"}, lim)
		if err != nil {
			t.Fatal(err)
		}
		want := "[the body is larger than 1000 bytes; only the first 1000 were read]\n\n" + strings.Repeat("b", 100) + "\n[truncated: 900 more bytes]"
		if !strings.HasSuffix(got, want) {
			t.Errorf("got %q, want it to end with %q", got, want)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		_, err := fetch(context.Background(), fetchInput{URL: srv.URL + "/slow"}, lim)
		wantErr(t, err, invalid, "took longer than 200ms and was stopped")
	})
	t.Run("connection refused", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		_, err := fetch(context.Background(), fetchInput{URL: closed.URL}, lim)
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("got %v, want a connection refused error", err)
		}
	})
}
