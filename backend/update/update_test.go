package update

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

const sum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func feedJSON(version string) string {
	return `{"version":"` + version + `","url":"https://example.com/rerun-setup.exe","sha256":"` + sum + `","notes":"Faster board.",` +
		`"downloads":{"linux-amd64":{"url":"https://example.com/rerun.deb","sha256":"` + strings.Repeat("ab", 32) + `"}}}`
}

// feedServer serves feed and its signature (sig, or the real one when sig
// is empty) at /feed.json and /feed.json.sig.
func feedServer(t *testing.T, feed, sig string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			w.Write([]byte(feed))
		case "/feed.json.sig":
			w.Write([]byte(sig))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func keys(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func TestCheckAgainstALocalFeed(t *testing.T) {
	pub, priv := keys(t)
	feed := feedJSON("v1.4.0")
	srv := feedServer(t, feed, string(Sign(priv, []byte(feed))))
	cases := []struct {
		name, current, platform, wantURL string
		available                        bool
	}{
		{"older release", "v1.3.2", "windows-amd64", "https://example.com/rerun-setup.exe", true},
		{"describe past an older tag", "v1.3.2-7-g0123abc-dirty", "windows-amd64", "https://example.com/rerun-setup.exe", true},
		{"same version", "v1.4.0", "windows-amd64", "https://example.com/rerun-setup.exe", false},
		{"describe past the same tag", "v1.4.0-2-gabcdef0", "windows-amd64", "https://example.com/rerun-setup.exe", false},
		{"newer build", "v1.5.0-rc.1", "windows-amd64", "https://example.com/rerun-setup.exe", false},
		{"untagged build", "421c8c4-dirty", "windows-amd64", "https://example.com/rerun-setup.exe", true},
		{"platform download", "v1.0.0", "linux-amd64", "https://example.com/rerun.deb", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Checker{FeedURL: srv.URL + "/feed.json", PublicKey: pub, Current: tc.current, Platform: tc.platform}
			st, err := c.Check(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if st.Available != tc.available || st.Latest != "v1.4.0" || st.Current != tc.current || st.URL != tc.wantURL || st.Notes != "Faster board." {
				t.Errorf("got %+v, want available=%v url %s", st, tc.available, tc.wantURL)
			}
		})
	}
}

func TestCheckRefusesWhatIsNotSignedByTheKey(t *testing.T) {
	pub, priv := keys(t)
	_, other := keys(t)
	feed := feedJSON("v9.0.0")
	cases := []struct{ name, feed, sig string }{
		{"another key", feed, string(Sign(other, []byte(feed)))},
		{"feed changed after signing", strings.Replace(feed, "rerun-setup.exe", "evil.exe", 1), string(Sign(priv, []byte(feed)))},
		{"no signature", feed, ""},
		{"signature not base64", feed, "!!!"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := feedServer(t, tc.feed, tc.sig)
			c := &Checker{FeedURL: srv.URL + "/feed.json", PublicKey: pub, Current: "v1.0.0"}
			if st, err := c.Check(context.Background()); !errors.Is(err, ErrSignature) {
				t.Errorf("got %+v, %v; want ErrSignature", st, err)
			}
		})
	}
	t.Run("no key built in", func(t *testing.T) {
		srv := feedServer(t, feed, string(Sign(priv, []byte(feed))))
		c := &Checker{FeedURL: srv.URL + "/feed.json", Current: "v1.0.0"}
		if _, err := c.Check(context.Background()); !errors.Is(err, ErrNoKey) || !strings.Contains(err.Error(), "releases page") {
			t.Errorf("got %v", err)
		}
	})
}

// Off the network the check says it could not check, and why.
func TestCheckUnreachable(t *testing.T) {
	pub, _ := keys(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens here now
	missing := feedServer(t, "", "")
	for name, u := range map[string]string{"nothing listening": "http://" + addr + "/feed.json", "404": missing.URL + "/nofeed.json"} {
		t.Run(name, func(t *testing.T) {
			c := &Checker{FeedURL: u, PublicKey: pub, Current: "v1.0.0"}
			_, err := c.Check(context.Background())
			if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "could not check for updates") {
				t.Errorf("got %v, want ErrUnreachable", err)
			}
		})
	}
	for _, off := range []string{"", "off"} {
		if _, err := (&Checker{FeedURL: off, PublicKey: pub}).Check(context.Background()); !errors.Is(err, ErrOff) {
			t.Errorf("feed %q: got %v, want ErrOff", off, err)
		}
	}
}

func TestParseRefusesBadFields(t *testing.T) {
	good := `"url":"https://example.com/a","sha256":"` + sum + `"`
	cases := map[string]string{
		"not json":          `{`,
		"trailing data":     `{"version":"v1.0.0",` + good + `} {}`,
		"no version":        `{` + good + `}`,
		"bad version":       `{"version":"latest",` + good + `}`,
		"http url":          `{"version":"v1.0.0","url":"http://example.com/a","sha256":"` + sum + `"}`,
		"file url":          `{"version":"v1.0.0","url":"file:///etc/passwd","sha256":"` + sum + `"}`,
		"short sha256":      `{"version":"v1.0.0","url":"https://example.com/a","sha256":"abcd"}`,
		"bad platform hash": `{"version":"v1.0.0",` + good + `,"downloads":{"linux-amd64":{"url":"https://example.com/b","sha256":"zz"}}}`,
	}
	for name, feed := range cases {
		t.Run(name, func(t *testing.T) {
			if r, err := Parse([]byte(feed)); !errors.Is(err, fault.ErrInvalid) {
				t.Errorf("got %+v, %v; want ErrInvalid", r, err)
			}
		})
	}
	if _, err := Parse([]byte(`{"version":"1.0.0","url":"http://127.0.0.1:8080/a","sha256":"` + sum + `"}`)); err != nil {
		t.Errorf("a loopback http URL (tests) was refused: %v", err)
	}
}

func TestNewer(t *testing.T) {
	cases := []struct {
		latest, current string
		want            bool
	}{
		{"v1.0.1", "v1.0.0", true},
		{"v1.10.0", "v1.9.0", true},
		{"v2.0.0", "v1.99.99", true},
		{"v1.0.0", "v1.0.0", false},
		{"1.0.0", "v1.0.0", false},
		{"v1.0.0", "v1.0.0-rc.1", true},
		{"v1.0.0-rc.2", "v1.0.0-rc.1", true},
		{"v1.0.0-rc.10", "v1.0.0-rc.9", true},
		{"v1.0.0-rc.1", "v1.0.0-rc.1.1", false},
		{"v1.0.0-alpha", "v1.0.0-1", true},
		{"v0.9.0", "v1.0.0", false},
		{"junk", "v1.0.0", false},
		{"v1.0.0", "dev", true},
		{"v1.0.0+build.5", "v1.0.0", false},
	}
	for _, tc := range cases {
		if got := Newer(tc.latest, tc.current); got != tc.want {
			t.Errorf("Newer(%q, %q) = %v, want %v", tc.latest, tc.current, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(feedJSON("v1.4.0")))
	f.Add([]byte(`{"version":"v1.0.0-rc.1+x","url":"http://[::1]:9/a","sha256":"` + sum + `"}`))
	f.Add([]byte(`{"downloads":{"":{}}}`))
	f.Fuzz(func(t *testing.T, feed []byte) {
		r, err := Parse(feed)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("error not ErrInvalid: %v", err)
			}
			return
		}
		if _, ok := parseSemver(r.Version); !ok {
			t.Fatalf("accepted version %q", r.Version)
		}
		if len(r.SHA256) != 64 || Newer(r.Version, r.Version) {
			t.Fatalf("accepted %+v", r)
		}
	})
}
