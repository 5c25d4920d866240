package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/httpapi"
)

func TestProfiles(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.168.1.5:6060", "localhost", "127.0.0.1", ":6060"} {
		if ln, err := httpapi.ListenProfiles(addr); err == nil {
			ln.Close()
			t.Errorf("ListenProfiles(%q) listened; want a loopback address and port only", addr)
		} else if !strings.Contains(err.Error(), "127.0.0.1:6060") {
			t.Errorf("ListenProfiles(%q) = %v, want it to say what to give", addr, err)
		}
	}
	ln, err := httpapi.ListenProfiles("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: httpapi.Profiles()}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	do := func(path string, header map[string]string, host string) (int, string) {
		req, _ := http.NewRequest("GET", base+path, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if host != "" {
			req.Host = host
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := do("/debug/pprof/goroutine?debug=1", nil, ""); code != 200 || !strings.Contains(body, "goroutine profile:") {
		t.Fatalf("goroutine profile = %d %.80q", code, body)
	}
	if code, _ := do("/debug/pprof/", nil, "evil.example:80"); code != 403 {
		t.Errorf("foreign Host = %d, want 403", code)
	}
	if code, _ := do("/debug/pprof/", map[string]string{"Origin": "https://evil.example"}, ""); code != 403 {
		t.Errorf("a web page's request = %d, want 403", code)
	}
}
