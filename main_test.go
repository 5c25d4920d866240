package main

import (
	"bufio"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/app"
	"github.com/rerun-build/rerun-desktop/backend/connector/connectortest"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// TestMain lets this test binary be what `rerun serve` starts in the
// tests that run it (serve_chaos_test.go): an agent's confined process,
// and the stdio MCP server of connectortest.
func TestMain(m *testing.M) {
	sandbox.Main() // first: a confined process re-runs this binary to confine itself
	connectortest.ServeStdioIfAsked()
	os.Exit(m.Run())
}

func TestWindowModeWithoutDesktopBuild(t *testing.T) {
	if app.HasWindow {
		t.Skip("desktop build")
	}
	err := start([]string{"--data-dir", t.TempDir()}, true)
	if !errors.Is(err, app.ErrNoWindow) || !strings.Contains(err.Error(), "rerun serve") {
		t.Errorf("window mode in a headless build: %v, want ErrNoWindow pointing to rerun serve", err)
	}
}

// TestServeBinary builds the static binary as the Makefile does (version,
// commit and date set by -ldflags), checks `rerun --version` and `rerun
// version`, and runs `rerun serve` as a user would: RERUN_HOME picks the data
// directory, the printed URL logs in.
func TestServeBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "rerun")
	build := exec.Command("go", "build", "-ldflags",
		"-X main.version=v9.8.7 -X main.commit=abc1234 -X main.date=2026-12-02T02:00:00Z", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, arg := range []string{"--version", "version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if want := "rerun v9.8.7 (commit abc1234, built 2026-12-02T02:00:00Z)\n"; err != nil || string(out) != want {
			t.Errorf("rerun %s: %v %q, want %q", arg, err, out, want)
		}
	}
	home := t.TempDir()
	cmd := exec.Command(bin, "serve", "--port", "0")
	cmd.Env = append(os.Environ(), "RERUN_HOME="+home)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(os.Interrupt); cmd.Wait() }()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
	}()
	var url string
	select {
	case url = <-urls:
	case <-time.After(waittest.Patience):
		t.Fatal("serve printed no URL")
	}
	res, err := http.Get(url) // follows the redirect with the cookie set
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	base := strings.SplitN(url, "/?", 2)[0]
	res, err = http.Get(base + "/api/workspaces")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("API without the token: %d, want 401", res.StatusCode)
	}
	if _, err := os.Stat(filepath.Join(home, "workspaces")); err != nil {
		t.Errorf("RERUN_HOME was not used as the data directory: %v", err)
	}
}

func TestUnknownCommandExits(t *testing.T) {
	if os.Getenv("RERUN_MAIN_CHILD") == "1" {
		os.Args = []string{"rerun", "frobnicate"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestUnknownCommandExits$")
	cmd.Env = append(os.Environ(), "RERUN_MAIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), `unknown command "frobnicate"`) {
		t.Errorf("unknown command: %v %q, want exit 2 naming it", err, out)
	}
}
