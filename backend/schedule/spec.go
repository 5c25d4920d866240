package schedule

import (
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// Kinds of schedule.
const (
	KindCron = "cron" // a cron expression in a time zone
	KindOnce = "once" // a single moment
)

// Spec is when a schedule fires: a cron expression in an IANA time zone, or
// one moment (At). The time zone of a one-off is where its time is shown.
type Spec struct {
	Kind     string     `json:"kind"`
	Cron     string     `json:"cron"`
	Timezone string     `json:"timezone"`
	At       *time.Time `json:"at"`
}

// maxCronLen bounds an expression; real ones are a few dozen characters.
const maxCronLen = 200

// descriptors are the @-names accepted, as the 5-field expressions they
// stand for. @every is not among them: it counts from whenever it was last
// computed, not from the clock, so across restarts and sleep it drifts.
var descriptors = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// parser reads the five classic fields; time zones never come through it
// (the TZ= prefix is refused before parsing, see parseCron).
var parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// cronHelp ends every message about a bad expression.
const cronHelp = `use 5 fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5", or @hourly, @daily, @weekly, @monthly, @yearly`

// loadZone returns the IANA time zone name. It is checked here, before any
// cron parsing: "Local" and "" are refused because a schedule must mean the
// same on every device the workspace syncs to.
func loadZone(name string) (*time.Location, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return nil, fault.Invalid(`a schedule needs a time zone, an IANA name such as "Europe/Berlin" or "America/New_York"`)
	case strings.EqualFold(name, "local"):
		return nil, fault.Invalid(`time zone "Local" depends on the computer; use an IANA name such as "Europe/Berlin"`)
	case len(name) > 64:
		return nil, fault.Invalid("time zone name is too long; use an IANA name such as \"Europe/Berlin\"")
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fault.Invalid(`unknown time zone %q; use an IANA name such as "Europe/Berlin" or "America/New_York"`, name)
	}
	zones.Store(name, loc)
	return loc, nil
}

// zones caches loaded time zones: time.LoadLocation reads the zone file on
// every call, and the firing loop parses each schedule it fires.
var zones sync.Map // name → *time.Location

// normalizeCron trims an expression to single spaces and expands an
// @-descriptor. It returns the text to store and the fields to parse.
func normalizeCron(expr string) (stored, fields string, err error) {
	stored = strings.Join(strings.Fields(expr), " ")
	upper := strings.ToUpper(stored)
	switch {
	case stored == "":
		return "", "", fault.Invalid("the cron expression is empty; %s", cronHelp)
	case len(stored) > maxCronLen:
		return "", "", fault.Invalid("the cron expression is too long; %s", cronHelp)
	case strings.HasPrefix(upper, "TZ=") || strings.HasPrefix(upper, "CRON_TZ="):
		return "", "", fault.Invalid("put the time zone in the timezone field, not in the cron expression (remove %q)", strings.Fields(stored)[0])
	case strings.HasPrefix(stored, "@every"):
		return "", "", fault.Invalid(`@every is not supported: it is not tied to the clock and drifts across restarts; use a 5-field expression such as "*/15 * * * *"`)
	case strings.HasPrefix(stored, "@"):
		stored = strings.ToLower(stored)
		f, ok := descriptors[stored]
		if !ok {
			return "", "", fault.Invalid("unknown descriptor %q; %s", stored, cronHelp)
		}
		return stored, f, nil
	}
	return stored, stored, nil
}

// parseCron parses 5 fields in loc. robfig/cron is known to panic on some
// inputs (e.g. a TZ= prefix without a space); whatever slips past the checks
// above becomes an error here, never a crash.
func parseCron(fields string, loc *time.Location) (sched *cron.SpecSchedule, err error) {
	defer func() {
		if p := recover(); p != nil {
			sched, err = nil, fault.Invalid("cron expression %q could not be read (%v); %s", fields, p, cronHelp)
		}
	}()
	s, err := parser.Parse(fields)
	if err != nil {
		return nil, fault.Invalid("cron expression %q is not valid: %v; %s", fields, err, cronHelp)
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return nil, fault.Invalid("cron expression %q is not supported; %s", fields, cronHelp)
	}
	// Set the zone on the parsed schedule instead of through a CRON_TZ=
	// prefix: Next then works in loc whatever zone its argument is in.
	spec.Location = loc
	return spec, nil
}

// timing is a parsed, valid Spec: what the firing loop computes with.
type timing struct {
	loc       *time.Location
	cron      *cron.SpecSchedule // nil for a one-off
	at        time.Time          // a one-off's moment
	everyHour bool               // the hour field matches all 24 hours
}

// parse validates sp and returns it cleaned (expression normalised, fields
// of the other kind cleared) with its timing.
func (sp Spec) parse() (Spec, timing, error) {
	loc, err := loadZone(sp.Timezone)
	if err != nil {
		return Spec{}, timing{}, err
	}
	sp.Timezone = loc.String()
	tm := timing{loc: loc}
	switch sp.Kind {
	case KindCron:
		stored, fields, err := normalizeCron(sp.Cron)
		if err != nil {
			return Spec{}, timing{}, err
		}
		if tm.cron, err = parseCron(fields, loc); err != nil {
			return Spec{}, timing{}, err
		}
		const allHours = 1<<24 - 1
		tm.everyHour = tm.cron.Hour&allHours == allHours
		// robfig gives up after five years: such an expression never fires.
		if tm.cron.Next(time.Now()).IsZero() {
			return Spec{}, timing{}, fault.Invalid("cron expression %q never matches a date (e.g. 30 February); check the day and month fields", stored)
		}
		sp.Cron, sp.At = stored, nil
	case KindOnce:
		if sp.At == nil || sp.At.IsZero() {
			return Spec{}, timing{}, fault.Invalid("a one-off schedule needs a date and time (at)")
		}
		tm.at = sp.At.Truncate(time.Second)
		at := tm.at.In(loc)
		sp.At, sp.Cron = &at, ""
	default:
		return Spec{}, timing{}, fault.Invalid(`schedule kind %q is unknown; use "cron" (repeating) or "once" (a single date)`, sp.Kind)
	}
	return sp, tm, nil
}

// next is the first fire time strictly after t, zero when there is none.
//
// On top of robfig's Next it applies the usual cron rules for daylight
// saving, to jobs at set hours (not to hourly-style jobs, whose every wall
// hour is a real hour): a wall time that happens twice when clocks go back
// fires once, the first time; a wall time skipped when clocks go forward
// fires at the moment of the change instead of not at all.
func (tm timing) next(t time.Time) time.Time {
	if tm.cron == nil {
		if tm.at.After(t) {
			return tm.at
		}
		return time.Time{}
	}
	n := tm.cron.Next(t)
	if tm.everyHour {
		return n
	}
	// Clocks went back: a wall time not after t's has happened already.
	// Start again from the instant the clock reads t's time once more.
	for i := 0; i < 4 && !n.IsZero() && !wall(n, tm.loc).After(wall(t, tm.loc)); i++ {
		_, offT := t.In(tm.loc).Zone()
		_, offN := n.In(tm.loc).Zone()
		if offT <= offN {
			break
		}
		n = tm.cron.Next(t.Add(time.Duration(offT-offN) * time.Second))
	}
	if g := tm.skippedFire(t, n); !g.IsZero() {
		return g
	}
	return n
}

// wall is t's clock reading in loc, as a zone-free time for comparing.
func wall(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
}

// skippedFire returns the moment clocks went forward, between t and n, when
// the schedule matches a wall time that was skipped; zero when none.
func (tm timing) skippedFire(t, n time.Time) time.Time {
	if n.IsZero() {
		return time.Time{}
	}
	x := t.In(tm.loc)
	for i := 0; i < 16; i++ { // a handful of zone changes fit between two fires
		_, change := x.ZoneBounds()
		if change.IsZero() || !change.Before(n) {
			return time.Time{}
		}
		_, before := change.Add(-time.Nanosecond).Zone()
		_, after := change.Zone()
		if gap := after - before; gap > 0 && tm.matchesWithin(change.In(time.FixedZone("", before)), time.Duration(gap)*time.Second) {
			return change
		}
		x = change
	}
	return time.Time{}
}

// matchesWithin reports whether a wall time in [from, from+d) matches the
// expression; from is in a fixed zone, so its fields are wall fields.
func (tm timing) matchesWithin(from time.Time, d time.Duration) bool {
	s := tm.cron
	for w := from; w.Before(from.Add(d)); w = w.Add(time.Minute) {
		if 1<<uint(w.Minute())&s.Minute != 0 && 1<<uint(w.Hour())&s.Hour != 0 &&
			1<<uint(w.Month())&s.Month != 0 && dayMatches(s, w) {
			return true
		}
	}
	return false
}

// starBit marks a field written as "*" (robfig's convention).
const starBit = 1 << 63

// dayMatches is cron's day rule, as robfig applies it: when either day field
// is "*", both must match; when both are restricted, either may.
func dayMatches(s *cron.SpecSchedule, t time.Time) bool {
	dom := 1<<uint(t.Day())&s.Dom != 0
	dow := 1<<uint(t.Weekday())&s.Dow != 0
	if s.Dom&starBit != 0 || s.Dow&starBit != 0 {
		return dom && dow
	}
	return dom || dow
}

// maxNextTimes bounds NextTimes.
const maxNextTimes = 100

// NextTimes validates sp and returns its next n fire times after from, in
// the schedule's time zone (fewer when it ends, e.g. a one-off).
func NextTimes(sp Spec, from time.Time, n int) ([]time.Time, error) {
	_, tm, err := sp.parse()
	if err != nil {
		return nil, err
	}
	return tm.times(from, n), nil
}

func (tm timing) times(from time.Time, n int) []time.Time {
	n = max(1, min(n, maxNextTimes))
	out := make([]time.Time, 0, n)
	for t := tm.next(from); !t.IsZero() && len(out) < n; t = tm.next(t) {
		out = append(out, t.In(tm.loc))
	}
	return out
}

// Validate reports whether sp is a schedule that can fire, with a message
// saying what to fix when it is not.
func Validate(sp Spec) error {
	_, _, err := sp.parse()
	return err
}
