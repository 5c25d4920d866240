// Command rerun runs a workspace of AI coworkers on this computer.
//
//	rerun                 open the desktop window (or show the one running)
//	rerun serve           run headless and print a URL to open in a browser
//	rerun version         print the version, commit and build date (also --version)
//
// Flags and wiring only: the workspace machine is backend/, the window app/.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rerun-build/rerun-desktop/app"
	"github.com/rerun-build/rerun-desktop/backend/autostart"
	"github.com/rerun-build/rerun-desktop/backend/envconfig"
	"github.com/rerun-build/rerun-desktop/backend/httpapi"
	"github.com/rerun-build/rerun-desktop/backend/mcpapi"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/sandbox"
	"github.com/rerun-build/rerun-desktop/backend/update"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/frontend"
)

// The build sets these (-ldflags "-X main.version=… -X main.commit=… -X main.date=…").
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
	// updateKey is the base64 ed25519 public key release feeds are signed
	// with (-X main.updateKey=…, make UPDATE_KEY=…); without one, "Check for
	// updates" trusts no feed.
	updateKey = ""
)

// versionLine is what `rerun version` and `rerun --version` print.
func versionLine() string {
	return fmt.Sprintf("rerun %s (commit %s, built %s)", version, commit, date)
}

const usage = `Rerun Desktop runs a workspace of AI coworkers on this computer.

Usage:
  rerun [--data-dir DIR] [--port N] [--hidden]
                                             open the desktop window (a second launch
                                             shows the running one)
  rerun serve [--data-dir DIR] [--port N] [--open]
                                             run headless; open the printed URL in a browser
  rerun key create|list|revoke               manage API keys of the MCP endpoint (rerun key for help)
  rerun backup|restore                       back a workspace up to an encrypted file, restore one (rerun backup -h)
  rerun version, rerun --version             print the version, commit and build date

Flags:
  --data-dir DIR   where workspaces live (default: $RERUN_HOME, else the OS user data dir)
  --port N         local port, on 127.0.0.1 only (default 7777; a free one if taken; 0: any)
  --open           (serve) open the URL in the default browser
  --hidden         (window) start in the tray, without a window, as at login
  --pprof ADDR     serve Go's profiles (net/http/pprof) on ADDR, a loopback
                   address such as 127.0.0.1:6060; off unless given
`

func main() {
	sandbox.Main() // first: an agent's confined process re-runs this binary to confine itself
	cmd, args := "", os.Args[1:]
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		cmd, args = "version", args[1:]
	}
	var err error
	switch cmd {
	case "", "window":
		err = start(args, true)
	case "serve":
		err = start(args, false)
	case "key":
		err = keyCommand(args)
	case "backup", "restore":
		err = backupCommand(cmd, args)
	case "version":
		fmt.Println(versionLine())
	case "help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "rerun: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "rerun:", err)
		os.Exit(1)
	}
}

func start(args []string, window bool) error {
	fs := flag.NewFlagSet("rerun", flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	dataDir := fs.String("data-dir", "", "")
	port := fs.Int("port", httpapi.DefaultPort, "")
	open := fs.Bool("open", false, "")
	hidden := fs.Bool("hidden", false, "")
	pprofAddr := fs.String("pprof", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		os.Exit(2)
	}
	if window && !app.HasWindow {
		return app.ErrNoWindow
	}
	if window && runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		fmt.Fprintln(os.Stderr, "rerun: no display here; running `rerun serve` instead")
		window = false
	}

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	dir, err := envconfig.DataDir(*dataDir)
	if err != nil {
		return fmt.Errorf("find data directory: %w (pass --data-dir)", err)
	}
	// A second launch shows the running window instead of starting a
	// second server on the same data.
	if window && app.HandOver(dir) {
		fmt.Printf("Rerun is already running on %s; its window is shown\n", dir)
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The address comes first: the agents' browsers must never load it.
	ln, fellBack, err := httpapi.Listen(*port)
	if err != nil {
		return err
	}
	defer ln.Close()
	if fellBack {
		fmt.Fprintf(os.Stderr, "rerun: port %d is taken; using %d instead\n", *port, ln.Addr().(*net.TCPAddr).Port)
	}
	if *pprofAddr != "" {
		pl, err := httpapi.ListenProfiles(*pprofAddr)
		if err != nil {
			return err
		}
		defer pl.Close()
		go http.Serve(pl, httpapi.Profiles())
		fmt.Fprintf(os.Stderr, "rerun: profiles at http://%s/debug/pprof/\n", pl.Addr())
	}
	token := newToken()
	url := "http://" + ln.Addr().String() + "/?token=" + token
	if !window {
		s, err := bringUp(ctx, ln, token, dir, false, log)
		if err != nil {
			return err
		}
		defer s.down()
		fmt.Printf("Rerun is running at %s\n", url)
		fmt.Printf("Data: %s\n", dir)
		if *open {
			openBrowser(url)
		}
		select {
		case <-ctx.Done():
			fmt.Println("Rerun stopped")
			return nil
		case err := <-s.serveErr:
			return err
		}
	}

	// The window opens while the data directory does: it paints the
	// board's shell at once, and the board once the workspace is open.
	pending := httpapi.NewPending(frontend.Dist())
	homes := make(chan *workspace.Home, 1)
	var updates atomic.Pointer[update.Watch] // set before the home is handed over
	var s *running
	var upErr error
	upDone := make(chan struct{})
	go func() {
		defer close(upDone)
		defer close(homes)
		if s, upErr = bringUp(ctx, ln, token, dir, true, log); upErr != nil {
			fmt.Fprintln(os.Stderr, "rerun:", upErr)
			pending.Fail(upErr)
			return
		}
		pending.Ready(s.handler)
		updates.Store(s.updates)
		homes <- s.home
		fmt.Printf("Rerun is running at %s\n", url)
		fmt.Printf("Data: %s\n", dir)
	}()
	// The tray says when the last update check found a newer Rerun.
	newVersion := func() string {
		if w := updates.Load(); w != nil {
			if last := w.Last(); last.Available {
				return last.Latest
			}
		}
		return ""
	}
	err = app.Run(ctx, app.Options{Title: "Rerun", Handler: pending, Token: token, Logger: log, DataDir: dir, Home: homes, Hidden: *hidden,
		NewVersion: newVersion})
	<-upDone
	if upErr != nil {
		return upErr
	}
	s.down()
	return err
}

// running is an open data directory served: its home, whose runs execute,
// and the HTTP server on the listener.
type running struct {
	home     *workspace.Home
	handler  http.Handler
	updates  *update.Watch
	serveErr chan error
	down     func() // stops serving and the runs, closes the home
}

// bringUp opens the data directory dir, starts its runs and serves it on ln.
func bringUp(ctx context.Context, ln net.Listener, token, dir string, window bool, log *slog.Logger) (*running, error) {
	embedURL, embedKey, embedModel := envconfig.Embedder()
	firecrawlKey, firecrawlURL := envconfig.Firecrawl()
	home, err := workspace.Open(ctx, workspace.Config{
		DataDir: dir, Logger: log, LLM: envconfig.LLM(), Keychain: envconfig.Keychain(),
		Runtime:      run.Config{Workers: envconfig.Workers()},
		EmbedBaseURL: embedURL, EmbedAPIKey: embedKey, EmbedModel: embedModel,
		Timezone: envconfig.Timezone(), Chrome: envconfig.Chrome(), LocalAddr: ln.Addr().String(),
		APITools:        mcpapi.InProcess("http://" + ln.Addr().String()), // the Rerun agent's tools
		Onboarding:      envconfig.Onboarding(),                           // the Foreman greets a new workspace
		MCPRegistry:     envconfig.MCPRegistry(),                          // searched beside the built-in apps
		FirecrawlAPIKey: firecrawlKey, FirecrawlBaseURL: firecrawlURL,
	})
	if err != nil {
		return nil, err
	}
	log = home.Logger() // never writes a variable's value
	// Runs execute until shutdown; the databases close after the last one
	// has stopped (runs cut short resume at the next start).
	runsCtx, stopRuns := context.WithCancel(context.Background())
	runsDone := make(chan struct{})
	go func() { home.Serve(runsCtx); close(runsDone) }()
	// The daily update check, for the window and rerun serve alike: both
	// show the UI that says a new version is out.
	updates := updateWatch(dir, home, log)

	// The window and webhook URLs need the real address; the window's own
	// origin (wails://wails) does not say it.
	local := "http://" + ln.Addr().String()
	handler := httpapi.New(httpapi.Config{
		Home: home, Token: token, Assets: frontend.Dist(), Logger: log,
		ExtraHosts: app.WindowHosts, ExtraOrigins: app.WindowOrigins,
		LocalURL: local, Version: version, Commit: commit, BuildDate: date, DataDir: dir,
		Updates: updates,
		MCP:     mcpapi.Handler(home, version, log),
		// Start at login opens the window's build hidden in the tray.
		Autostart: autostartEntry(window, dir),
		Window:    window, // what closing the window does applies
		// Only the window opens a downloaded update (its installer asks).
		OpenFile: systemOpenIn(window),
		// Only the window pops a Desktop out into the default browser (a
		// browser's page opens that window itself).
		OpenURL: systemOpenIn(window),
		// The backups folder is chosen in the system's dialog in the window.
		PickFolder: pickFolderIn(window),
	})

	// Cancelling baseCtx ends open event streams, which never go idle on
	// their own, so Shutdown does not wait for them.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	// After New: the handler has applied the person's choice (daily or
	// only when asked).
	updatesDone := make(chan struct{})
	go func() { updates.Serve(runsCtx); close(updatesDone) }()
	down := func() {
		cancelBase()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		stopRuns()
		<-runsDone
		<-updatesDone
		home.Close()
	}
	return &running{home: home, handler: handler, updates: updates, serveErr: serveErr, down: down}, nil
}

// autostartEntry is the start-at-login entry of a window, none for `rerun serve`.
func autostartEntry(window bool, dir string) *autostart.Entry {
	if !window {
		return nil
	}
	return autostart.ForBinary(dir)
}

// updateWatch reads the release feed on "Check for updates" and once a
// day, remembering the last result in the data directory; it trusts only
// feeds signed with the key built in, and tells open pages on home's bus.
func updateWatch(dir string, home *workspace.Home, log *slog.Logger) *update.Watch {
	c := &update.Checker{FeedURL: envconfig.UpdateFeed(), Current: version, Platform: runtime.GOOS + "-" + runtime.GOARCH}
	if k, err := update.ParsePublicKey(updateKey); err == nil {
		c.PublicKey = k
	}
	return update.NewWatch(c, update.WatchConfig{Path: filepath.Join(dir, update.WatchFile), Bus: home.Events(), Log: log})
}

func newToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// systemOpenIn is how the window hands a verified update package, or the
// address of a popped-out Desktop, to the system; nil for rerun serve, whose
// person may not sit at this computer.
func systemOpenIn(window bool) func(string) error {
	if !window {
		return nil
	}
	return systemOpen
}

// pickFolderIn is the window's folder dialog; nil for rerun serve, whose
// page types the path.
func pickFolderIn(window bool) func(context.Context, string, string) (string, error) {
	if !window {
		return nil
	}
	return app.PickFolder
}

func openBrowser(url string) {
	if err := systemOpen(url); err != nil {
		fmt.Fprintf(os.Stderr, "rerun: could not open a browser (%v); open the URL above yourself\n", err)
	}
}

// systemOpen opens a URL or a file with what the system uses for it.
func systemOpen(target string) error {
	var c *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		c = exec.Command("open", target)
	case "windows":
		c = exec.Command("rundll32", "url.dll,FileProtocolHandler", target)
	default:
		c = exec.Command("xdg-open", target)
	}
	if err := c.Start(); err != nil {
		return err
	}
	go c.Wait()
	return nil
}
