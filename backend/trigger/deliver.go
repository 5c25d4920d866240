package trigger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Outcomes of a delivery.
const (
	OutcomeAccepted = "accepted" // a run was queued
	OutcomeTest     = "test"     // a test from the app; a run was queued
	OutcomeRejected = "rejected" // refused (401, 405, 413, 429, 503)
	OutcomeFailed   = "failed"   // accepted, but no run could be queued
)

// Delivery is one call of a trigger (or one test).
type Delivery struct {
	ID          string    `json:"id"`
	TriggerID   string    `json:"trigger_id"`
	ReceivedAt  time.Time `json:"received_at"`
	Status      int       `json:"status"` // the HTTP status answered
	Outcome     string    `json:"outcome"`
	RunID       string    `json:"run_id"`
	Error       string    `json:"error"`
	Method      string    `json:"method"`
	ContentType string    `json:"content_type"`
	Size        int       `json:"size"` // body bytes
}

// pending says whether d is recorded but its run not yet known.
func (d Delivery) pending() bool {
	return d.RunID == "" && d.Error == "" && (d.Outcome == OutcomeAccepted || d.Outcome == OutcomeTest)
}

const deliveryColumns = `id, trigger_id, received_at, status, outcome, run_id, error, method, content_type, size`

func scanDelivery(row store.Scanner) (Delivery, error) {
	var d Delivery
	var received string
	err := row.Scan(&d.ID, &d.TriggerID, &received, &d.Status, &d.Outcome, &d.RunID, &d.Error, &d.Method, &d.ContentType, &d.Size)
	d.ReceivedAt = store.ParseTime(received)
	return d, err
}

func (s *Service) delivery(ctx context.Context, id string) (Delivery, error) {
	return scanDelivery(s.db.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM trigger_deliveries WHERE id = ?`, id))
}

// Deliveries returns a trigger's deliveries, newest first (limit default
// 50, at most 1000).
func (s *Service) Deliveries(ctx context.Context, triggerID string, limit int) ([]Delivery, error) {
	if _, err := s.Get(ctx, triggerID); err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = 50
	}
	list, err := store.Query(ctx, s.db, scanDelivery, `SELECT `+deliveryColumns+` FROM trigger_deliveries
		WHERE trigger_id = ? ORDER BY received_at DESC, rowid DESC LIMIT ?`, triggerID, min(limit, 1000))
	if err != nil {
		return nil, fmt.Errorf("list deliveries of trigger %q: %w", triggerID, err)
	}
	return list, nil
}

// record writes a delivery that was refused.
func (s *Service) record(ctx context.Context, t Trigger, d Delivery) {
	err := s.write(context.WithoutCancel(ctx), `INSERT INTO trigger_deliveries (id, trigger_id, received_at, status, outcome,
		method, content_type, size, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, d.ID, d.TriggerID, store.FormatTime(d.ReceivedAt),
		d.Status, d.Outcome, d.Method, d.ContentType, d.Size, d.Error)
	if err != nil {
		s.log.Error("record trigger delivery", "trigger", t.ID, "token", t.TokenPrefix, "err", err)
		return
	}
	s.publish("trigger.delivery", t)
}

// write runs one statement in a commit shared with other calls.
func (s *Service) write(ctx context.Context, query string, args ...any) error {
	return s.writes.do(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}

// errBusy: a delivery with the same key is being queued by another process.
var errBusy = errors.New("a call with this idempotency key is being handled; retry in a minute")

// statements are the intake's, prepared once: a busy trigger runs them for
// every call, and an unprepared statement is parsed on every call.
type statements struct {
	lookup, current *sql.Stmt
	insert          *store.Rows // the deliveries of a batch, one statement
	byKeys          *store.Rows // the deliveries holding a batch's keys of one trigger
}

func prepare(db *store.DB) (statements, error) {
	st := statements{
		insert: &store.Rows{DB: db, Head: `INSERT INTO trigger_deliveries (id, trigger_id, received_at, status,
			outcome, idempotency_key, method, content_type, size, run_id, error) VALUES`, Row: `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		// "!= ''" lets SQLite use the partial unique index.
		byKeys: &store.Rows{DB: db, Head: `SELECT ` + deliveryColumns + `, idempotency_key FROM trigger_deliveries
			WHERE idempotency_key != '' AND idempotency_key IN (`, Row: `?`, Tail: `) AND trigger_id = ?`},
	}
	err := db.PrepareAll(
		store.Statement{Into: &st.lookup, Query: `SELECT ` + columns + `, k.expires_at FROM trigger_tokens k
			JOIN triggers t ON t.id = k.trigger_id WHERE k.hash = ? AND (k.expires_at IS NULL OR k.expires_at > ?)`},
		store.Statement{Into: &st.current, Query: `SELECT updated_at FROM triggers WHERE id = ?`},
	)
	return st, err
}

// withKey scans a delivery's columns and then its idempotency key.
type withKey struct {
	store.Scanner
	key *string
}

func (w withKey) Scan(dest ...any) error { return w.Scanner.Scan(append(dest, w.key)...) }

// startRun queues the run of delivery d inside tx and sets its id on d;
// when the run cannot be queued (the session is gone, say), d records the
// failure instead. Any other error fails tx.
func (s *Service) startRun(ctx context.Context, tx *sql.Tx, t Trigger, d *Delivery, input string) error {
	ids, err := s.runs.StartManyTx(ctx, tx, t.AgentID, t.SessionID, from(t), []string{input})
	switch {
	case fault.Is(err):
		d.Status, d.Outcome, d.Error = 500, OutcomeFailed, "the run could not be queued: "+fault.Message(err)
	case err != nil:
		return err
	default:
		d.RunID = ids[0]
	}
	return nil
}

// from is who the chat shows as the author of a triggered run.
func from(t Trigger) string { return "webhook “" + t.Name + "”" }

// errStale: the trigger changed between a call's lookup and its commit.
var errStale = errors.New("the trigger changed while the call was handled")

// acceptance is a call on its way into a shared commit (acceptAll).
type acceptance struct {
	t     Trigger
	d     Delivery // to record
	key   string   // idempotency key, "" for none
	input string   // the run's

	// What acceptAll found; it sets them afresh each time it runs.
	out      Delivery // d, with its run id or error
	existing Delivery // the first delivery of key, when dup
	dup      bool
	stale    bool // t changed since it was looked up: nothing was written
}

// accept records a delivery and queues its run in one transaction, shared
// with the calls that arrive meanwhile (one commit for all of them): d is
// returned with its run id (or error), duplicate true when key was seen
// within the window and d is that first delivery. The 202 may be sent once
// it returns without error: the run is durably queued. errStale means t
// is no longer what the database holds, and nothing was written.
func (s *Service) accept(ctx context.Context, t Trigger, d Delivery, key string, c call) (Delivery, bool, error) {
	// Queuing is not abandoned when the caller hangs up: the delivery and
	// its run land together, or neither does.
	ctx = context.WithoutCancel(ctx)
	a := &acceptance{t: t, d: d, key: key, input: runInput(t, d.ID, c)}
	if err := s.writes.doCall(ctx, a); err != nil {
		return d, false, fmt.Errorf("record delivery of trigger %s: %w", t.ID, err)
	}
	switch {
	case a.stale:
		return d, false, errStale
	case a.dup:
		d, err := s.await(ctx, t, a.existing, c)
		return d, true, err
	}
	s.publish("trigger.delivery", t)
	if a.out.Error != "" {
		s.log.Warn("queue triggered run", "trigger", t.ID, "token", t.TokenPrefix, "delivery", a.out.ID, "err", a.out.Error)
		return a.out, false, errors.New(a.out.Error)
	}
	s.runs.Started(t.AgentID, t.SessionID, a.out.RunID)
	return a.out, false, nil
}

// acceptAll writes the calls of one commit inside tx: each trigger is
// checked once against its row, each key against the deliveries (and the
// batch's earlier calls), then the runs of each trigger are queued and
// the deliveries recorded, a statement for each rather than for each call.
func (s *Service) acceptAll(ctx context.Context, tx *sql.Tx, calls []*acceptance) error {
	st, err := s.stmts()
	if err != nil {
		return err
	}
	current := map[string]bool{} // trigger id and updated_at → still as looked up
	type keyed struct{ trigger, key string }
	first := map[keyed]*acceptance{} // the batch's first call of a key
	later := map[*acceptance]*acceptance{}
	keys := map[string][][]any{} // trigger id → the keys of its first calls
	for _, a := range calls {
		a.out, a.existing, a.dup, a.stale = a.d, Delivery{}, false, false
		looked := a.t.ID + " " + store.FormatTime(a.t.UpdatedAt)
		ok, seen := current[looked]
		if !seen {
			var updated string
			err := tx.StmtContext(ctx, st.current).QueryRowContext(ctx, a.t.ID).Scan(&updated)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			ok = err == nil && a.t.ID+" "+updated == looked
			current[looked] = ok
		}
		if a.stale = !ok; a.stale || a.key == "" {
			continue
		}
		k := keyed{a.t.ID, a.key}
		if f := first[k]; f != nil {
			later[a] = f
			continue
		}
		first[k] = a
		keys[a.t.ID] = append(keys[a.t.ID], []any{a.key})
	}
	// The deliveries that already hold the keys: one statement for a
	// trigger's keys rather than one a call.
	held := map[keyed]Delivery{}
	for id, list := range keys {
		err := st.byKeys.Each(ctx, tx, list, []any{id}, func(row store.Scanner) error {
			var key string
			d, err := scanDelivery(withKey{row, &key})
			held[keyed{id, key}] = d
			return err
		})
		if err != nil {
			return err
		}
	}
	var fresh []*acceptance // the calls that queue a run, in the order they came
	for _, a := range calls {
		if a.stale || later[a] != nil {
			continue
		}
		if e, ok := held[keyed{a.t.ID, a.key}]; ok && a.key != "" {
			if e.Error == "" && a.d.ReceivedAt.Sub(e.ReceivedAt) < s.cfg.IdempotencyWindow {
				a.existing, a.dup = e, true
				continue
			}
			// A failed one, or one older than the window, gives up its key.
			if _, err := tx.ExecContext(ctx, `UPDATE trigger_deliveries SET idempotency_key = '' WHERE id = ?`, e.ID); err != nil {
				return err
			}
		}
		fresh = append(fresh, a)
	}
	// The runs of each trigger's calls, in the order they came.
	for i := 0; i < len(fresh); {
		t := fresh[i].t
		j := i + 1
		for j < len(fresh) && fresh[j].t.ID == t.ID {
			j++
		}
		same := fresh[i:j]
		inputs := make([]string, len(same))
		for k, a := range same {
			inputs[k] = a.input
		}
		ids, err := s.runs.StartManyTx(ctx, tx, t.AgentID, t.SessionID, from(t), inputs)
		switch {
		case fault.Is(err) && len(same) > 1:
			// One of them is refused: tell which, one by one.
			for _, a := range same {
				if err := s.startRun(ctx, tx, a.t, &a.out, a.input); err != nil {
					return err
				}
			}
		case fault.Is(err):
			a := same[0]
			a.out.Status, a.out.Outcome, a.out.Error = 500, OutcomeFailed, "the run could not be queued: "+fault.Message(err)
		case err != nil:
			return err
		default:
			for k, a := range same {
				a.out.RunID = ids[k]
			}
		}
		i = j
	}
	rows := make([][]any, 0, len(fresh))
	for _, a := range fresh {
		d := a.out
		rows = append(rows, []any{d.ID, a.t.ID, store.FormatTime(d.ReceivedAt), d.Status, d.Outcome, a.key, d.Method,
			d.ContentType, d.Size, d.RunID, d.Error})
	}
	// A key repeated within the batch is a duplicate of its first call;
	// when that one's run could not be queued, neither can this one's.
	for a, f := range later {
		switch {
		case f.dup:
			a.existing, a.dup = f.existing, true
		case f.out.Error == "":
			a.existing, a.dup = f.out, true
		default:
			a.out.Status, a.out.Outcome, a.out.Error = f.out.Status, f.out.Outcome, f.out.Error
		}
	}
	return st.insert.Insert(ctx, tx, rows)
}

// queue finishes a delivery recorded without its run: one left by a
// process that queued runs apart from their delivery and stopped in
// between. find first looks for the run it may have queued; c nil starts
// none (there is no payload to start it with) and leaves d pending. The
// error is why no run was queued (recorded on the delivery too).
func (s *Service) queue(ctx context.Context, t Trigger, d Delivery, c *call, find bool) (Delivery, error) {
	var found string
	if find {
		// A failed look is no verdict: the delivery stays pending.
		var err error
		if found, err = s.runs.Find(ctx, t.SessionID, d.ID); err != nil {
			return d, fmt.Errorf("look for the run of delivery %s: %w", d.ID, err)
		}
	}
	if found == "" && c == nil {
		return d, nil // still pending: the caller decides
	}
	var input string
	if c != nil {
		input = runInput(t, d.ID, *c)
	}
	out, queued := d, false
	err := s.writes.do(ctx, func(tx *sql.Tx) error {
		out, queued = d, false
		if out.RunID = found; found == "" {
			if err := s.startRun(ctx, tx, t, &out, input); err != nil {
				return err
			}
			queued = out.RunID != ""
		}
		_, err := tx.ExecContext(ctx, `UPDATE trigger_deliveries SET run_id = ?, status = ?, outcome = ?, error = ? WHERE id = ?`,
			out.RunID, out.Status, out.Outcome, out.Error, out.ID)
		return err
	})
	if err != nil {
		return d, fmt.Errorf("queue the run of delivery %s: %w", d.ID, err)
	}
	if queued {
		s.runs.Started(t.AgentID, t.SessionID, out.RunID)
	}
	s.publish("trigger.delivery", t)
	if out.Error != "" {
		s.log.Warn("queue triggered run", "trigger", t.ID, "token", t.TokenPrefix, "delivery", d.ID, "err", out.Error)
		return out, errors.New(out.Error)
	}
	return out, nil
}

// await returns the first delivery of a repeated key. It is settled (run id
// or error) unless a process left it half done: then at once when this
// process is settling it, errBusy while it is young (that process may be at
// it), else it is finished here with this call, a retry of the same event.
func (s *Service) await(ctx context.Context, t Trigger, d Delivery, c call) (Delivery, error) {
	for range 3 {
		if !d.pending() {
			return d, nil
		}
		if ch := s.busy(d.ID); ch != nil {
			<-ch
		} else if s.now().Sub(d.ReceivedAt) < s.cfg.ClaimTimeout {
			return Delivery{}, errBusy
		} else if done := s.begin(d.ID); done != nil {
			defer s.end(d.ID, done)
			d, err := s.delivery(ctx, d.ID)
			if err != nil || !d.pending() {
				return d, err
			}
			return s.queue(ctx, t, d, &c, true)
		}
		var err error
		if d, err = s.delivery(ctx, d.ID); err != nil {
			return Delivery{}, err
		}
	}
	return Delivery{}, errBusy
}

// begin marks delivery id in flight in this process; nil when it already is.
func (s *Service) begin(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.inflight[id]; ok {
		return nil
	}
	ch := make(chan struct{})
	s.inflight[id] = ch
	return ch
}

func (s *Service) end(id string, ch chan struct{}) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
	close(ch)
}

func (s *Service) busy(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight[id]
}

// Test calls a trigger from the app with a sample payload (POST, the given
// content type, "" meaning application/json): no signature, rate limit or
// idempotency; recorded as a test delivery. It works on a paused trigger.
func (s *Service) Test(ctx context.Context, id, payload, contentType string) (Delivery, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return Delivery{}, err
	}
	if int64(len(payload)) > s.cfg.MaxBody {
		return Delivery{}, fault.Invalid("the sample payload is %d KiB; keep it under %d KiB", len(payload)>>10, s.cfg.MaxBody>>10)
	}
	if contentType == "" {
		contentType = "application/json"
	}
	now := s.now()
	d := Delivery{ID: store.NewSortedID("dlv"), TriggerID: t.ID, ReceivedAt: now, Status: 202, Outcome: OutcomeTest,
		Method: "POST", ContentType: contentType, Size: len(payload)}
	c := call{method: "POST", contentType: contentType, body: []byte(payload), receivedAt: now, test: true}
	d, _, err = s.accept(ctx, t, d, "", c)
	if err != nil {
		return d, fmt.Errorf("test trigger %q: %w", id, err)
	}
	return d, nil
}

// Serve settles, at start and every ClaimTimeout, deliveries left without
// a run id (see queue; linking the run if it was queued, else marking them
// failed: their caller never got a 202 and retries), and once an hour
// prunes deliveries older than Retention and expired tokens. It returns nil
// when ctx ends.
func (s *Service) Serve(ctx context.Context) error {
	tick := time.NewTicker(s.cfg.ClaimTimeout)
	defer tick.Stop()
	var pruned time.Time
	for {
		now := s.now()
		if err := s.settle(ctx, now); err != nil && ctx.Err() == nil {
			s.log.Error("settle trigger deliveries", "err", err)
		}
		if now.Sub(pruned) > time.Hour {
			pruned = now
			if err := s.prune(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Error("prune trigger deliveries", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// settle finishes the pending deliveries older than ClaimTimeout that no
// one in this process is queuing.
func (s *Service) settle(ctx context.Context, now time.Time) error {
	list, err := store.Query(ctx, s.db, scanDelivery, `SELECT `+deliveryColumns+` FROM trigger_deliveries
		WHERE run_id = '' AND outcome IN ('accepted', 'test') AND error = '' AND received_at < ? ORDER BY received_at LIMIT 500`,
		store.FormatTime(now.Add(-s.cfg.ClaimTimeout)))
	if err != nil {
		return fmt.Errorf("find unsettled deliveries: %w", err)
	}
	for _, d := range list {
		done := s.begin(d.ID)
		if done == nil {
			continue
		}
		t, err := s.Get(ctx, d.TriggerID)
		if err == nil {
			d, err = s.queue(ctx, t, d, nil, true)
		}
		if err == nil && d.pending() {
			// No run was queued, so no 202 was sent: the caller retries,
			// and a retry with the same key is taken as new.
			_, err = s.db.ExecContext(ctx, `UPDATE trigger_deliveries SET status = 500, outcome = 'failed', error = ? WHERE id = ?`,
				"interrupted by a restart before its run was queued; the caller got no 202 and may send it again", d.ID)
		}
		s.end(d.ID, done)
		if err != nil && !errors.Is(err, fault.ErrNotFound) {
			return fmt.Errorf("settle delivery %s: %w", d.ID, err)
		}
	}
	return nil
}

// prune drops old deliveries (keeping pending ones) and expired tokens.
func (s *Service) prune(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM trigger_deliveries WHERE received_at < ? AND NOT (run_id = '' AND error = ''
		AND outcome IN ('accepted', 'test'))`, store.FormatTime(now.Add(-s.cfg.Retention))); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, `DELETE FROM trigger_tokens WHERE expires_at IS NOT NULL AND expires_at <= ?`, store.FormatTime(now))
	return err
}
