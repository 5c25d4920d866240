package app

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/llm"
	"github.com/rerun-build/rerun-desktop/backend/llm/llmtest"
	"github.com/rerun-build/rerun-desktop/backend/prefs"
	"github.com/rerun-build/rerun-desktop/backend/run"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// The hint that Rerun keeps running shows once per data directory, and
// again only if it could not be shown.
func TestBackgroundHintOnce(t *testing.T) {
	dir := t.TempDir()
	var shown []string
	fail := true
	send := func(id, title, body string) error {
		if fail {
			return errors.New("no notification daemon")
		}
		shown = append(shown, title)
		return nil
	}
	if err := backgroundHint(dir, send); err == nil {
		t.Fatal("a hint that failed to show reported no error")
	}
	fail = false
	for i := 0; i < 3; i++ {
		if err := backgroundHint(dir, send); err != nil {
			t.Fatal(err)
		}
	}
	if len(shown) != 1 || shown[0] != "Rerun keeps working" {
		t.Errorf("hints shown = %q, want one", shown)
	}
	if err := backgroundHint(t.TempDir(), send); err != nil || len(shown) != 2 {
		t.Errorf("another data directory: %v, %d hints; want its own", err, len(shown))
	}
}

// Closing the window hides it only with a tray icon to come back through
// and the person's choice to keep working; quitting once decided closes.
func TestOnClose(t *testing.T) {
	for _, tc := range []struct {
		quitting, tray bool
		whenClosed     string
		want           closeAction
	}{
		{false, true, prefs.InBackground, closeHide},
		{false, true, prefs.Quit, closeQuit},
		{false, false, prefs.InBackground, closeQuit}, // nothing to come back through
		{false, false, prefs.Quit, closeQuit},
		{true, true, prefs.InBackground, closeAnyway},
		{true, false, prefs.Quit, closeAnyway},
	} {
		if got := onClose(tc.quitting, tc.tray, tc.whenClosed); got != tc.want {
			t.Errorf("onClose(quitting %v, tray %v, %q) = %v, want %v", tc.quitting, tc.tray, tc.whenClosed, got, tc.want)
		}
	}
}

// Quitting asks while a coworker's run is in flight, and only then: a run
// held at the model counts, from start to finish.
func TestQuitAsksWhileCoworkersWork(t *testing.T) {
	fake := llmtest.New(t)
	release := make(chan struct{})
	fake.SetFallback(func(llmtest.Request) llmtest.Reply {
		<-release
		return llmtest.Text("done")
	})
	ctx := context.Background()
	home, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir(),
		LLM: llm.Config{OpenAIKey: "k", OpenAIBaseURL: fake.OpenAIURL()}})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { home.Serve(sctx); close(served) }()
	defer func() { stop(); <-served; home.Close() }()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	if _, _, ask := quitQuestion(working(ctx, home)); ask {
		t.Fatal("asks before quitting with nothing in flight")
	}
	ws, _ := home.Workspace(home.Current())
	boxes, _ := ws.Boxes.List(ctx)
	a, err := ws.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ws.Runs.Send(ctx, run.SendRequest{AgentID: a.ID, Source: run.SourceChat, Input: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the run is in flight", func() bool { return working(ctx, home) == 1 })
	title, message, ask := quitQuestion(working(ctx, home))
	if !ask || title != "Quit Rerun?" || !strings.HasPrefix(message, "1 coworker is working") {
		t.Fatalf("quitQuestion with one in flight = %q %q %v", title, message, ask)
	}
	close(release)
	waittest.Until(t, "the run ends", func() bool {
		got, err := ws.Runs.Get(ctx, r.ID)
		return err == nil && got.Status == run.Done
	})
	if n := working(ctx, home); n != 0 {
		t.Errorf("%d working after the run ended", n)
	}
	if _, m, _ := quitQuestion(3); !strings.HasPrefix(m, "3 coworkers are working") {
		t.Errorf("three in flight: %q", m)
	}
}
