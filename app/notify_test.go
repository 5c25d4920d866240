package app

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/workspace"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// New notifications become OS notifications exactly as the delivery
// settings say, titled with the agent's name; a failed one does not stop
// the next.
func TestForwardNotifications(t *testing.T) {
	ctx := context.Background()
	home, err := workspace.Open(ctx, workspace.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer home.Close()
	w, _ := home.Workspace(home.Current())
	boxes, _ := w.Boxes.List(ctx)
	a, err := w.Agents.Create(ctx, agent.NewAgent{Name: "Scout", BoxID: boxes[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	// Turn one default off, to see the settings read at each notification.
	if _, err := w.Notify.SetDelivery(ctx, notify.Delivery{notify.Error: {notify.Automated: {notify.OS: false}}}); err != nil {
		t.Fatal(err)
	}

	var mu sync.Mutex
	var shown []string
	got := make(chan struct{}, 16)
	send := func(id, title, body string) error {
		mu.Lock()
		shown = append(shown, title+" / "+body)
		mu.Unlock()
		got <- struct{}{}
		if strings.Contains(title, "fails") {
			return errors.New("no notification daemon")
		}
		return nil
	}
	var logs bytes.Buffer
	fctx, stop := context.WithCancel(ctx)
	done := forwardNotifications(fctx, home, send, slog.New(slog.NewTextHandler(&logs, nil)))

	for _, in := range []notify.Input{
		{Kind: notify.Info, Title: "mine: not shown"},
		{Kind: notify.Info, Title: "fails to show", Automated: true},
		{Kind: notify.Progress, Title: "progress: never shown", Automated: true},
		{Kind: notify.Error, Title: "turned off", Automated: true},
		{Kind: notify.Question, PauseID: "pa_1", Title: "Which one?", Body: "2 questions"},
	} {
		in.AgentID = a.ID
		if _, err := w.Notify.Notify(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 2; i++ {
		select {
		case <-got:
		case <-time.After(waittest.Patience):
			t.Fatalf("only %d OS notifications shown, want 2", i)
		}
	}
	stop()
	<-done
	mu.Lock()
	defer mu.Unlock()
	want := []string{"Scout: fails to show / ", "Scout: Which one? / 2 questions"}
	if strings.Join(shown, "|") != strings.Join(want, "|") {
		t.Errorf("shown = %q, want %q", shown, want)
	}
	if !strings.Contains(logs.String(), "no notification daemon") {
		t.Errorf("the failed notification was not logged: %s", logs.String())
	}
}
