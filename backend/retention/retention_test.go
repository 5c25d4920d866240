package retention_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/retention"
	"github.com/rerun-build/rerun-desktop/backend/search/searchtest"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

func TestPruneKeepsPinnedPausedAndRecent(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	old := now.AddDate(0, 0, -100)
	searchtest.Agent(t, db, "ag_a")
	long := strings.Repeat("x", 10000)
	run := func(id, status string, at time.Time) searchtest.Run {
		return searchtest.Run{ID: id, AgentID: "ag_a", Source: "chat", Status: status, At: at,
			Steps: []searchtest.Step{searchtest.Input("hi"), searchtest.Result("c1", "read_file", long)}}
	}
	searchtest.Write(t, db, run("run_old", "done", old), run("run_pinned", "done", old), run("run_paused", "paused", old),
		run("run_mid", "done", now.AddDate(0, 0, -40)), run("run_new", "done", now.AddDate(0, 0, -1)))
	s := retention.New(db, retention.Dirs{}, nil, retention.Config{Now: func() time.Time { return now }, Batch: 1})
	if err := s.Pin(ctx, "run_pinned", true); err != nil {
		t.Fatal(err)
	}
	rep, err := s.Prune(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Runs != 1 || rep.Trimmed != 1 {
		t.Errorf("report = %+v, want 1 run pruned, 1 output trimmed", rep)
	}
	for id, want := range map[string]int{"run_old": 0, "run_pinned": 10000, "run_paused": 10000, "run_mid": 4096 + utf8.RuneCountInString("… [trimmed by retention]"), "run_new": 10000} {
		var n int
		err := db.QueryRowContext(ctx, `SELECT coalesce((SELECT length(json_extract(data, '$.output')) FROM steps WHERE run_id = ? AND seq = 2), 0)`, id).Scan(&n)
		if err != nil || n != want {
			t.Errorf("%s output length = %d (%v), want %d", id, n, err, want)
		}
	}
	if _, err := s.SetSettings(ctx, retention.Settings{KeepDays: 0, TrimDays: 0, TrimChars: 10}); err == nil {
		t.Error("SetSettings with trim_chars 10 succeeded, want an error")
	}
}

// Every window shows a pin and new settings at once: they are published.
func TestPinAndSettingsArePublished(t *testing.T) {
	db := storetest.Open(t)
	ctx := context.Background()
	searchtest.Agent(t, db, "ag_a")
	searchtest.Write(t, db, searchtest.Run{ID: "run_a", AgentID: "ag_a", Source: "chat", Status: "done", At: time.Now(),
		Steps: []searchtest.Step{searchtest.Input("hi")}})
	var bus event.Bus
	ch, stop := bus.Subscribe()
	defer stop()
	s := retention.New(db, retention.Dirs{}, nil, retention.Config{Bus: &bus, Workspace: "ws_1"})
	next := func() event.Change {
		t.Helper()
		select {
		case c := <-ch:
			return c
		case <-time.After(waittest.Patience):
			t.Fatal("nothing was published")
			return event.Change{}
		}
	}
	for _, pinned := range []bool{true, false} {
		if err := s.Pin(ctx, "run_a", pinned); err != nil {
			t.Fatal(err)
		}
		if c := next(); c.Kind != "run.updated" || c.ID != "run_a" || c.Agent != "ag_a" || c.Workspace != "ws_1" || c.Session == "" {
			t.Errorf("pin %v published %+v, want run.updated of run_a by ag_a in ws_1 with its session", pinned, c)
		}
	}
	if err := s.Pin(ctx, "run_missing", true); err == nil {
		t.Error("pinning a missing run succeeded")
	}
	if _, err := s.SetSettings(ctx, retention.Settings{KeepDays: 30, TrimDays: 7, TrimChars: 4096}); err != nil {
		t.Fatal(err)
	}
	if c := next(); c.Kind != "settings.changed" || c.ID != retention.SettingsID || c.Workspace != "ws_1" {
		t.Errorf("new settings published %+v, want settings.changed of %s", c, retention.SettingsID)
	}
	select {
	case c := <-ch:
		t.Errorf("a refused pin or an extra change was published: %+v", c)
	default:
	}
}
