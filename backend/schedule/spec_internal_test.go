package schedule

import (
	"errors"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// robfig/cron panics on a TZ= prefix without a space; parseCron must turn
// that into an error even if a caller skips normalizeCron's check.
func TestParseCronRecoversPanics(t *testing.T) {
	for _, expr := range []string{"TZ=0", "CRON_TZ=Europe/Berlin"} {
		sched, err := parseCron(expr, time.UTC)
		if sched != nil || !errors.Is(err, fault.ErrInvalid) {
			t.Errorf("parseCron(%q) = %v, %v; want an invalid-input error", expr, sched, err)
		}
	}
}

func TestPlanFires(t *testing.T) {
	loc := time.UTC
	_, hourly, err := Spec{Kind: KindCron, Cron: "0 * * * *", Timezone: "UTC"}.parse()
	if err != nil {
		t.Fatal(err)
	}
	_, minutely, _ := Spec{Kind: KindCron, Cron: "* * * * *", Timezone: "UTC"}.parse()
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, loc)
	cases := []struct {
		name       string
		tm         timing
		now        time.Time
		catchUp    string
		within     time.Duration
		wantFire   time.Time
		wantMissed int
		unlisted   int
		next       time.Time
	}{
		{"on time", hourly, t0.Add(30 * time.Second), CatchUpSkip, time.Hour, t0, 0, 0, t0.Add(time.Hour)},
		{"late within the grace", hourly, t0.Add(90 * time.Second), CatchUpSkip, time.Hour, t0, 0, 0, t0.Add(time.Hour)},
		{"late, skip", hourly, t0.Add(10 * time.Minute), CatchUpSkip, time.Hour, time.Time{}, 1, 0, t0.Add(time.Hour)},
		{"late, once", hourly, t0.Add(10 * time.Minute), CatchUpOnce, time.Hour, t0, 0, 0, t0.Add(time.Hour)},
		{"5 h asleep, once", hourly, t0.Add(5*time.Hour + 10*time.Minute), CatchUpOnce, 24 * time.Hour,
			t0.Add(5 * time.Hour), 5, 0, t0.Add(6 * time.Hour)},
		{"too old for the window", hourly, t0.Add(5*time.Hour + 10*time.Minute), CatchUpOnce, 5 * time.Minute,
			time.Time{}, 6, 0, t0.Add(6 * time.Hour)},
		{"a day of minutes, capped rows", minutely, t0.Add(24*time.Hour + 30*time.Second), CatchUpOnce, 24 * time.Hour,
			t0.Add(24 * time.Hour), 100, 24*60 - 100, t0.Add(24*time.Hour + time.Minute)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := planFires(tc.tm, t0, tc.now, tc.catchUp, tc.within, 2*time.Minute)
			if !p.fire.Equal(tc.wantFire) {
				t.Errorf("fire = %v, want %v", p.fire, tc.wantFire)
			}
			if len(p.missed) != tc.wantMissed || p.unlisted != tc.unlisted {
				t.Errorf("missed rows = %d, unlisted = %d; want %d, %d", len(p.missed), p.unlisted, tc.wantMissed, tc.unlisted)
			}
			if !p.next.Equal(tc.next) {
				t.Errorf("next = %v, want %v", p.next, tc.next)
			}
			for i := 1; i < len(p.missed); i++ {
				if !p.missed[i].After(p.missed[i-1]) {
					t.Fatalf("missed times out of order: %v", p.missed)
				}
			}
			if len(p.missed) > 0 && !p.fire.IsZero() && !p.missed[len(p.missed)-1].Before(p.fire) {
				t.Errorf("the fired time %v is also among the missed %v", p.fire, p.missed)
			}
		})
	}
}
