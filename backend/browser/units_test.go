package browser

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/jsonarg"
)

func TestFindChrome(t *testing.T) {
	type fs struct {
		path  map[string]string // name → path found in PATH
		files []string          // executables on disk
		env   map[string]string
	}
	tests := []struct {
		name, goos, bin string
		fs              fs
		want            string
		wantErr         string
	}{
		{name: "RERUN_CHROME path", goos: "linux", bin: "/opt/my/chrome", fs: fs{files: []string{"/opt/my/chrome", "/usr/bin/chromium"}}, want: "/opt/my/chrome"},
		{name: "RERUN_CHROME missing file", goos: "linux", bin: "/opt/none", fs: fs{files: []string{"/usr/bin/chromium"}}, wantErr: `RERUN_CHROME is "/opt/none"`},
		{name: "RERUN_CHROME name in PATH", goos: "linux", bin: "brave", fs: fs{path: map[string]string{"brave": "/usr/bin/brave"}}, want: "/usr/bin/brave"},
		{name: "linux PATH order", goos: "linux", fs: fs{path: map[string]string{"google-chrome": "/x/google-chrome", "chromium-browser": "/x/chromium-browser"}}, want: "/x/chromium-browser"},
		{name: "linux fixed path", goos: "linux", fs: fs{files: []string{"/opt/google/chrome/chrome"}}, want: "/opt/google/chrome/chrome"},
		{name: "linux snap last", goos: "linux", fs: fs{files: []string{"/snap/bin/chromium", "/usr/lib/chromium/chromium"}}, want: "/usr/lib/chromium/chromium"},
		{name: "linux none", goos: "linux", wantErr: "sudo apt install chromium"},
		{name: "macOS app", goos: "darwin", fs: fs{files: []string{"/Applications/Chromium.app/Contents/MacOS/Chromium"}}, want: "/Applications/Chromium.app/Contents/MacOS/Chromium"},
		{name: "macOS user app", goos: "darwin", fs: fs{files: []string{"/Users/ada/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"}, env: map[string]string{"HOME": "/Users/ada"}}, want: "/Users/ada/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"},
		{name: "macOS none", goos: "darwin", wantErr: "install Google Chrome"},
		{name: "windows chrome", goos: "windows", fs: fs{files: []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`}, env: map[string]string{"ProgramFiles": `C:\Program Files`}}, want: `C:\Program Files\Google\Chrome\Application\chrome.exe`},
		{name: "windows edge", goos: "windows", fs: fs{files: []string{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`}, env: map[string]string{"ProgramFiles(x86)": `C:\Program Files (x86)`}}, want: `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`},
		{name: "windows none", goos: "windows", wantErr: "Microsoft Edge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lookPath := func(n string) (string, error) {
				if p, ok := tc.fs.path[n]; ok {
					return p, nil
				}
				return "", errors.New("not found")
			}
			exists := func(p string) bool { return slices.Contains(tc.fs.files, p) }
			getenv := func(k string) string { return tc.fs.env[k] }
			got, err := findChrome(tc.bin, tc.goos, lookPath, exists, getenv)
			if tc.wantErr != "" {
				if !errors.Is(err, ErrNoBrowser) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want ErrNoBrowser containing %q", err, tc.wantErr)
				}
				if tc.bin == "" && !strings.Contains(err.Error(), "RERUN_CHROME") {
					t.Errorf("err = %v, want it to mention RERUN_CHROME", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestChildEnv(t *testing.T) {
	env := childEnv([]string{"PATH=/usr/bin", "HOME=/home/ada", "ANTHROPIC_API_KEY=sk-1", "OPENAI_BASE_URL=x", "GITHUB_TOKEN=g", "DB_PASSWORD=p", "RERUN_HOME=/r", "LANG=C.UTF-8", "DISPLAY=:0"}, "/p", "linux")
	want := []string{"PATH=/usr/bin", "LANG=C.UTF-8", "DISPLAY=:0", "HOME=/p", "XDG_CONFIG_HOME=/p/.config", "XDG_CACHE_HOME=/p/.cache"}
	if !slices.Equal(env, want) {
		t.Errorf("got %q, want %q", env, want)
	}
	if mac := childEnv([]string{"HOME=/Users/ada", "AWS_SECRET_ACCESS_KEY=x"}, "/p", "darwin"); !slices.Equal(mac, []string{"HOME=/Users/ada"}) {
		t.Errorf("macOS env = %q, want HOME kept and the secret dropped", mac)
	}
}

func TestCheckURL(t *testing.T) {
	f, err := parseForbidden([]string{"127.0.0.1:7777"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want, wantErr string }{
		{in: "https://example.com/a?b=c", want: "https://example.com/a?b=c"},
		{in: "example.com/login", want: "https://example.com/login"},
		{in: "  http://127.0.0.1:8888/dev  ", want: "http://127.0.0.1:8888/dev"},
		{in: "localhost:3000", want: "https://localhost:3000"},
		{in: "about:blank", want: "about:blank"},
		{in: "", wantErr: "empty"},
		{in: "file:///etc/passwd", wantErr: "refused: file://"},
		{in: "FILE:///C:/Windows", wantErr: "refused: file://"},
		{in: "chrome://settings", wantErr: "refused: chrome:"},
		{in: "about:config", wantErr: "refused: about:"},
		{in: "view-source:https://example.com", wantErr: "refused: view-source:"},
		{in: "javascript:alert(1)", wantErr: "refused: javascript:"},
		{in: "data:text/html,<h1>x", wantErr: "refused: data:"},
		{in: "http://127.0.0.1:7777/api", wantErr: "app's own local server"},
		{in: "http://localhost:7777/", wantErr: "app's own local server"},
		{in: "http://LOCALHOST.:7777/", wantErr: "app's own local server"},
		{in: "http://app.localhost:7777/", wantErr: "app's own local server"},
		{in: "http://[::1]:7777/", wantErr: "app's own local server"},
		{in: "http://0.0.0.0:7777/", wantErr: "app's own local server"},
		{in: "ws://127.0.0.1:7777/", wantErr: "refused: ws:"},
		{in: "127.0.0.1:7777", wantErr: "app's own local server"},
		{in: "http:///nohost", wantErr: "no host"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := f.checkURL(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("checkURL = %q, %v; want an error containing %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("checkURL = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := parseForbidden([]string{"7777"}); err == nil {
		t.Error("a forbidden entry without a host was accepted")
	}
	// A non-loopback entry forbids that host only.
	g, _ := parseForbidden([]string{"rerun.internal:443"})
	for u, want := range map[string]bool{"https://rerun.internal/x": true, "https://other.internal/": false, "https://localhost/": false} {
		pu, _ := url.Parse(u)
		if got := g.blocks(pu); got != want {
			t.Errorf("blocks(%s) = %v, want %v", u, got, want)
		}
	}
}

// FuzzCheckURL: whatever the model sends, an accepted address is http(s)
// with a host (or about:blank) and never the app's own server.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com", "localhost:7777", "file:///x", "http://[::1]:7777", "javascript:x", "http://0x7f.1:7777/", "about:blank", "http://127.1:7777"} {
		f.Add(s)
	}
	forbid, _ := parseForbidden([]string{"127.0.0.1:7777"})
	f.Fuzz(func(t *testing.T, in string) {
		got, err := forbid.checkURL(in)
		if err != nil {
			return
		}
		if got == "about:blank" {
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			t.Fatalf("checkURL(%q) accepted %q", in, got)
		}
		if forbid.blocks(u) {
			t.Fatalf("checkURL(%q) accepted the forbidden %q", in, got)
		}
	})
}

func TestDecode(t *testing.T) {
	var in struct {
		Element *elemArg `json:"element"`
		Text    string   `json:"text"`
	}
	for _, tc := range []struct{ input, wantErr string }{
		{`{"element": 12}`, ""},
		{`{"element": "12"}`, ""},
		{`{"element": "[12]"}`, ""},
		{``, ""},
		{`{"element": "twelve"}`, "not an element number"},
		{`{"element": 1, "txt": "a"}`, `unknown field "txt"`},
		{`{} {}`, "more than one JSON value"},
	} {
		err := jsonarg.Decode([]byte(tc.input), &in)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("jsonarg.Decode(%s) = %v, want error containing %q", tc.input, err, tc.wantErr)
		}
	}
}

func TestPageOf(t *testing.T) {
	text := strings.Repeat("a line of the page\n", 3000) // ~57 KiB
	first := pageOf(text, 0)
	if len(first) > MaxSnapshot+200 || !strings.Contains(first, "call browser_snapshot with offset") {
		t.Fatalf("first page is %d bytes, note %q", len(first), first[len(first)-150:])
	}
	var off int
	if i := strings.Index(first, "offset "); i >= 0 {
		fmt.Sscan(first[i+len("offset "):], &off)
	}
	if off <= 0 || off > MaxSnapshot || text[off-1] != '\n' {
		t.Fatalf("continuation offset %d does not start a line", off)
	}
	rest := ""
	for o := 0; o < len(text); {
		p := pageOf(text, o)
		body, _, _ := strings.Cut(p, "\n[snapshot cut here")
		rest += body
		o += len(body)
	}
	if rest != text {
		t.Error("paging through the snapshot does not give the whole text back")
	}
}

func TestKeyCode(t *testing.T) {
	for _, tc := range []struct {
		key, code string
		want      int
	}{
		{"a", "KeyA", 65}, {"A", "KeyA", 65}, {"7", "Digit7", 55}, {"Enter", "Enter", 13}, {"Backspace", "Backspace", 8},
		{"ArrowLeft", "ArrowLeft", 37}, {"!", "Digit1", 49}, {"é", "KeyE", 69}, {"Dead", "Quote", 0},
	} {
		if got := keyCode(tc.key, tc.code); got != tc.want {
			t.Errorf("keyCode(%q, %q) = %d, want %d", tc.key, tc.code, got, tc.want)
		}
	}
}

func TestDurText(t *testing.T) {
	for d, want := range map[string]string{"10m": "10 minutes", "1h": "1 hour", "90s": "90 seconds", "1m": "1 minute"} {
		dd, _ := time.ParseDuration(d)
		if got := durText(dd); got != want {
			t.Errorf("durText(%s) = %q, want %q", d, got, want)
		}
	}
}
