package schedule_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
	"github.com/rerun-build/rerun-desktop/internal/waittest"
)

// monday is a Monday morning in Berlin, the tests' default zone.
var monday = time.Date(2026, 6, 1, 8, 0, 0, 0, mustLoad("Europe/Berlin"))

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func TestCreateUpdatePauseDelete(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, monday)
	changes, stop := e.bus.Subscribe()
	defer stop()

	sch := e.create(schedule.NewSchedule{Name: "Digest", Spec: schedule.Spec{Cron: "0 9 * * 1-5"}})
	if sch.Timezone != "Europe/Berlin" || sch.CatchUp != schedule.CatchUpOnce || time.Duration(sch.CatchUpWithin) != 24*time.Hour || !sch.Enabled {
		t.Errorf("defaults: zone %q catch-up %q within %v enabled %v; want Europe/Berlin, once, 24h, true",
			sch.Timezone, sch.CatchUp, time.Duration(sch.CatchUpWithin), sch.Enabled)
	}
	if sch.SessionID == "" || e.runs.sessions != 1 {
		t.Errorf("session %q (%d opened), want its own session", sch.SessionID, e.runs.sessions)
	}
	if want := monday.Add(time.Hour); sch.NextFireAt == nil || !sch.NextFireAt.Equal(want) {
		t.Errorf("next fire %v, want %v", sch.NextFireAt, want)
	}
	if sch.Description != "Every weekday at 09:00" {
		t.Errorf("description %q", sch.Description)
	}
	if c := <-changes; c.Kind != "schedule.created" || c.ID != sch.ID || c.Agent != e.agent {
		t.Errorf("event %+v, want schedule.created of %s", c, sch.ID)
	}

	next, err := e.svc.NextTimes(ctx, sch.ID, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(next) != 6 || next[5].Weekday() != time.Monday || next[5].Format("15:04 MST") != "09:00 CEST" {
		t.Errorf("next times %v: want 6 weekday mornings at 09:00 CEST, the 6th a Monday", next)
	}

	sch, err = e.svc.Update(ctx, sch.ID, schedule.Update{Cron: ptr("30 7 * * *"), Timezone: ptr("America/New_York")})
	if err != nil {
		t.Fatal(err)
	}
	if got := sch.NextFireAt.Format(time.RFC3339); got != "2026-06-01T07:30:00-04:00" {
		t.Errorf("after the change next fire = %s, want 2026-06-01T07:30:00-04:00 (computed afresh, in New York)", got)
	}
	if _, err := e.svc.Update(ctx, sch.ID, schedule.Update{Cron: ptr("TZ=0")}); !errors.Is(err, fault.ErrInvalid) {
		t.Errorf("bad update: %v, want invalid", err)
	}

	sch, err = e.svc.SetEnabled(ctx, sch.ID, false)
	if err != nil || sch.Enabled || sch.NextFireAt != nil {
		t.Fatalf("paused: enabled %v next %v err %v; want no next fire", sch.Enabled, sch.NextFireAt, err)
	}
	if times, _ := e.svc.NextTimes(ctx, sch.ID, 3); len(times) != 0 {
		t.Errorf("paused schedule shows next times %v", times)
	}
	sch, _ = e.svc.SetEnabled(ctx, sch.ID, true)
	if sch.NextFireAt == nil {
		t.Error("resumed schedule has no next fire")
	}

	list, _ := e.svc.List(ctx, e.agent)
	all, _ := e.svc.List(ctx, "")
	if len(list) != 1 || len(all) != 1 {
		t.Errorf("list: %d for the agent, %d in all; want 1, 1", len(list), len(all))
	}
	if err := e.svc.Delete(ctx, sch.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Get(ctx, sch.ID); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("get after delete: %v, want not found", err)
	}
}

func TestCreateRejects(t *testing.T) {
	e := newEnv(t, monday)
	past := monday.Add(-time.Hour)
	cases := []struct {
		name string
		in   schedule.NewSchedule
		want string
	}{
		{"no name", schedule.NewSchedule{Spec: schedule.Spec{Kind: "cron", Cron: "0 9 * * *"}, Instruction: "x"}, "needs a name"},
		{"no instruction", schedule.NewSchedule{Name: "n", Instruction: " ", Spec: schedule.Spec{Kind: "cron", Cron: "0 9 * * *"}}, "needs an instruction"},
		{"past one-off", schedule.NewSchedule{Name: "n", Instruction: "x", Spec: schedule.Spec{Kind: "once", At: &past}}, "has passed"},
		{"bad catch-up", schedule.NewSchedule{Name: "n", Instruction: "x", Spec: schedule.Spec{Kind: "cron", Cron: "@daily"}, CatchUp: "all"}, "catch_up"},
		{"window too long", schedule.NewSchedule{Name: "n", Instruction: "x", Spec: schedule.Spec{Kind: "cron", Cron: "@daily"},
			CatchUpWithin: schedule.Duration(90 * 24 * time.Hour)}, "catch_up_within"},
		{"no agent", schedule.NewSchedule{AgentID: " ", Name: "n", Instruction: "x", Spec: schedule.Spec{Kind: "cron", Cron: "@daily"}}, "agent_id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.AgentID == "" {
				tc.in.AgentID = e.agent
			}
			_, err := e.svc.Create(context.Background(), tc.in)
			if !errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an invalid-input error about %q", err, tc.want)
			}
		})
	}
	if e.runs.sessions != 0 {
		t.Errorf("%d sessions opened for rejected schedules, want 0", e.runs.sessions)
	}
}

func TestDurationJSON(t *testing.T) {
	var in schedule.NewSchedule
	if err := json.Unmarshal([]byte(`{"kind":"cron","cron":"@daily","catch_up_within":"90m"}`), &in); err != nil {
		t.Fatal(err)
	}
	if in.Cron != "@daily" || time.Duration(in.CatchUpWithin) != 90*time.Minute {
		t.Errorf("decoded %+v, want cron @daily within 90m", in)
	}
	if err := json.Unmarshal([]byte(`{"catch_up_within":3600}`), &in); err != nil || time.Duration(in.CatchUpWithin) != time.Hour {
		t.Errorf("seconds: %v %v, want 1h", time.Duration(in.CatchUpWithin), err)
	}
	out, _ := json.Marshal(schedule.Schedule{CatchUpWithin: schedule.Duration(24 * time.Hour)})
	if !strings.Contains(string(out), `"catch_up_within":"24h0m0s"`) || !strings.Contains(string(out), `"kind":""`) {
		t.Errorf("encoded %s, want catch_up_within as text and the spec's fields flat", out)
	}
}

func TestFireOnTimeAndOneOff(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, monday)
	daily := e.create(schedule.NewSchedule{Name: "Digest", Instruction: "Post the digest.", Spec: schedule.Spec{Cron: "0 9 * * *"}})
	at := monday.Add(90 * time.Minute)
	once := e.create(schedule.NewSchedule{Name: "Reminder", Instruction: "Remind me.", Spec: schedule.Spec{Kind: schedule.KindOnce, At: &at}})

	e.clock.Set(monday.Add(59 * time.Minute))
	e.fireDue(e.svc)
	if n := len(e.runs.all()); n != 0 {
		t.Fatalf("%d runs before 09:00, want 0", n)
	}
	e.clock.Set(monday.Add(time.Hour + 700*time.Millisecond))
	e.fireDue(e.svc)
	runs := e.runs.all()
	if len(runs) != 1 {
		t.Fatalf("%d runs at 09:00, want 1", len(runs))
	}
	r := runs[0]
	if r.SessionID != daily.SessionID || r.AgentID != e.agent || !strings.Contains(r.From, "Digest") {
		t.Errorf("run %+v: want the schedule's session, agent and name", r)
	}
	for _, want := range []string{"Scheduled task “Digest”", "Mon 1 Jun 2026 09:00 CEST", "Europe/Berlin", "Post the digest."} {
		if !strings.Contains(r.Input, want) {
			t.Errorf("input %q lacks %q", r.Input, want)
		}
	}
	h := e.history(daily.ID)
	if len(h) != 1 || h[0].Outcome != schedule.OutcomeFired || h[0].RunID != r.ID || h[0].Note != "" {
		t.Errorf("history %+v, want one on-time fire linked to %s", h, r.ID)
	}
	daily, _ = e.svc.Get(ctx, daily.ID)
	if daily.LastFiredAt == nil || daily.NextFireAt.Format(time.RFC3339) != "2026-06-02T09:00:00+02:00" {
		t.Errorf("after firing: last %v next %v; want next tomorrow 09:00", daily.LastFiredAt, daily.NextFireAt)
	}

	e.clock.Set(at.Add(time.Second))
	e.fireDue(e.svc)
	if n := e.runs.bySession()[once.SessionID]; n != 1 {
		t.Fatalf("one-off ran %d times, want 1", n)
	}
	once, _ = e.svc.Get(ctx, once.ID)
	if once.Enabled || once.NextFireAt != nil {
		t.Errorf("one-off after firing: enabled %v next %v; want switched off", once.Enabled, once.NextFireAt)
	}
	e.clock.Set(at.Add(48 * time.Hour))
	e.fireDue(e.svc)
	if n := e.runs.bySession()[once.SessionID]; n != 1 {
		t.Errorf("one-off ran %d times after two days, want still 1", n)
	}
}

// The computer sleeps three days: each schedule catches up by its rule, with
// at most one run each, and every other passed time is recorded as missed.
func TestCatchUpAfterThreeDays(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, monday) // Mon 08:00
	tue := monday.Add(28 * time.Hour)
	daily := e.create(schedule.NewSchedule{Name: "daily", Spec: schedule.Spec{Cron: "0 9 * * *"}})
	hourlySkip := e.create(schedule.NewSchedule{Name: "hourly skip", Spec: schedule.Spec{Cron: "@hourly"}, CatchUp: schedule.CatchUpSkip})
	quarter := e.create(schedule.NewSchedule{Name: "quarter", Spec: schedule.Spec{Cron: "*/15 * * * *"}})
	narrow := e.create(schedule.NewSchedule{Name: "narrow window", Spec: schedule.Spec{Cron: "0 9 * * *"}, CatchUpWithin: schedule.Duration(time.Hour)})
	oneOff := e.create(schedule.NewSchedule{Name: "one-off", Spec: schedule.Spec{Kind: schedule.KindOnce, At: &tue}})

	wake := monday.Add(3*24*time.Hour + 2*time.Hour + 35*time.Minute) // Thu 10:35
	e.clock.Set(wake)
	e.fireDue(e.svc)
	e.fireDue(e.svc) // a second pass changes nothing

	perSession := e.runs.bySession()
	cases := []struct {
		sch       schedule.Schedule
		runs      int
		fired     int
		missed    int
		unlisted  string
		nextFire  string
		latestRun string
	}{
		// Mon, Tue, Wed, Thu 09:00 passed: Thu runs (1h35m late), 3 missed.
		{daily, 1, 1, 3, "", "2026-06-05T09:00:00+02:00", "2026-06-04T09:00:00+02:00"},
		// 74 hours passed, none run.
		{hourlySkip, 0, 0, 74, "", "2026-06-04T11:00:00+02:00", ""},
		// 298 quarters passed: 10:30 runs (5 min late), 100 rows of
		// missed, 197 more counted.
		{quarter, 1, 1, 100, "and 197 earlier missed times", "2026-06-04T10:45:00+02:00", "2026-06-04T10:30:00+02:00"},
		// Thu 09:00 is 1h35m late, beyond its 1 h window: all missed.
		{narrow, 0, 0, 4, "", "2026-06-05T09:00:00+02:00", ""},
		// Tue 12:00 was 46 h before waking: missed, and the one-off is done.
		{oneOff, 0, 0, 1, "", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.sch.Name, func(t *testing.T) {
			if got := perSession[tc.sch.SessionID]; got != tc.runs {
				t.Errorf("runs = %d, want %d", got, tc.runs)
			}
			h := e.history(tc.sch.ID)
			got := map[string]int{}
			var oldest schedule.Fire
			for _, f := range h {
				got[f.Outcome]++
				if f.Outcome == schedule.OutcomeFired && f.ScheduledFor.Format(time.RFC3339) != tc.latestRun {
					t.Errorf("fired for %s, want %s (the latest)", f.ScheduledFor.Format(time.RFC3339), tc.latestRun)
				}
				if f.Outcome == schedule.OutcomeFired && !strings.Contains(f.Note, "late") {
					t.Errorf("catch-up fire note %q, want it to say how late", f.Note)
				}
				oldest = f
			}
			if got[schedule.OutcomeFired] != tc.fired || got[schedule.OutcomeMissed] != tc.missed {
				t.Errorf("history fired %d missed %d, want %d and %d", got[schedule.OutcomeFired], got[schedule.OutcomeMissed], tc.fired, tc.missed)
			}
			if tc.unlisted != "" && !strings.Contains(oldest.Note, tc.unlisted) {
				t.Errorf("oldest row note %q, want %q", oldest.Note, tc.unlisted)
			}
			sch, _ := e.svc.Get(ctx, tc.sch.ID)
			next := ""
			if sch.NextFireAt != nil {
				next = sch.NextFireAt.Format(time.RFC3339)
			}
			if next != tc.nextFire {
				t.Errorf("next fire %q, want %q", next, tc.nextFire)
			}
		})
	}
}

// Two loops (two database handles, as two processes) fire the same
// schedules at the same instants: every time runs exactly once.
func TestRacingLoopsFireOnce(t *testing.T) {
	e := newEnv(t, monday)
	const schedules, minutes = 20, 5
	for i := 0; i < schedules; i++ {
		e.create(schedule.NewSchedule{Name: "every minute", Spec: schedule.Spec{Cron: "* * * * *"}})
	}
	loops := []*schedule.Service{e.svc, e.service(e.reopen()), e.service(e.reopen())}
	for m := 1; m <= minutes; m++ {
		e.clock.Set(monday.Add(time.Duration(m) * time.Minute))
		var wg sync.WaitGroup
		for _, svc := range loops {
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := svc.FireDue(context.Background()); err != nil {
						t.Error(err)
					}
				}()
			}
		}
		wg.Wait()
	}
	assertOncePerTime(t, e, schedules, minutes)
}

// The same with the real Serve loops, woken as a clock jump would.
func TestRacingServeLoops(t *testing.T) {
	e := newEnv(t, monday)
	const schedules = 10
	for i := 0; i < schedules; i++ {
		e.create(schedule.NewSchedule{Name: "every minute", Spec: schedule.Spec{Cron: "* * * * *"}})
	}
	ctx, cancel := context.WithCancel(context.Background())
	loops := []*schedule.Service{e.svc, e.service(e.reopen())}
	var wg sync.WaitGroup
	for _, svc := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); svc.Serve(ctx) }()
	}
	const minutes = 3
	for m := 1; m <= minutes; m++ {
		e.clock.Set(monday.Add(time.Duration(m) * time.Minute))
		for _, svc := range loops {
			svc.Wake()
		}
		waitFor(t, func() bool { return len(e.runs.all()) >= schedules*m })
	}
	cancel()
	wg.Wait()
	assertOncePerTime(t, e, schedules, minutes)
}

// Timers stop while a laptop sleeps: the loop must notice the clock has
// jumped within MaxSleep, with nobody waking it.
func TestServeRereadsTheClock(t *testing.T) {
	e := newEnv(t, monday)
	sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
	svc := schedule.NewService(schedule.Deps{DB: e.db, Runs: e.runs}, schedule.Config{Now: e.clock.Now, MaxSleep: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { svc.Serve(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(50 * time.Millisecond)       // the loop sleeps: its next fire is an hour away
	e.clock.Set(monday.Add(26 * time.Hour)) // woke the next day at 10:00
	waitFor(t, func() bool { return e.runs.bySession()[sch.SessionID] == 1 })
	if o := e.outcomes(sch.ID); o[schedule.OutcomeFired] != 1 {
		t.Errorf("history %v, want the catch-up fire", o)
	}
}

func assertOncePerTime(t *testing.T, e *env, schedules, minutes int) {
	t.Helper()
	if got := len(e.runs.all()); got != schedules*minutes {
		t.Errorf("%d runs, want %d (one per schedule per minute)", got, schedules*minutes)
	}
	seen := map[string]bool{}
	for _, q := range e.runs.all() {
		key := q.SessionID + strings.SplitN(q.Input, "·", 2)[0]
		if seen[key] {
			t.Errorf("fired twice: %s", key)
		}
		seen[key] = true
	}
	list, _ := e.svc.List(context.Background(), e.agent)
	for _, sch := range list {
		if o := e.outcomes(sch.ID); o[schedule.OutcomeFired] != minutes || o[schedule.OutcomeMissed] != 0 {
			t.Errorf("schedule %s history %v, want %d fired, none missed", sch.ID, o, minutes)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waittest.Patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A restart at the fire instant: the new process sees the time claimed and
// does not fire it again. A process killed during the claim leaves nothing
// behind (the fire and its run commit together), so the restart fires it
// once. A fire claimed without a run (left by a process that queued runs
// apart from the claim) is queued once, or only linked when its run was
// queued after all.
func TestRestartAtFireInstant(t *testing.T) {
	nine := monday.Add(time.Hour)

	t.Run("fired, then restarted", func(t *testing.T) {
		e := newEnv(t, monday)
		sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
		e.clock.Set(nine)
		e.fireDue(e.svc)
		after := e.service(e.reopen())
		for _, at := range []time.Time{nine, nine.Add(time.Second), nine.Add(5 * time.Minute)} {
			e.clock.Set(at)
			e.fireDue(after)
		}
		if n := e.runs.bySession()[sch.SessionID]; n != 1 {
			t.Errorf("%d runs, want 1", n)
		}
	})

	t.Run("killed during the claim", func(t *testing.T) {
		e := newEnv(t, monday)
		sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
		ctx, kill := context.WithCancel(context.Background())
		e.runs.before = func(context.Context) error { kill(); return errors.New("process killed") }
		e.clock.Set(nine)
		if _, err := e.svc.FireDue(ctx); err == nil {
			t.Fatal("FireDue with the process killed: no error")
		}
		e.runs.before = nil
		if h := e.history(sch.ID); len(h) != 0 {
			t.Fatalf("history after the crash %+v, want none", h)
		}
		e.clock.Set(nine.Add(30 * time.Second))
		e.fireDue(e.service(e.reopen()))
		runs := e.runs.all()
		h := e.history(sch.ID)
		if len(runs) != 1 || len(h) != 1 || h[0].RunID != runs[0].ID || h[0].Note != "" {
			t.Errorf("runs %+v history %+v, want one fire on time, linked to its run", runs, h)
		}
	})

	for _, tc := range []struct {
		name   string
		queued bool // the run was queued before the process died
	}{{"claimed, run not queued", false}, {"claimed, run queued but not linked", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, monday)
			sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
			e.clock.Set(nine)
			fire, err := e.svc.ClaimOnly(context.Background(), sch.ID, nine)
			if err != nil {
				t.Fatal(err)
			}
			if tc.queued {
				e.runs.queue(sch.SessionID, "[Scheduled task · "+fire+"]\n\nSummarise yesterday's sales.")
			}
			queuedBefore := len(e.runs.all())

			after := e.service(e.reopen())
			e.clock.Set(nine.Add(30 * time.Second)) // within ClaimTimeout: a live loop could still be at it
			e.fireDue(after)
			if got := len(e.runs.all()); got != queuedBefore {
				t.Fatalf("settled a young claim: %d runs, want %d", got, queuedBefore)
			}
			e.clock.Set(nine.Add(3 * time.Minute))
			e.fireDue(after)
			e.fireDue(after)
			if n := e.runs.bySession()[sch.SessionID]; n != 1 {
				t.Errorf("%d runs, want exactly 1", n)
			}
			h := e.history(sch.ID)
			if len(h) != 1 || h[0].ID != fire || h[0].RunID != e.runs.all()[0].ID {
				t.Errorf("history %+v, want fire %s linked to run %s", h, fire, e.runs.all()[0].ID)
			}
		})
	}
}

// A fire left without its run, found only days later, is not run: it is
// past the catch-up window, like any other time missed meanwhile.
func TestInterruptedFireTooOld(t *testing.T) {
	e := newEnv(t, monday)
	sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
	e.clock.Set(monday.Add(time.Hour))
	if _, err := e.svc.ClaimOnly(context.Background(), sch.ID, monday.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	e.clock.Set(monday.Add(3*24*time.Hour + 2*time.Hour)) // Thu 10:00
	e.fireDue(e.service(e.reopen()))
	runs := e.runs.all()
	if len(runs) != 1 || !strings.Contains(runs[0].Input, "Thu 4 Jun 2026 09:00") {
		t.Fatalf("runs %+v, want only Thursday's catch-up", runs)
	}
	h := e.history(sch.ID)
	monday9 := h[len(h)-1]
	if monday9.RunID != "" || !strings.Contains(monday9.Error, "older than the catch-up window") {
		t.Errorf("Monday's interrupted fire %+v, want not run, saying why", monday9)
	}
}

func TestRunNow(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, monday)
	sch := e.create(schedule.NewSchedule{Name: "digest", Instruction: "Post it.", Spec: schedule.Spec{Cron: "0 9 * * *"}, Enabled: ptr(false)})
	f, err := e.svc.RunNow(ctx, sch.ID)
	if err != nil {
		t.Fatal(err)
	}
	runs := e.runs.all()
	if len(runs) != 1 || f.RunID != runs[0].ID || runs[0].SessionID != sch.SessionID || f.Outcome != schedule.OutcomeManual {
		t.Fatalf("run now: fire %+v runs %+v; want one manual run in the schedule's session", f, runs)
	}
	if !strings.Contains(runs[0].Input, "run now by hand") || !strings.Contains(runs[0].Input, "Post it.") {
		t.Errorf("input %q", runs[0].Input)
	}
	// Twice at the same instant is fine: manual fires are outside the key.
	if _, err := e.svc.RunNow(ctx, sch.ID); err != nil {
		t.Fatal(err)
	}
	if o := e.outcomes(sch.ID); o[schedule.OutcomeManual] != 2 {
		t.Errorf("history %v, want 2 manual", o)
	}
	got, _ := e.svc.Get(ctx, sch.ID)
	if got.Enabled || got.NextFireAt != nil || got.LastFiredAt == nil {
		t.Errorf("after run now: enabled %v next %v last %v; want still paused, last fired set", got.Enabled, got.NextFireAt, got.LastFiredAt)
	}
	if _, err := e.svc.RunNow(ctx, "sch_nope"); !errors.Is(err, fault.ErrNotFound) {
		t.Errorf("unknown schedule: %v, want not found", err)
	}
}

// A run that cannot be queued is recorded on the fire, not retried forever.
func TestFireRecordsQueueError(t *testing.T) {
	e := newEnv(t, monday)
	sch := e.create(schedule.NewSchedule{Name: "digest", Spec: schedule.Spec{Cron: "0 9 * * *"}})
	e.runs.before = func(context.Context) error { return fault.NotFound("no session") }
	e.clock.Set(monday.Add(time.Hour))
	e.fireDue(e.svc)
	e.clock.Set(monday.Add(time.Hour + 5*time.Minute))
	e.fireDue(e.svc)
	h := e.history(sch.ID)
	if len(h) != 1 || h[0].Outcome != schedule.OutcomeFired || !strings.Contains(h[0].Error, "no session") {
		t.Errorf("history %+v, want one fire with the queue error", h)
	}
}

// The loop walks across a spring-forward night in New York minute by
// minute, as a running app would: the 02:30 job runs once, at 03:00 EDT.
func TestServeAcrossSpringForward(t *testing.T) {
	ny := mustZone(t, "America/New_York")
	start := time.Date(2026, 3, 7, 23, 0, 0, 0, ny)
	e := newEnv(t, start)
	sch := e.create(schedule.NewSchedule{Name: "night job", Spec: schedule.Spec{Cron: "30 2 * * *", Timezone: "America/New_York"}})
	for now := start; now.Before(start.Add(6 * time.Hour)); now = now.Add(time.Minute) {
		e.clock.Set(now)
		e.fireDue(e.svc)
	}
	h := e.history(sch.ID)
	if len(h) != 1 || h[0].Outcome != schedule.OutcomeFired || h[0].ScheduledFor.Format(time.RFC3339) != "2026-03-08T03:00:00-04:00" {
		t.Errorf("history %+v, want one fire at 03:00 EDT", h)
	}
}

func ptr[T any](v T) *T { return &v }
