package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/agent"
	"github.com/rerun-build/rerun-desktop/backend/box"
	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/store/storetest"
)

type fixture struct {
	svc    *notify.Service
	bus    *event.Bus
	agents []string
}

// newFixture opens a workspace database with two agents.
func newFixture(t *testing.T) fixture {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	bus := &event.Bus{}
	b, err := box.NewService(db, "ws", nil).Create(ctx, "Main")
	if err != nil {
		t.Fatal(err)
	}
	agents := agent.NewService(db, t.TempDir(), "ws", nil)
	f := fixture{svc: notify.New(db, "ws", bus), bus: bus}
	for _, name := range []string{"Scout", "Clerk"} {
		a, err := agents.Create(ctx, agent.NewAgent{Name: name, BoxID: b.ID})
		if err != nil {
			t.Fatal(err)
		}
		f.agents = append(f.agents, a.ID)
	}
	return f
}

func TestNotifyChecksAndCutsInput(t *testing.T) {
	f := newFixture(t)
	long := strings.Repeat("é", 300)
	for _, tc := range []struct {
		name      string
		in        notify.Input
		wantErr   error
		wantTitle string
		wantBody  int // characters
	}{
		{"plain", notify.Input{AgentID: f.agents[0], Kind: notify.Info, Title: "Report ready", Body: "see report.md"}, nil, "Report ready", 13},
		{"title on one line", notify.Input{AgentID: f.agents[0], Kind: notify.Done, Title: "  Done\nwith\tit "}, nil, "Done with it", 0},
		{"long title cut", notify.Input{AgentID: f.agents[0], Kind: notify.Progress, Title: long}, nil, strings.Repeat("é", notify.MaxTitleLen-1) + "…", 0},
		{"long body cut", notify.Input{AgentID: f.agents[0], Kind: notify.Error, Title: "x", Body: strings.Repeat("b", 5000)}, nil, "x", notify.MaxBodyLen},
		{"pause kind with its pause", notify.Input{AgentID: f.agents[0], PauseID: "pa_1", Kind: notify.Question, Title: "2 questions"}, nil, "2 questions", 0},
		{"empty title", notify.Input{AgentID: f.agents[0], Kind: notify.Info, Title: " \n "}, fault.ErrInvalid, "", 0},
		{"unknown kind", notify.Input{AgentID: f.agents[0], Kind: "shout", Title: "x"}, fault.ErrInvalid, "", 0},
		{"no agent", notify.Input{Kind: notify.Info, Title: "x"}, fault.ErrInvalid, "", 0},
		{"unknown agent", notify.Input{AgentID: "ag_nope", Kind: notify.Info, Title: "x"}, fault.ErrNotFound, "", 0},
		{"pause kind without pause", notify.Input{AgentID: f.agents[0], Kind: notify.Approval, Title: "x"}, fault.ErrInvalid, "", 0},
		{"pause id on an agent's message", notify.Input{AgentID: f.agents[0], PauseID: "pa_1", Kind: notify.Info, Title: "x"}, fault.ErrInvalid, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := f.svc.Notify(context.Background(), tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n.Title != tc.wantTitle {
				t.Errorf("title = %q, want %q", n.Title, tc.wantTitle)
			}
			if got := utf8.RuneCountInString(n.Body); got != tc.wantBody {
				t.Errorf("body has %d characters, want %d", got, tc.wantBody)
			}
			got, err := f.svc.Get(context.Background(), n.ID)
			if err != nil || got.Title != n.Title || got.Body != n.Body || got.HandledAt != nil || got.Kind != tc.in.Kind {
				t.Errorf("stored = %+v, %v; want %+v", got, err, n)
			}
		})
	}
}

func TestNotifyAnnounces(t *testing.T) {
	f := newFixture(t)
	ch, stop := f.bus.Subscribe()
	defer stop()
	n, err := f.svc.Notify(context.Background(), notify.Input{AgentID: f.agents[0], Kind: notify.Info, Title: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	c := <-ch
	want := event.Change{Workspace: "ws", Kind: "notification.created", ID: n.ID, Agent: f.agents[0]}
	if c != want {
		t.Errorf("change = %+v, want %+v", c, want)
	}
}

func TestListDismissAndPauses(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	send := func(agentID, pauseID, kind, title string) notify.Notification {
		t.Helper()
		n, err := f.svc.Notify(ctx, notify.Input{AgentID: agentID, PauseID: pauseID, Kind: kind, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	a, b := f.agents[0], f.agents[1]
	first := send(a, "", notify.Info, "first")
	card := send(a, "pa_1", notify.Approval, "approve 3 actions")
	send(b, "", notify.Done, "b done")
	last := send(a, "", notify.Error, "last")

	titles := func(o notify.ListOptions) string {
		t.Helper()
		list, err := f.svc.List(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range list {
			out = append(out, n.Title)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name string
		o    notify.ListOptions
		want string
	}{
		{"all newest first", notify.ListOptions{}, "last,b done,approve 3 actions,first"},
		{"of one agent", notify.ListOptions{AgentID: b}, "b done"},
		{"limit", notify.ListOptions{Limit: 2}, "last,b done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := titles(tc.o); got != tc.want {
				t.Errorf("titles = %s, want %s", got, tc.want)
			}
		})
	}

	if _, err := f.svc.Dismiss(ctx, card.ID); !errors.Is(err, fault.ErrConflict) || !strings.Contains(err.Error(), "answer the card") {
		t.Errorf("dismiss a pause's notification: %v, want a conflict saying to answer the card", err)
	}
	if _, err := f.svc.Dismiss(ctx, "nt_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("dismiss unknown: %v, want not found", err)
	}
	d, err := f.svc.Dismiss(ctx, first.ID)
	if err != nil || d.HandledAt == nil {
		t.Fatalf("dismiss = %+v, %v; want handled", d, err)
	}
	again, err := f.svc.Dismiss(ctx, first.ID)
	if err != nil || !again.HandledAt.Equal(*d.HandledAt) {
		t.Errorf("dismiss twice = %+v, %v; want it unchanged", again, err)
	}
	if got := titles(notify.ListOptions{Open: true}); got != "last,b done,approve 3 actions" {
		t.Errorf("open after one dismissal = %s", got)
	}
	total, byAgent, err := f.svc.Open(ctx)
	if err != nil || total != 3 || byAgent[a] != 2 || byAgent[b] != 1 {
		t.Errorf("open = %d %v %v, want 3 (2 of a, pause included; 1 of b)", total, byAgent, err)
	}

	n, err := f.svc.DismissAll(ctx, a)
	if err != nil || n != 1 {
		t.Errorf("dismiss all of a = %d, %v; want 1 (the pause's stays)", n, err)
	}
	if got := titles(notify.ListOptions{Open: true}); got != "b done,approve 3 actions" {
		t.Errorf("open after dismissing a's = %s", got)
	}
	if _, err := f.svc.DismissAll(ctx, "ag_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("dismiss all of unknown agent: %v, want not found", err)
	}
	if n, err := f.svc.DismissAll(ctx, ""); err != nil || n != 1 {
		t.Errorf("dismiss all = %d, %v; want 1", n, err)
	}

	ch, stop := f.bus.Subscribe()
	defer stop()
	again, err = f.svc.Notify(ctx, notify.Input{AgentID: a, PauseID: "pa_1", Kind: notify.Approval, Title: "raised again"})
	if err != nil || again.ID != card.ID || again.Title != card.Title {
		t.Errorf("raising a pause's notification again = %+v, %v; want the first", again, err)
	}
	if err := f.svc.HandlePause(ctx, "pa_1"); err != nil {
		t.Fatal(err)
	}
	if c := <-ch; c.Kind != "notification.updated" || c.ID != card.ID {
		t.Errorf("change = %+v, want notification.updated of the card", c)
	}
	if err := f.svc.HandlePause(ctx, "pa_1"); err != nil {
		t.Errorf("handle a pause twice: %v, want no error", err)
	}
	if total, _, _ := f.svc.Open(ctx); total != 0 {
		t.Errorf("open after the pause was answered = %d, want 0", total)
	}
	got, _ := f.svc.Get(ctx, last.ID)
	if got.HandledAt == nil {
		t.Errorf("last after dismiss all = %+v, want handled", got)
	}
}

func TestListLimits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := 0; i < notify.MaxLimit+5; i++ {
		if _, err := f.svc.Notify(ctx, notify.Input{AgentID: f.agents[0], Kind: notify.Progress, Title: "step"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		limit int
		want  int
	}{
		{"default", 0, notify.DefaultLimit},
		{"asked", 7, 7},
		{"capped", 10000, notify.MaxLimit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, err := f.svc.List(ctx, notify.ListOptions{Limit: tc.limit})
			if err != nil || len(list) != tc.want {
				t.Errorf("List(limit %d) = %d items, %v; want %d", tc.limit, len(list), err, tc.want)
			}
		})
	}
}

func TestDefaultDelivery(t *testing.T) {
	d := notify.DefaultDelivery()
	for _, tc := range []struct {
		kind      string
		automated bool
		os        bool
	}{
		{notify.Question, false, true},
		{notify.Approval, true, true},
		{notify.Connector, false, true},
		{notify.Credential, true, true},
		{notify.Takeover, false, true},
		{notify.Error, false, true},
		{notify.Error, true, true},
		{notify.Done, false, false},
		{notify.Done, true, true},
		{notify.Info, false, false},
		{notify.Info, true, true},
		{notify.Progress, false, false},
		{notify.Progress, true, false},
	} {
		n := notify.Notification{Kind: tc.kind, Automated: tc.automated}
		if got := d.Wants(n, notify.OS); got != tc.os {
			t.Errorf("%s automated=%v: os = %v, want %v", tc.kind, tc.automated, got, tc.os)
		}
		if !d.Wants(n, notify.InApp) {
			t.Errorf("%s automated=%v: in_app off, want on", tc.kind, tc.automated)
		}
	}
	if len(d) != len(notify.Kinds) {
		t.Errorf("default delivery has %d kinds, want %d", len(d), len(notify.Kinds))
	}
}

func TestSetDelivery(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		body    string
		wantErr string // part of the message; "" for success
		check   func(notify.Delivery) bool
	}{
		{"whole document", mustJSON(t, flip(notify.DefaultDelivery())), "", func(d notify.Delivery) bool {
			return !d[notify.Question][notify.Mine][notify.OS] && d[notify.Progress][notify.Automated][notify.OS]
		}},
		{"partial fills defaults", `{"progress":{"mine":{"os":true}}}`, "", func(d notify.Delivery) bool {
			return d[notify.Progress][notify.Mine][notify.OS] && d[notify.Progress][notify.Mine][notify.InApp] &&
				!d[notify.Progress][notify.Automated][notify.OS] && d[notify.Question][notify.Mine][notify.OS]
		}},
		{"unknown kind", `{"shout":{}}`, `unknown notification kind "shout"`, nil},
		{"unknown origin", `{"info":{"yours":{}}}`, `unknown origin "yours" under "info"`, nil},
		{"unknown channel", `{"info":{"mine":{"sms":true}}}`, `unknown channel "sms" under "info"."mine" in delivery settings; use in_app, os, email, hooks, phone`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var in notify.Delivery
			if err := json.Unmarshal([]byte(tc.body), &in); err != nil {
				t.Fatal(err)
			}
			ch, stop := f.bus.Subscribe()
			defer stop()
			got, err := f.svc.SetDelivery(ctx, in)
			if tc.wantErr != "" {
				if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want invalid containing %q", err, tc.wantErr)
				}
				if d, _ := f.svc.Delivery(ctx); mustJSON(t, d) != mustJSON(t, notify.DefaultDelivery()) {
					t.Errorf("a refused change was kept: %s", mustJSON(t, d))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("answer = %s", mustJSON(t, got))
			}
			stored, err := f.svc.Delivery(ctx)
			if err != nil || mustJSON(t, stored) != mustJSON(t, got) {
				t.Errorf("stored = %s, %v; want %s", mustJSON(t, stored), err, mustJSON(t, got))
			}
			if c := <-ch; c.Kind != "settings.changed" {
				t.Errorf("change = %+v, want settings.changed", c)
			}
		})
	}
}

func TestDeliveryJSONSaysWhereItIsWrong(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"not an object", `[1]`, "must be an object"},
		{"kind not an object", `{"info":true}`, `"info" in delivery settings must be an object of origins`},
		{"origin not an object", `{"info":{"mine":[]}}`, `"info"."mine" in delivery settings must be an object of channels`},
		{"not a boolean", `{"info":{"mine":{"os":"yes"}}}`, `"info"."mine"."os" in delivery settings must be true or false, not "yes"`},
		{"null switch", `{"info":{"mine":{"os":null}}}`, `must be true or false, not null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d notify.Delivery
			err := json.Unmarshal([]byte(tc.body), &d)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("unmarshal %s: %v, want invalid containing %q", tc.body, err, tc.want)
			}
		})
	}
}

// flip turns every switch of d the other way.
func flip(d notify.Delivery) notify.Delivery {
	for _, byOrigin := range d {
		for _, byChannel := range byOrigin {
			for c, on := range byChannel {
				byChannel[c] = !on
			}
		}
	}
	return d
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
