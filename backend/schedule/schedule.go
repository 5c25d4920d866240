// Package schedule owns an agent's scheduled tasks: an instruction the agent
// follows with no user message, on a cron expression in an IANA time zone
// or once at a given moment, each in its own session so automated runs never
// pollute the chat.
//
// robfig/cron/v3 parses expressions and computes next times; the firing loop
// (Serve) is this package's own and durable, because Go timers stop while a
// laptop sleeps and a process can stop at any moment:
//
//   - each schedule's next_fire_at is stored; the loop wakes at the earliest
//     one, or after at most Config.MaxSleep (30 s), and re-reads the wall
//     clock;
//   - a fire claims the key (schedule id, scheduled time) in schedule_fires in
//     the transaction that moves next_fire_at on, so two loops, or a restart
//     at the fire instant, can never fire a time twice;
//   - after sleep or downtime a schedule whose time passed more than
//     Config.Grace ago catches up by its own rule: CatchUpOnce (the default)
//     runs once if the latest missed time is within CatchUpWithin (default
//     24 h), CatchUpSkip runs nothing. Every other passed time is recorded as
//     missed (at most 100 rows per catch-up, the rest as a count). Never a
//     burst;
//   - the fire's run is queued in the claim's own transaction (Runs.StartEachTx),
//     so a fire and its run commit together, and a burst of fires shares
//     one commit. A fire found claimed without a run id (left by a process
//     that queued runs separately) is settled after Config.ClaimTimeout:
//     linked to its run when it was queued (found by the fire id in its
//     input), queued now, or marked not run when older than the window.
//
// Cron expressions have the 5 classic fields or one of @hourly, @daily
// (@midnight), @weekly, @monthly, @yearly (@annually). @every is refused (it
// is not tied to the clock), and so is a TZ= or CRON_TZ= prefix: the time zone
// is its own field, checked with time.LoadLocation before anything is parsed.
// Daylight saving follows the classic cron rules for jobs at set hours: a
// time that happens twice fires once, a skipped time fires at the change.
//
// Queuing a run is done through the Runs interface, so the package does not
// depend on package run. Wiring (in backend/workspace) adapts *run.Service:
//
//	type scheduleRuns struct{ *run.Service }
//
//	func (r scheduleRuns) NewSession(ctx context.Context, agentID string) (string, error) {
//		s, err := r.Service.NewSession(ctx, agentID, run.SourceSchedule, "")
//		return s.ID, err
//	}
//	func (r scheduleRuns) StartEachTx(ctx context.Context, tx *sql.Tx, starts []schedule.Start) ([]string, []error, error) {
//		news := make([]run.NewRun, len(starts))
//		for i, x := range starts {
//			news[i] = run.NewRun{AgentID: x.AgentID, SessionID: x.SessionID, Source: run.SourceSchedule, From: x.From, Input: x.Input}
//		}
//		runs, errs, err := r.Service.StartEachTx(ctx, tx, news)
//		ids := make([]string, len(runs))
//		for i, x := range runs {
//			ids[i] = x.ID
//		}
//		return ids, errs, err
//	}
//	func (r scheduleRuns) Started(agentID, sessionID, runID string) {
//		r.Service.Started(run.Run{ID: runID, AgentID: agentID, SessionID: sessionID})
//	}
//	func (r scheduleRuns) Find(ctx context.Context, sessionID, marker string) (string, error) {
//		runs, err := r.Service.List(ctx, run.ListOptions{SessionID: sessionID, Limit: 1000})
//		for _, x := range runs {
//			if strings.Contains(x.Input, marker) {
//				return x.ID, nil
//			}
//		}
//		return "", err
//	}
//
// then schedule.NewService(schedule.Deps{…, Runs: scheduleRuns{runs}}, cfg) and
// go svc.Serve(ctx). The service API maps one to one onto the MCP tools
// (list_schedules → List, upsert_schedule → Create or Update,
// run_schedule_now → RunNow, delete_schedule → Delete) and the Automations tab
// (Describe, NextTimes, History, SetEnabled). Every change publishes an
// event.Change of kind schedule.created / schedule.updated / schedule.deleted /
// schedule.fired.
package schedule

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Catch-up rules: what a schedule does about fire times that passed while
// the computer slept or the app was closed.
const (
	CatchUpOnce = "once" // run once for the latest missed time, if recent enough
	CatchUpSkip = "skip" // run nothing; record them as missed
)

// Limits on what a schedule holds.
const (
	MaxNameLen           = 80
	MaxInstructionLen    = 16 << 10
	DefaultCatchUpWithin = 24 * time.Hour
	MaxCatchUpWithin     = 30 * 24 * time.Hour
)

// Duration is a time.Duration that reads and writes JSON as text such as
// "24h0m0s" (a number is read as seconds).
type Duration time.Duration

// MarshalJSON writes d as Go duration text.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "90m"-style text or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fault.Invalid(`a duration is text such as "24h" or "90m", or a number of seconds`)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fault.Invalid(`duration %q is not valid; write it like "24h" or "90m"`, s)
	}
	*d = Duration(v)
	return nil
}

// Schedule is one scheduled task of an agent.
type Schedule struct {
	ID          string `json:"id"`
	AgentID     string `json:"agent_id"`
	SessionID   string `json:"session_id"`
	Name        string `json:"name"`
	Instruction string `json:"instruction"`
	Spec
	Enabled       bool     `json:"enabled"`
	CatchUp       string   `json:"catch_up"`
	CatchUpWithin Duration `json:"catch_up_within"`
	// NextFireAt is nil when the schedule will not fire: paused, or a
	// one-off that is done. Times are in the schedule's time zone.
	NextFireAt  *time.Time `json:"next_fire_at"`
	LastFiredAt *time.Time `json:"last_fired_at"`
	// Description says when it fires in words ("Every weekday at 09:00").
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// NewSchedule is what it takes to create a schedule. Timezone "" means
// Config.DefaultTimezone; CatchUp "" means CatchUpOnce; CatchUpWithin 0
// means 24 h; Enabled nil means enabled.
type NewSchedule struct {
	AgentID     string `json:"agent_id"`
	Name        string `json:"name"`
	Instruction string `json:"instruction"`
	Spec
	Enabled       *bool    `json:"enabled"`
	CatchUp       string   `json:"catch_up"`
	CatchUpWithin Duration `json:"catch_up_within"`
}

// Update changes the fields that are not nil. Changing when it fires
// (Kind, Cron, Timezone, At) computes the next fire time afresh from now.
type Update struct {
	Name          *string    `json:"name"`
	Instruction   *string    `json:"instruction"`
	Kind          *string    `json:"kind"`
	Cron          *string    `json:"cron"`
	Timezone      *string    `json:"timezone"`
	At            *time.Time `json:"at"`
	Enabled       *bool      `json:"enabled"`
	CatchUp       *string    `json:"catch_up"`
	CatchUpWithin *Duration  `json:"catch_up_within"`
}

// Runs queues the runs schedules start. The package doc shows the adapter
// over *run.Service.
type Runs interface {
	// NewSession opens a schedule's own session with agentID.
	NewSession(ctx context.Context, agentID string) (sessionID string, err error)
	// StartEachTx durably queues a run for each of starts, each in its
	// own session, inside tx, the caller's transaction, and returns their
	// ids without waiting for them: a burst of fires shares its writes.
	// errs[i] is the fault error (wrong session or input) of starts[i],
	// for which nothing is written; any other error fails tx.
	StartEachTx(ctx context.Context, tx *sql.Tx, starts []Start) (runIDs []string, errs []error, err error)
	// Started hands a run StartEachTx queued to the workers, once its
	// transaction has committed.
	Started(agentID, sessionID, runID string)
	// Find returns the run of sessionID whose input contains marker, or ""
	// when there is none. It settles a fire claimed without a run id (the
	// marker is the fire id).
	Find(ctx context.Context, sessionID, marker string) (runID string, err error)
}

// Start is one run for Runs.StartEachTx: from names who asked (shown in
// the chat); input is the whole message.
type Start struct{ AgentID, SessionID, From, Input string }

// Deps is what the service is wired with.
type Deps struct {
	DB        *store.DB
	Workspace string
	Runs      Runs
	Bus       *event.Bus   // nil: no change events
	Logger    *slog.Logger // nil: discard
	// Active says whether this device fires the schedules (a workspace
	// synced between devices fires them on one only); nil: always.
	Active func() bool
}

// Config tunes the service. Zero values take the defaults.
type Config struct {
	Now func() time.Time // default time.Now
	// DefaultTimezone is used when a new schedule names none (default
	// "UTC"; the app passes the user's IANA zone).
	DefaultTimezone string
	// Grace is how late a fire may be and still count as on time, whatever
	// the catch-up rule (default 2 min).
	Grace time.Duration
	// MaxSleep is the longest the loop sleeps before re-reading the clock
	// (default 30 s): Go timers stop while a laptop sleeps.
	MaxSleep time.Duration
	// ClaimTimeout is how long a claimed fire may wait for its run id before
	// the loop settles it itself, after a crash (default 2 min).
	ClaimTimeout time.Duration
	// HistoryRetention is how long fire history is kept (default 90 days).
	HistoryRetention time.Duration
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.DefaultTimezone == "" {
		c.DefaultTimezone = "UTC"
	}
	if c.Grace <= 0 {
		c.Grace = 2 * time.Minute
	}
	if c.MaxSleep <= 0 {
		c.MaxSleep = 30 * time.Second
	}
	if c.ClaimTimeout <= 0 {
		c.ClaimTimeout = 2 * time.Minute
	}
	if c.HistoryRetention <= 0 {
		c.HistoryRetention = 90 * 24 * time.Hour
	}
	return c
}

// Service manages and fires the schedules of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	runs      Runs
	bus       *event.Bus
	log       *slog.Logger
	cfg       Config
	wake      chan struct{}
	stmts     func() (statements, error) // prepared on first use
	active    func() bool
}

// NewService returns the schedule service; call Serve to fire schedules.
func NewService(d Deps, cfg Config) *Service {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{db: d.DB, workspace: d.Workspace, runs: d.Runs, bus: d.Bus, log: log,
		cfg: cfg.withDefaults(), wake: make(chan struct{}, 1), active: d.Active,
		stmts: sync.OnceValues(func() (statements, error) { return prepare(d.DB) })}
}

func (s *Service) now() time.Time { return s.cfg.Now().UTC() }

func (s *Service) publish(kind string, sch Schedule) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: sch.ID, Agent: sch.AgentID, Session: sch.SessionID})
	}
}

// Wake makes the firing loop look at the clock and the schedules now. The
// service calls it after every change; tests call it after moving a fake
// clock.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

const columns = `id, agent_id, session_id, name, instruction, kind, cron, timezone, at, enabled,
	catch_up, catch_up_within, next_fire_at, last_fired_at, created_at, updated_at`

func scan(row store.Scanner) (Schedule, error) {
	var sch Schedule
	var within int64
	var at, next, last sql.NullString
	var created, updated string
	err := row.Scan(&sch.ID, &sch.AgentID, &sch.SessionID, &sch.Name, &sch.Instruction, &sch.Kind, &sch.Cron,
		&sch.Timezone, &at, &sch.Enabled, &sch.CatchUp, &within, &next, &last, &created, &updated)
	if err != nil {
		return Schedule{}, err
	}
	// Times are stored in UTC and shown in the schedule's zone.
	loc, zerr := loadZone(sch.Timezone)
	if zerr != nil {
		loc = time.UTC
	}
	sch.At, sch.NextFireAt, sch.LastFiredAt = optTime(at, loc), optTime(next, loc), optTime(last, loc)
	sch.CatchUpWithin = Duration(time.Duration(within) * time.Second)
	sch.CreatedAt, sch.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	sch.Description = sch.describe()
	return sch, nil
}

func optTime(v sql.NullString, loc *time.Location) *time.Time {
	if !v.Valid {
		return nil
	}
	t := store.ParseTime(v.String).In(loc)
	return &t
}

func nullTime(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return store.FormatTime(*t)
}

func (sch Schedule) describe() string {
	if sch.Kind == KindOnce && sch.At != nil {
		return describeOnce(*sch.At)
	}
	return Describe(sch.Cron)
}

// Get returns one schedule.
func (s *Service) Get(ctx context.Context, id string) (Schedule, error) {
	sch, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM schedules WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Schedule{}, fault.NotFound("no schedule with id %q", id)
	}
	if err != nil {
		return Schedule{}, fmt.Errorf("get schedule %q: %w", id, err)
	}
	return sch, nil
}

// List returns an agent's schedules, oldest first; agentID "" lists every
// schedule of the workspace (the board's clock badges).
func (s *Service) List(ctx context.Context, agentID string) ([]Schedule, error) {
	q, args := `SELECT `+columns+` FROM schedules`, []any{}
	if agentID != "" {
		q, args = q+` WHERE agent_id = ?`, append(args, agentID)
	}
	list, err := store.Query(ctx, s.db, scan, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	return list, nil
}

// cleanText trims a text field and checks it; missing says what to write
// when it is empty.
func cleanText(field, v string, maxLen int, missing string) (string, error) {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return "", fault.Invalid("%s", missing)
	case field == "name" && utf8.RuneCountInString(v) > maxLen:
		return "", fault.Invalid("the name is too long; keep it to %d characters", maxLen)
	case field == "name" && strings.IndexFunc(v, unicode.IsControl) >= 0:
		return "", fault.Invalid("the name contains a control character; use plain text")
	case len(v) > maxLen:
		return "", fault.Invalid("the %s is too long; keep it under %d KiB (put long material in a file the agent reads)", field, maxLen>>10)
	}
	return v, nil
}

// checked is a schedule's validated content.
type checked struct {
	sch Schedule
	tm  timing
}

// check validates sch in place (trimmed and normalised) and computes when
// it fires next after now, if enabled.
func (s *Service) check(sch Schedule, now time.Time) (checked, error) {
	var err error
	if sch.Name, err = cleanText("name", sch.Name, MaxNameLen, `a schedule needs a name, e.g. "Morning digest"`); err != nil {
		return checked{}, err
	}
	if sch.Instruction, err = cleanText("instruction", sch.Instruction, MaxInstructionLen,
		`a schedule needs an instruction: what the agent should do, e.g. "Summarise yesterday's sales in #general"`); err != nil {
		return checked{}, err
	}
	if sch.Timezone == "" {
		sch.Timezone = s.cfg.DefaultTimezone
	}
	sp, tm, err := sch.Spec.parse()
	if err != nil {
		return checked{}, err
	}
	sch.Spec = sp
	switch sch.CatchUp {
	case "":
		sch.CatchUp = CatchUpOnce
	case CatchUpOnce, CatchUpSkip:
	default:
		return checked{}, fault.Invalid(`catch_up %q is unknown; use "once" (run once for the latest missed time) or "skip"`, sch.CatchUp)
	}
	switch w := time.Duration(sch.CatchUpWithin); {
	case w == 0:
		sch.CatchUpWithin = Duration(DefaultCatchUpWithin)
	case w < time.Minute || w > MaxCatchUpWithin:
		return checked{}, fault.Invalid("catch_up_within must be between 1m and %s, e.g. \"24h\"", MaxCatchUpWithin)
	}
	sch.CatchUpWithin = Duration(time.Duration(sch.CatchUpWithin).Truncate(time.Second))
	sch.NextFireAt = nil
	if sch.Enabled {
		next := tm.next(now)
		if next.IsZero() {
			if sch.Kind == KindOnce {
				return checked{}, fault.Invalid("that moment (%s) has passed; pick a time in the future", sch.At.Format("2 Jan 2006 15:04 MST"))
			}
			return checked{}, fault.Invalid("cron expression %q does not fire in the next five years", sch.Cron)
		}
		next = next.In(tm.loc)
		sch.NextFireAt = &next
	}
	sch.Description = sch.describe()
	return checked{sch, tm}, nil
}

// Create adds a schedule to an agent, with its own session.
func (s *Service) Create(ctx context.Context, in NewSchedule) (Schedule, error) {
	now := s.now()
	sch := Schedule{ID: store.NewSortedID("sch"), AgentID: in.AgentID, Name: in.Name, Instruction: in.Instruction, Spec: in.Spec,
		Enabled: in.Enabled == nil || *in.Enabled, CatchUp: in.CatchUp, CatchUpWithin: in.CatchUpWithin, CreatedAt: now, UpdatedAt: now}
	if strings.TrimSpace(in.AgentID) == "" {
		return Schedule{}, fault.Invalid("a schedule belongs to an agent; give its agent_id")
	}
	c, err := s.check(sch, now)
	if err != nil {
		return Schedule{}, err
	}
	sch = c.sch
	// The session comes first: the schedule row names it. A failed insert
	// leaves an empty session behind, which is harmless.
	if sch.SessionID, err = s.runs.NewSession(ctx, sch.AgentID); err != nil {
		return Schedule{}, fmt.Errorf("open the schedule's session: %w", err)
	}
	ts := store.FormatTime(now)
	_, err = s.db.ExecContext(ctx, `INSERT INTO schedules (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
		sch.ID, sch.AgentID, sch.SessionID, sch.Name, sch.Instruction, sch.Kind, sch.Cron, sch.Timezone, nullTime(sch.At),
		sch.Enabled, sch.CatchUp, int64(time.Duration(sch.CatchUpWithin)/time.Second), nullTime(sch.NextFireAt), ts, ts)
	if err != nil {
		return Schedule{}, fmt.Errorf("create schedule: %w", err)
	}
	s.publish("schedule.created", sch)
	s.Wake()
	return sch, nil
}

// Update changes a schedule. A new Kind/Cron/Timezone/At, or enabling it,
// computes the next fire time from now (fires missed while paused are not
// caught up); other changes keep it.
func (s *Service) Update(ctx context.Context, id string, u Update) (Schedule, error) {
	var out Schedule
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		sch, err := scan(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM schedules WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return fault.NotFound("no schedule with id %q", id)
		}
		if err != nil {
			return err
		}
		wasEnabled, oldSpec := sch.Enabled, sch.Spec
		set(&sch.Name, u.Name)
		set(&sch.Instruction, u.Instruction)
		set(&sch.Kind, u.Kind)
		set(&sch.Cron, u.Cron)
		set(&sch.Timezone, u.Timezone)
		set(&sch.Enabled, u.Enabled)
		set(&sch.CatchUp, u.CatchUp)
		set(&sch.CatchUpWithin, u.CatchUpWithin)
		if u.At != nil {
			sch.At = u.At
		}
		now := s.now()
		next := sch.NextFireAt
		c, err := s.check(sch, now)
		if err != nil {
			return err
		}
		sch = c.sch
		// Keep a pending fire time unless when-it-fires changed: moving it
		// would skip a fire that is due but not yet taken.
		if sch.Enabled && wasEnabled && sameSpec(oldSpec, sch.Spec) && next != nil {
			sch.NextFireAt = next
		}
		sch.UpdatedAt = now
		if _, err := tx.ExecContext(ctx, `UPDATE schedules SET name = ?, instruction = ?, kind = ?, cron = ?, timezone = ?, at = ?,
			enabled = ?, catch_up = ?, catch_up_within = ?, next_fire_at = ?, updated_at = ? WHERE id = ?`,
			sch.Name, sch.Instruction, sch.Kind, sch.Cron, sch.Timezone, nullTime(sch.At), sch.Enabled, sch.CatchUp,
			int64(time.Duration(sch.CatchUpWithin)/time.Second), nullTime(sch.NextFireAt), store.FormatTime(now), id); err != nil {
			return err
		}
		out = sch
		return nil
	})
	if err != nil {
		return Schedule{}, fmt.Errorf("update schedule %q: %w", id, err)
	}
	s.publish("schedule.updated", out)
	s.Wake()
	return out, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func sameSpec(a, b Spec) bool {
	return a.Kind == b.Kind && a.Cron == b.Cron && a.Timezone == b.Timezone &&
		(a.At == nil) == (b.At == nil) && (a.At == nil || a.At.Equal(*b.At))
}

// SetEnabled pauses or resumes a schedule. Resuming counts from now: what
// passed while it was paused is neither run nor recorded.
func (s *Service) SetEnabled(ctx context.Context, id string, enabled bool) (Schedule, error) {
	return s.Update(ctx, id, Update{Enabled: &enabled})
}

// Delete removes a schedule and its history. Its session and runs stay.
func (s *Service) Delete(ctx context.Context, id string) error {
	sch, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete schedule %q: %w", id, err)
	}
	s.publish("schedule.deleted", sch)
	return nil
}

// NextTimes returns the next n fire times of a stored schedule, in its time
// zone (none when it is paused; at most 100).
func (s *Service) NextTimes(ctx context.Context, id string, n int) ([]time.Time, error) {
	sch, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if sch.NextFireAt == nil {
		return []time.Time{}, nil
	}
	_, tm, err := sch.Spec.parse()
	if err != nil {
		return nil, err
	}
	// From just before the stored next time: it is the first of them.
	return tm.times(sch.NextFireAt.Add(-time.Second), n), nil
}

// Preview is what a schedule being typed would do: when it fires, in words
// and as its next times.
type Preview struct {
	Description string      `json:"description"`
	Next        []time.Time `json:"next"` // in the schedule's time zone
}

// Preview checks sp (no time zone means Config.DefaultTimezone) and
// returns its description and next n fire times from now (at most 100), or
// an error saying what to fix: the Automations tab's live feedback.
func (s *Service) Preview(sp Spec, n int) (Preview, error) {
	if strings.TrimSpace(sp.Timezone) == "" {
		sp.Timezone = s.cfg.DefaultTimezone
	}
	sp, tm, err := sp.parse()
	if err != nil {
		return Preview{}, err
	}
	next := tm.times(s.now(), n)
	if len(next) == 0 && sp.Kind == KindOnce {
		return Preview{}, fault.Invalid("that moment (%s) has passed; pick a time in the future", sp.At.Format("2 Jan 2006 15:04 MST"))
	}
	return Preview{Description: Schedule{Spec: sp}.describe(), Next: next}, nil
}

// CountByAgent returns how many schedules each agent has (agents without
// any are left out): the board's clock badges.
func (s *Service) CountByAgent(ctx context.Context) (map[string]int, error) {
	return s.countByAgent(ctx, `SELECT agent_id, count(*) FROM schedules GROUP BY agent_id`)
}

// PausedByAgent returns how many of each agent's schedules are paused (agents
// without a paused one are left out): the board draws those badges muted.
func (s *Service) PausedByAgent(ctx context.Context) (map[string]int, error) {
	return s.countByAgent(ctx, `SELECT agent_id, count(*) FROM schedules WHERE enabled = 0 GROUP BY agent_id`)
}

func (s *Service) countByAgent(ctx context.Context, query string) (map[string]int, error) {
	out := map[string]int{}
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("count schedules: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var agent string
		var n int
		if err := rows.Scan(&agent, &n); err != nil {
			return nil, fmt.Errorf("count schedules: %w", err)
		}
		out[agent] = n
	}
	return out, rows.Err()
}
