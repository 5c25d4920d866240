package schedule_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/schedule"
)

func TestNextTimesAcrossDST(t *testing.T) {
	cases := []struct {
		name, zone, cron, from string
		want                   []string
	}{
		// Clocks go forward at 02:00: a 02:30 job runs at the change, once.
		{"New York spring, daily 02:30", "America/New_York", "30 2 * * *", "2026-03-06T12:00:00-05:00",
			[]string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"Berlin spring, daily 02:30", "Europe/Berlin", "30 2 * * *", "2026-03-27T12:00:00+01:00",
			[]string{"2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		// Clocks go back: a repeated wall time fires once, the first time.
		{"New York fall, daily 02:30", "America/New_York", "30 2 * * *", "2026-10-30T12:00:00-04:00",
			[]string{"2026-10-31T02:30:00-04:00", "2026-11-01T02:30:00-05:00", "2026-11-02T02:30:00-05:00"}},
		{"New York fall, daily 01:30 (repeated hour)", "America/New_York", "30 1 * * *", "2026-10-30T12:00:00-04:00",
			[]string{"2026-10-31T01:30:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"Berlin fall, daily 02:30 (repeated hour)", "Europe/Berlin", "30 2 * * *", "2026-10-23T12:00:00+02:00",
			[]string{"2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		// Hourly jobs follow real hours: none invented, none dropped.
		{"New York spring, hourly", "America/New_York", "0 * * * *", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		{"New York fall, hourly", "America/New_York", "0 * * * *", "2026-11-01T00:30:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"Berlin spring, hourly", "Europe/Berlin", "@hourly", "2026-03-29T00:30:00+01:00",
			[]string{"2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"}},
		{"Berlin fall, hourly", "Europe/Berlin", "0 * * * *", "2026-10-25T01:30:00+02:00",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},
		// A minutely job inside the repeated hour stops until the hour is new.
		{"New York fall, every minute of 01:xx", "America/New_York", "* 1 * * *", "2026-11-01T01:58:30-04:00",
			[]string{"2026-11-01T01:59:00-04:00", "2026-11-02T01:00:00-05:00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			from, err := time.Parse(time.RFC3339, tc.from)
			if err != nil {
				t.Fatal(err)
			}
			got, err := schedule.NextTimes(schedule.Spec{Kind: schedule.KindCron, Cron: tc.cron, Timezone: tc.zone}, from, len(tc.want))
			if err != nil {
				t.Fatal(err)
			}
			var gotText []string
			for _, g := range got {
				if g.Location().String() != tc.zone {
					t.Errorf("time %v is in %s, want %s", g, g.Location(), tc.zone)
				}
				gotText = append(gotText, g.Format(time.RFC3339))
			}
			if strings.Join(gotText, " ") != strings.Join(tc.want, " ") {
				t.Errorf("got  %v\nwant %v", gotText, tc.want)
			}
		})
	}
}

func TestNextTimesOnce(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	sp := schedule.Spec{Kind: schedule.KindOnce, Timezone: "Asia/Tokyo", At: &at}
	got, err := schedule.NextTimes(sp, at.Add(-time.Hour), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !got[0].Equal(at) || got[0].Format("15:04") != "18:00" {
		t.Errorf("got %v, want only %v shown in Tokyo (18:00)", got, at)
	}
	if got, _ := schedule.NextTimes(sp, at, 5); len(got) != 0 {
		t.Errorf("after the moment: got %v, want none", got)
	}
}

func TestValidate(t *testing.T) {
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		spec schedule.Spec
		want string // "" = valid
	}{
		{"weekdays", schedule.Spec{Kind: "cron", Cron: "0 9 * * 1-5", Timezone: "Europe/Berlin"}, ""},
		{"names and spaces", schedule.Spec{Kind: "cron", Cron: "  0  9 * JAN mon-fri ", Timezone: "America/New_York"}, ""},
		{"descriptor", schedule.Spec{Kind: "cron", Cron: "@Daily", Timezone: "UTC"}, ""},
		{"once", schedule.Spec{Kind: "once", At: &at, Timezone: "UTC"}, ""},
		{"unknown zone", schedule.Spec{Kind: "cron", Cron: "0 9 * * *", Timezone: "Mars/Olympus"}, "unknown time zone"},
		{"zone is a path", schedule.Spec{Kind: "cron", Cron: "0 9 * * *", Timezone: "../../etc/passwd"}, "unknown time zone"},
		{"local zone", schedule.Spec{Kind: "cron", Cron: "0 9 * * *", Timezone: "Local"}, "depends on the computer"},
		{"no zone", schedule.Spec{Kind: "cron", Cron: "0 9 * * *"}, "needs a time zone"},
		{"TZ prefix that panics robfig", schedule.Spec{Kind: "cron", Cron: "TZ=0", Timezone: "UTC"}, "timezone field"},
		{"CRON_TZ prefix", schedule.Spec{Kind: "cron", Cron: "CRON_TZ=Europe/Berlin 0 9 * * *", Timezone: "UTC"}, "timezone field"},
		{"lower-case tz prefix", schedule.Spec{Kind: "cron", Cron: "tz=UTC 0 9 * * *", Timezone: "UTC"}, "timezone field"},
		{"@every", schedule.Spec{Kind: "cron", Cron: "@every 5m", Timezone: "UTC"}, "@every is not supported"},
		{"unknown descriptor", schedule.Spec{Kind: "cron", Cron: "@sometimes", Timezone: "UTC"}, "unknown descriptor"},
		{"six fields", schedule.Spec{Kind: "cron", Cron: "0 0 9 * * *", Timezone: "UTC"}, "5 fields"},
		{"minute out of range", schedule.Spec{Kind: "cron", Cron: "61 * * * *", Timezone: "UTC"}, "not valid"},
		{"zero step", schedule.Spec{Kind: "cron", Cron: "*/0 * * * *", Timezone: "UTC"}, "not valid"},
		{"never fires", schedule.Spec{Kind: "cron", Cron: "0 0 30 2 *", Timezone: "UTC"}, "never matches"},
		{"empty", schedule.Spec{Kind: "cron", Cron: "  ", Timezone: "UTC"}, "empty"},
		{"once without a moment", schedule.Spec{Kind: "once", Timezone: "UTC"}, "needs a date"},
		{"unknown kind", schedule.Spec{Kind: "weekly", Cron: "0 9 * * *", Timezone: "UTC"}, "unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := schedule.Validate(tc.spec)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want valid", err)
			case tc.want != "" && err == nil:
				t.Errorf("got valid, want an error about %q", tc.want)
			case tc.want != "" && (!errors.Is(err, fault.ErrInvalid) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an invalid-input error about %q", err, tc.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	cases := map[string]string{
		"* * * * *":           "Every minute",
		"*/15 * * * *":        "Every 15 minutes",
		"0 * * * *":           "Every hour, on the hour",
		"@hourly":             "Every hour, on the hour",
		"30 * * * *":          "Every hour at :30",
		"5 */2 * * *":         "Every 2 hours at :05",
		"0 9 * * *":           "Every day at 09:00",
		"@daily":              "Every day at 00:00",
		"0 9,17 * * *":        "Every day at 09:00 and 17:00",
		"30 8 * * 1-5":        "Every weekday at 08:30",
		"0 10 * * sat,sun":    "Every Saturday and Sunday at 10:00",
		"0 9 * * 1,4":         "Every Monday and Thursday at 09:00",
		"0 9 * * mon,wed,fri": "Every Monday, Wednesday and Friday at 09:00",
		"@weekly":             "Every Sunday at 00:00",
		"0 6 1 * *":           "On the 1st of every month at 06:00",
		"0 6 22 * *":          "On the 22nd of every month at 06:00",
		"@monthly":            "On the 1st of every month at 00:00",
		"0 0 25 12 *":         "Every year on 25 December at 00:00",
		"@yearly":             "Every year on 1 January at 00:00",
		"0 9 1-7 * 1":         "0 9 1-7 * 1", // unusual: the expression itself
		"not cron":            "not cron",
	}
	for expr, want := range cases {
		if got := schedule.Describe(expr); got != want {
			t.Errorf("Describe(%q) = %q, want %q", expr, got, want)
		}
	}
}

// FuzzSchedule feeds any cron expression and time zone: never a panic, only
// invalid-input errors, and valid specs give increasing future times.
func FuzzSchedule(f *testing.F) {
	for _, seed := range [][2]string{
		{"0 9 * * *", "Europe/Berlin"}, {"TZ=0", "UTC"}, {"CRON_TZ=", ""}, {"TZ=Europe/Berlin", "UTC"},
		{"@every 1s", "UTC"}, {"*/0 * * * *", "America/New_York"}, {"0 0 29 2 *", "Pacific/Apia"},
		{"0-59/61 * * * *", "Local"}, {"@daily", "../etc/passwd"}, {"30 2 * * *", "America/Santiago"},
		{"1-2-3 * * * *", "UTC"}, {"? ? ? ? ?", "Australia/Lord_Howe"}, {"@", "UTC"}, {"0 0 * * 7", "UTC"},
	} {
		f.Add(seed[0], seed[1])
	}
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr, zone string) {
		schedule.Describe(expr)
		times, err := schedule.NextTimes(schedule.Spec{Kind: schedule.KindCron, Cron: expr, Timezone: zone}, from, 5)
		if err != nil {
			if !errors.Is(err, fault.ErrInvalid) {
				t.Fatalf("NextTimes(%q, %q): error %v is not an invalid-input error", expr, zone, err)
			}
			return
		}
		prev := from
		for _, tm := range times {
			if !tm.After(prev) {
				t.Fatalf("NextTimes(%q, %q) = %v: not increasing after %v", expr, zone, times, prev)
			}
			prev = tm
		}
	})
}
