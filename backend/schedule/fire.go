package schedule

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Outcomes of a fire time.
const (
	OutcomeFired  = "fired"  // a run was started for it
	OutcomeMissed = "missed" // it passed while the app could not run it
	OutcomeManual = "manual" // "run now"
)

// Fire is one row of a schedule's history.
type Fire struct {
	ID           string    `json:"id"`
	ScheduleID   string    `json:"schedule_id"`
	ScheduledFor time.Time `json:"scheduled_for"`
	FiredAt      time.Time `json:"fired_at"`
	Outcome      string    `json:"outcome"`
	RunID        string    `json:"run_id"` // "" for missed, or while being queued
	Note         string    `json:"note"`   // why it was late or missed
	Error        string    `json:"error"`  // why no run could be queued
}

const (
	// maxMissedRows bounds the rows one catch-up writes; older missed times
	// are only counted, in the note of the oldest row.
	maxMissedRows = 100
	// maxScan bounds the passed fire times counted one by one (a minutely
	// schedule after a year off); past it the count is a lower bound.
	maxScan = 1_000_000
	// batch is how many due schedules one claiming transaction takes:
	// fires due together share commits (and the pages they touch), and a
	// full batch holds the write lock for about a tenth of a second.
	batch = 1000
)

// Serve fires due schedules until ctx ends. It wakes at the earliest
// next_fire_at, after at most Config.MaxSleep, or on Wake, and each time
// reads the wall clock afresh, so a laptop waking from sleep catches up
// within MaxSleep. Several Serve loops on one database (or a restart at the
// fire instant) never fire a time twice. It returns nil when ctx ends.
func (s *Service) Serve(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-s.wake:
		}
		more, err := s.FireDue(ctx)
		if err != nil && ctx.Err() == nil {
			s.log.Error("fire schedules", "err", err)
		}
		if now := s.now(); now.Sub(pruned) > time.Hour {
			pruned = now
			if err := s.prune(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Error("prune schedule history", "err", err)
			}
		}
		wait := s.cfg.MaxSleep
		switch {
		case more:
			wait = 0
		case err != nil:
			// The database is unwell: retry soon, not in a tight loop.
			wait = min(wait, time.Second)
		default:
			wait = s.untilNext(ctx)
		}
		timer.Reset(wait)
	}
}

// untilNext is how long the loop may sleep: until the earliest fire time,
// at most MaxSleep.
func (s *Service) untilNext(ctx context.Context) time.Duration {
	var next sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT min(next_fire_at) FROM schedules WHERE next_fire_at IS NOT NULL`).Scan(&next); err != nil || !next.Valid {
		return s.cfg.MaxSleep
	}
	return max(0, min(store.ParseTime(next.String).Sub(s.now()), s.cfg.MaxSleep))
}

// FireDue fires (or records as missed) every schedule whose time has come,
// one batch per transaction; more is true when due schedules remain. Serve
// calls it; tests call it to step a fake clock deterministically.
func (s *Service) FireDue(ctx context.Context) (more bool, err error) {
	now := s.now()
	// A failed settle must not hold up the fires that are due.
	if err := s.settlePending(ctx, now); err != nil && ctx.Err() == nil {
		s.log.Error("settle interrupted fires", "err", err)
	}
	if s.active != nil && !s.active() {
		return false, nil // another device of the workspace fires them
	}
	claims, n, err := s.claim(ctx, now)
	if err != nil {
		return false, err
	}
	s.started(claims)
	return n == batch, nil
}

// plan is what one pass does about a schedule whose time has come.
type plan struct {
	fire     time.Time   // the time to run for; zero: none
	late     bool        // fire is a catch-up, past the grace
	missed   []time.Time // recorded as missed, oldest first
	unlisted int         // older missed times without a row of their own
	atLeast  bool        // unlisted is a lower bound (maxScan was reached)
	note     string      // why they were missed
	next     time.Time   // the new next fire time; zero: the schedule is done
}

// planFires walks the fire times from first up to now and applies the
// catch-up rule: the latest one runs if it is on time (within the grace) or
// the rule is CatchUpOnce and it is within the window; all others are missed.
func planFires(tm timing, first, now time.Time, catchUp string, within, grace time.Duration) plan {
	var p plan
	// recent keeps the latest maxMissedRows+1 times: enough for the fire
	// and the rows of the missed ones.
	recent := make([]time.Time, 0, 8)
	count := 0
	t := first
	for !t.IsZero() && !t.After(now) {
		count++
		if len(recent) == maxMissedRows+1 {
			recent = append(recent[:0], recent[1:]...)
		}
		recent = append(recent, t)
		t = tm.next(t)
		if count == maxScan {
			// Only times inside the catch-up window matter from here on.
			if skip := tm.next(now.Add(-within - grace)); skip.After(t) {
				t, p.atLeast = skip, true
			}
		}
	}
	p.next = t
	if len(recent) == 0 {
		return p
	}
	latest := recent[len(recent)-1]
	lateBy := now.Sub(latest)
	switch {
	case lateBy <= grace:
		p.fire = latest
	case catchUp == CatchUpOnce && lateBy <= within:
		p.fire, p.late = latest, true
	}
	switch {
	case !p.fire.IsZero():
		recent = recent[:len(recent)-1]
		p.note = "missed: when catching up only the latest missed time runs"
	case catchUp == CatchUpSkip:
		p.note = "missed: the computer was asleep or the app was closed, and catch-up is off"
	default:
		p.note = fmt.Sprintf("missed: more than %s had passed when the app could run it", shortDuration(within))
	}
	if len(recent) > maxMissedRows {
		recent = recent[1:]
	}
	p.missed = recent
	p.unlisted = count - len(recent)
	if !p.fire.IsZero() {
		p.unlisted--
	}
	return p
}

// claimed is a fire that was claimed, with the run queued for it.
type claimed struct {
	fire Fire
	sch  Schedule
	err  error // why the run could not be queued
}

// statements are the claim's, prepared once. Besides its runs, a batch of
// due schedules takes the same few statements whatever its size: the
// firing keys of the batch go in as one JSON array (json_each), its fire
// rows and next fire times as multi-row statements, so a burst of 10,000
// fires does not run tens of thousands of small statements of its own,
// each with its statement journal.
type statements struct {
	due, taken  *sql.Stmt
	fires, next *store.Rows
}

func prepare(db *store.DB) (statements, error) {
	st := statements{
		// Rows are [id, schedule id, scheduled for, fired at, outcome, note, run id, error].
		fires: &store.Rows{DB: db, Max: batch, Head: `INSERT OR IGNORE INTO schedule_fires (id, schedule_id, scheduled_for, fired_at,
			outcome, note, run_id, error) VALUES`, Row: `(?, ?, ?, ?, ?, ?, ?, ?)`},
		// Rows are [id, next fire, enabled, last fired, the next fire read,
		// updated at]. The compare on next_fire_at is belt and braces: the
		// transaction holds the write lock.
		next: &store.Rows{DB: db, Max: batch, Head: `UPDATE schedules SET next_fire_at = n.column2, enabled = n.column3,
			last_fired_at = n.column4, updated_at = n.column6 FROM (VALUES`, Row: `(?, ?, ?, ?, ?, ?)`,
			Tail: `) AS n WHERE schedules.id = n.column1 AND schedules.next_fire_at = n.column5`},
	}
	err := db.PrepareAll(
		// Those due together in the order they were made (rowid), which
		// their ids and their sessions' share: a batch's writes then land
		// side by side in each index (store.NewSortedID).
		store.Statement{Into: &st.due, Query: `SELECT ` + columns + ` FROM schedules WHERE next_fire_at <= ? ORDER BY next_fire_at, rowid LIMIT ?`},
		// The firing key (its index): which of these [schedule id, time]
		// pairs were claimed before?
		store.Statement{Into: &st.taken, Query: `SELECT f.schedule_id, f.scheduled_for FROM json_each(?) AS k
			JOIN schedule_fires AS f ON f.schedule_id = k.value->>0 AND f.scheduled_for = k.value->>1 AND f.outcome != 'manual'`},
	)
	return st, err
}

// claim takes up to batch due schedules and records, in one transaction,
// what happens to each: its fire and missed rows, the run of the fire, its
// next fire time (one-offs switch off). The firing key makes a time already
// claimed by another loop a no-op; a fire and its run commit together or
// not at all. n is how many due schedules it took.
func (s *Service) claim(ctx context.Context, now time.Time) (out []claimed, n int, err error) {
	st, err := s.stmts()
	if err != nil {
		return nil, 0, err
	}
	var changed []Schedule
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		out, changed = out[:0], changed[:0]
		// Read inside the write transaction: another loop may have just
		// fired them.
		rows, err := tx.StmtContext(ctx, st.due).QueryContext(ctx, store.FormatTime(now), batch)
		if err != nil {
			return err
		}
		due, err := scanAll(rows)
		if err != nil {
			return err
		}
		n = len(due)
		if n == 0 {
			return nil
		}
		if n >= bigBatch {
			restore, err := growCache(ctx, tx)
			if err != nil {
				return err
			}
			defer restore()
		}
		out, changed, err = s.claimAll(ctx, tx, st, due, now)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("claim due schedules: %w", err)
	}
	for _, sch := range changed {
		s.publish("schedule.updated", sch)
	}
	return out, n, nil
}

// bigBatch is the size of batch from which a claim grows the page cache of
// its connection.
const bigBatch = 100

// growCache raises the page cache of tx's connection from SQLite's default
// (2 MB) for a big batch: its runs, steps and fires land at random places
// in their tables' indexes, and with the default cache the transaction
// reads again pages it evicted and writes dirty pages to the WAL before
// its commit as well as at it (with 64 MB the burst of BenchmarkServe10k
// took 2.8 s instead of 5.2 s, on a loaded machine). restore puts the
// size back (no write needs a page after it), which frees the extra pages
// once the commit has written them.
func growCache(ctx context.Context, tx *sql.Tx) (restore func(), err error) {
	var size int64
	if err := tx.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&size); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `PRAGMA cache_size = -65536`); err != nil {
		return nil, err
	}
	return func() { tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA cache_size = %d`, size)) }, nil
}

func scanAll(rows *sql.Rows) ([]Schedule, error) {
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		sch, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, sch)
	}
	return out, rows.Err()
}

// claimAll plans each due schedule, checks the firing keys of the batch
// in one query, queues the runs of the fires, and writes the fire rows and
// the next fire times of the batch in a statement each.
func (s *Service) claimAll(ctx context.Context, tx *sql.Tx, st statements, due []Schedule, now time.Time) (out []claimed, changed []Schedule, err error) {
	ts := store.FormatTime(now)
	type planned struct {
		sch Schedule
		loc *time.Location
		p   plan
	}
	var plans []planned
	var keys [][2]string
	for _, sch := range due {
		_, tm, err := sch.Spec.parse()
		if err != nil {
			// Stored before a rule changed (or the zone left the tz
			// database): stop it, say why, and keep the loop going for
			// the others.
			s.log.Warn("schedule cannot fire; pausing it", "schedule", sch.ID, "err", err)
			if _, err := tx.ExecContext(ctx, `UPDATE schedules SET enabled = 0, next_fire_at = NULL, updated_at = ? WHERE id = ?`, ts, sch.ID); err != nil {
				return nil, nil, fmt.Errorf("schedule %s: %w", sch.ID, err)
			}
			changed = append(changed, sch)
			continue
		}
		p := planFires(tm, *sch.NextFireAt, now, sch.CatchUp, time.Duration(sch.CatchUpWithin), s.cfg.Grace)
		plans = append(plans, planned{sch, tm.loc, p})
		if !p.fire.IsZero() {
			keys = append(keys, [2]string{sch.ID, store.FormatTime(p.fire)})
		}
	}
	// Claimed before (a restored backup, or a clock set back): the key
	// says it must not run again.
	taken, err := takenKeys(ctx, tx, st, keys)
	if err != nil {
		return nil, nil, err
	}
	var fires, next [][]any
	for _, x := range plans {
		sch, p := x.sch, x.p
		for i, t := range p.missed {
			note := p.note
			if i == 0 && p.unlisted > 0 {
				more := ""
				if p.atLeast {
					more = "at least "
				}
				note += fmt.Sprintf(" (and %s%d earlier missed times not listed)", more, p.unlisted)
			}
			fires = append(fires, []any{store.NewSortedID("fire"), sch.ID, store.FormatTime(t), ts, OutcomeMissed, note, "", ""})
		}
		lastFired := sch.LastFiredAt
		if at := store.FormatTime(p.fire); !p.fire.IsZero() && !taken[[2]string{sch.ID, at}] {
			f := Fire{ID: store.NewSortedID("fire"), ScheduleID: sch.ID, ScheduledFor: p.fire.In(x.loc), FiredAt: now, Outcome: OutcomeFired}
			if p.late {
				f.Note = fmt.Sprintf("started %s late: the computer was asleep or the app was closed", shortDuration(now.Sub(p.fire)))
			}
			out = append(out, claimed{fire: f, sch: sch})
			lastFired = &now
		}
		enabled := 0
		if sch.Enabled && !p.next.IsZero() {
			enabled = 1
		}
		next = append(next, []any{sch.ID, nullTime(&p.next), enabled, nullTime(lastFired), store.FormatTime(*sch.NextFireAt), ts})
		changed = append(changed, sch)
	}
	// The runs of the batch's fires, queued together.
	if err := s.queue(ctx, tx, out); err != nil {
		return nil, nil, err
	}
	for _, c := range out {
		fires = append(fires, []any{c.fire.ID, c.sch.ID, store.FormatTime(c.fire.ScheduledFor), ts, OutcomeFired, c.fire.Note, c.fire.RunID, c.fire.Error})
	}
	if err := st.fires.Exec(ctx, tx, fires); err != nil {
		return nil, nil, fmt.Errorf("record fires: %w", err)
	}
	if err := st.next.Exec(ctx, tx, next); err != nil {
		return nil, nil, fmt.Errorf("move next fire times: %w", err)
	}
	return out, changed, nil
}

// takenKeys returns which of the [schedule id, time] keys were claimed
// before.
func takenKeys(ctx context.Context, tx *sql.Tx, st statements, keys [][2]string) (map[[2]string]bool, error) {
	taken := map[[2]string]bool{}
	if len(keys) == 0 {
		return taken, nil
	}
	b, _ := json.Marshal(keys)
	rows, err := tx.StmtContext(ctx, st.taken).QueryContext(ctx, string(b))
	if err != nil {
		return nil, fmt.Errorf("check firing keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k [2]string
		if err := rows.Scan(&k[0], &k[1]); err != nil {
			return nil, err
		}
		taken[k] = true
	}
	return taken, rows.Err()
}

// queue queues the runs of claimed fires cs inside tx, together, and sets
// each one's id on its fire; a run that cannot be queued (its session is
// gone, say) gets why instead. The caller writes the fires in tx. Any other
// error fails tx.
func (s *Service) queue(ctx context.Context, tx *sql.Tx, cs []claimed) error {
	if len(cs) == 0 {
		return nil
	}
	starts := make([]Start, len(cs))
	for i, c := range cs {
		starts[i] = Start{AgentID: c.sch.AgentID, SessionID: c.sch.SessionID, From: fromLabel(c.sch), Input: runInput(c.sch, c.fire)}
	}
	ids, errs, err := s.runs.StartEachTx(ctx, tx, starts)
	if err != nil {
		return fmt.Errorf("queue the runs of %d fires: %w", len(cs), err)
	}
	for i := range cs {
		c := &cs[i]
		switch err := errs[i]; {
		case fault.Is(err):
			c.err = err
			c.fire.Error = "the run could not be queued: " + fault.Message(err)
			s.log.Warn("queue scheduled run", "schedule", c.sch.ID, "fire", c.fire.ID, "err", err)
		case err != nil:
			return fmt.Errorf("queue the run of fire %s: %w", c.fire.ID, err)
		default:
			c.fire.RunID = ids[i]
		}
	}
	return nil
}

// started hands the runs of fires whose transaction committed to the
// workers, and tells the UI about the fires.
func (s *Service) started(claims []claimed) {
	for _, c := range claims {
		if c.fire.RunID != "" {
			s.runs.Started(c.sch.AgentID, c.sch.SessionID, c.fire.RunID)
			s.log.Info("schedule fired", "schedule", c.sch.ID, "scheduled_for", c.fire.ScheduledFor, "run", c.fire.RunID, "outcome", c.fire.Outcome)
		}
		s.publish("schedule.fired", c.sch)
	}
}

// settlePending finishes fires claimed longer than ClaimTimeout ago that
// never got a run id. This version queues a fire's run in the claim's own
// transaction, so it leaves none behind; the rows come from a process that
// queued runs separately and stopped in between. If the run was queued
// (its input carries the fire id) it is linked; else it is queued now,
// unless the fire is older than the schedule's catch-up window.
// Younger ones belong to a loop that may still be at work.
func (s *Service) settlePending(ctx context.Context, now time.Time) error {
	fires, err := store.Query(ctx, s.db, func(sc store.Scanner) (Fire, error) {
		var f Fire
		var sf, fa string
		err := sc.Scan(&f.ID, &f.ScheduleID, &sf, &fa, &f.Outcome)
		f.ScheduledFor, f.FiredAt = store.ParseTime(sf), store.ParseTime(fa)
		return f, err
	}, `SELECT id, schedule_id, scheduled_for, fired_at, outcome FROM schedule_fires
		WHERE run_id = '' AND outcome != 'missed' AND error = '' AND fired_at < ? ORDER BY fired_at LIMIT 100`,
		store.FormatTime(now.Add(-s.cfg.ClaimTimeout)))
	if err != nil {
		return fmt.Errorf("find unsettled fires: %w", err)
	}
	for _, f := range fires {
		sch, err := s.Get(ctx, f.ScheduleID)
		if err != nil {
			continue // deleted meanwhile: its fires went with it
		}
		c := claimed{fire: f, sch: sch}
		if c.fire.RunID, err = s.runs.Find(ctx, sch.SessionID, f.ID); err != nil {
			return fmt.Errorf("look for the run of fire %s: %w", f.ID, err)
		}
		if c.fire.RunID == "" && f.Outcome == OutcomeFired && now.Sub(f.ScheduledFor) > time.Duration(sch.CatchUpWithin) {
			c.fire.Error = "not run: the app stopped before queuing it, and it is now older than the catch-up window"
		}
		queued := false
		err = s.db.Tx(ctx, func(tx *sql.Tx) error {
			c.err, queued = nil, false
			// Under the write lock: another loop may have settled it.
			var runID, ferr string
			if err := tx.QueryRowContext(ctx, `SELECT run_id, error FROM schedule_fires WHERE id = ?`, f.ID).Scan(&runID, &ferr); err != nil {
				if errors.Is(err, sql.ErrNoRows) {
					return nil
				}
				return err
			}
			if runID != "" || ferr != "" {
				return nil
			}
			if c.fire.RunID == "" && c.fire.Error == "" {
				s.log.Info("queue the run of a fire interrupted by a restart", "schedule", sch.ID, "fire", f.ID)
				queued = true
				one := []claimed{c}
				if err := s.queue(ctx, tx, one); err != nil {
					return err
				}
				c = one[0]
			}
			_, err := tx.ExecContext(ctx, `UPDATE schedule_fires SET run_id = ?, error = ? WHERE id = ?`, c.fire.RunID, c.fire.Error, f.ID)
			return err
		})
		if err != nil {
			return fmt.Errorf("settle fire %s: %w", f.ID, err)
		}
		if queued {
			s.started([]claimed{c})
		} else {
			s.publish("schedule.fired", sch)
		}
	}
	return nil
}

// RunNow fires a schedule at once, in its session, recorded as manual. It
// works on a paused schedule too and leaves its next fire time alone.
func (s *Service) RunNow(ctx context.Context, id string) (Fire, error) {
	sch, err := s.Get(ctx, id)
	if err != nil {
		return Fire{}, err
	}
	now := s.now()
	f := Fire{ID: store.NewSortedID("fire"), ScheduleID: id, ScheduledFor: now, FiredAt: now, Outcome: OutcomeManual}
	ts := store.FormatTime(now)
	var c claimed
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		one := []claimed{{fire: f, sch: sch}}
		if err := s.queue(ctx, tx, one); err != nil {
			return err
		}
		c = one[0]
		if _, err := tx.ExecContext(ctx, `INSERT INTO schedule_fires (id, schedule_id, scheduled_for, fired_at, outcome, run_id, error)
			VALUES (?, ?, ?, ?, 'manual', ?, ?)`, f.ID, id, ts, ts, c.fire.RunID, c.fire.Error); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE schedules SET last_fired_at = ? WHERE id = ?`, ts, id)
		return err
	})
	if err != nil {
		return Fire{}, fmt.Errorf("run schedule %q now: %w", id, err)
	}
	s.started([]claimed{c})
	if c.err != nil {
		return c.fire, fmt.Errorf("run schedule %q now: %w", id, c.err)
	}
	return c.fire, nil
}

// History returns a schedule's fires, missed and manual ones included,
// newest first (limit default 50, at most 1000).
func (s *Service) History(ctx context.Context, id string, limit int) ([]Fire, error) {
	sch, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	loc, _ := loadZone(sch.Timezone)
	if loc == nil {
		loc = time.UTC
	}
	fires, err := store.Query(ctx, s.db, func(sc store.Scanner) (Fire, error) {
		var f Fire
		var sf, fa string
		err := sc.Scan(&f.ID, &f.ScheduleID, &sf, &fa, &f.Outcome, &f.RunID, &f.Note, &f.Error)
		f.ScheduledFor, f.FiredAt = store.ParseTime(sf).In(loc), store.ParseTime(fa).In(loc)
		return f, err
	}, `SELECT id, schedule_id, scheduled_for, fired_at, outcome, run_id, note, error FROM schedule_fires
		WHERE schedule_id = ? ORDER BY scheduled_for DESC, rowid DESC LIMIT ?`, id, min(limit, 1000))
	if err != nil {
		return nil, fmt.Errorf("read history of schedule %q: %w", id, err)
	}
	return fires, nil
}

// prune drops history older than HistoryRetention. The firing key does not
// need old rows: next_fire_at only moves forward.
func (s *Service) prune(ctx context.Context, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM schedule_fires WHERE fired_at < ? AND (run_id != '' OR outcome = 'missed' OR error != '')`,
		store.FormatTime(now.Add(-s.cfg.HistoryRetention)))
	return err
}

// fromLabel is who the chat shows as the author of a scheduled run.
func fromLabel(sch Schedule) string { return "schedule “" + sch.Name + "”" }

// runInput is the message a fire starts its run with: a header saying
// which schedule started it, for which time, and the fire id (the marker
// settlePending looks for), then the instruction.
func runInput(sch Schedule, f Fire) string {
	var b strings.Builder
	when := f.ScheduledFor
	if loc, err := loadZone(sch.Timezone); err == nil {
		when = when.In(loc)
	}
	if f.Outcome == OutcomeManual {
		fmt.Fprintf(&b, "[Scheduled task “%s”, run now by hand at %s (%s) · %s]\n", sch.Name, when.Format(humanTime), sch.Timezone, f.ID)
	} else {
		fmt.Fprintf(&b, "[Scheduled task “%s”, scheduled for %s (%s) · %s]\n", sch.Name, when.Format(humanTime), sch.Timezone, f.ID)
		if f.Note != "" {
			fmt.Fprintf(&b, "[It %s.]\n", f.Note)
		}
	}
	b.WriteString("\n")
	b.WriteString(sch.Instruction)
	return b.String()
}

// humanTime is how the run's header shows a fire time.
const humanTime = "Mon 2 Jan 2006 15:04 MST"

// shortDuration renders d for people: "2 days", "3h12m", "45s".
func shortDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	case d >= time.Minute:
		return strings.TrimSuffix(d.Truncate(time.Minute).String(), "0s")
	}
	return d.Truncate(time.Second).String()
}
