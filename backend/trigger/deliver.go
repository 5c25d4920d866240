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
type statements struct{ lookup, owns, byKey, insert *sql.Stmt }

func prepare(db *store.DB) (statements, error) {
	var st statements
	err := db.PrepareAll(
		store.Statement{Into: &st.lookup, Query: `SELECT ` + columns + ` FROM trigger_tokens k JOIN triggers t ON t.id = k.trigger_id
			WHERE k.hash = ? AND (k.expires_at IS NULL OR k.expires_at > ?)`},
		store.Statement{Into: &st.owns, Query: `SELECT count(*) FROM trigger_tokens WHERE hash = ? AND (expires_at IS NULL OR expires_at > ?)`},
		// "!= ''" lets SQLite use the partial unique index.
		store.Statement{Into: &st.byKey, Query: `SELECT ` + deliveryColumns + ` FROM trigger_deliveries
			WHERE trigger_id = ? AND idempotency_key = ? AND idempotency_key != ''`},
		store.Statement{Into: &st.insert, Query: `INSERT INTO trigger_deliveries (id, trigger_id, received_at, status, outcome,
			idempotency_key, method, content_type, size, run_id, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
	)
	return st, err
}

// startRun queues the run of delivery d inside tx and sets its id on d;
// when the run cannot be queued (the session is gone, say), d records the
// failure instead. Any other error fails tx.
func (s *Service) startRun(ctx context.Context, tx *sql.Tx, t Trigger, d *Delivery, input string) error {
	runID, err := s.runs.StartTx(ctx, tx, t.AgentID, t.SessionID, from(t), input)
	switch {
	case fault.Is(err):
		d.Status, d.Outcome, d.Error = 500, OutcomeFailed, "the run could not be queued: "+fault.Message(err)
	case err != nil:
		return err
	default:
		d.RunID = runID
	}
	return nil
}

// from is who the chat shows as the author of a triggered run.
func from(t Trigger) string { return "webhook “" + t.Name + "”" }

// accept records a delivery and queues its run in one transaction, shared
// with the calls that arrive meanwhile (one commit for all of them): d is
// returned with its run id (or error), duplicate true when key was seen
// within the window and d is that first delivery. The 202 may be sent once
// it returns without error: the run is durably queued.
func (s *Service) accept(ctx context.Context, t Trigger, d Delivery, key string, c call) (Delivery, bool, error) {
	// Queuing is not abandoned when the caller hangs up: the delivery and
	// its run land together, or neither does.
	ctx = context.WithoutCancel(ctx)
	st, err := s.stmts()
	if err != nil {
		return d, false, err
	}
	input := runInput(t, d.ID, c)
	var out, existing Delivery
	dup := false
	err = s.writes.do(ctx, func(tx *sql.Tx) error {
		out, existing, dup = d, Delivery{}, false
		if key != "" {
			e, err := scanDelivery(tx.StmtContext(ctx, st.byKey).QueryRowContext(ctx, t.ID, key))
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return err
			case e.Error == "" && d.ReceivedAt.Sub(e.ReceivedAt) < s.cfg.IdempotencyWindow:
				existing, dup = e, true
				return nil
			default:
				// A failed one, or one older than the window, gives up its
				// key.
				if _, err := tx.ExecContext(ctx, `UPDATE trigger_deliveries SET idempotency_key = '' WHERE id = ?`, e.ID); err != nil {
					return err
				}
			}
		}
		if err := s.startRun(ctx, tx, t, &out, input); err != nil {
			return err
		}
		_, err := tx.StmtContext(ctx, st.insert).ExecContext(ctx, out.ID, t.ID, store.FormatTime(out.ReceivedAt), out.Status,
			out.Outcome, key, out.Method, out.ContentType, out.Size, out.RunID, out.Error)
		return err
	})
	if err != nil {
		return d, false, fmt.Errorf("record delivery of trigger %s: %w", t.ID, err)
	}
	if dup {
		d, err := s.await(ctx, t, existing, c)
		return d, true, err
	}
	s.publish("trigger.delivery", t)
	if out.Error != "" {
		s.log.Warn("queue triggered run", "trigger", t.ID, "token", t.TokenPrefix, "delivery", out.ID, "err", out.Error)
		return out, false, errors.New(out.Error)
	}
	s.runs.Started(t.AgentID, t.SessionID, out.RunID)
	return out, false, nil
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
	d := Delivery{ID: store.NewID("dlv"), TriggerID: t.ID, ReceivedAt: now, Status: 202, Outcome: OutcomeTest,
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
