// Package outbox owns what a notification sends beyond the window: mail
// through the workspace's SMTP server (Settings → Notifications → Email) and
// POSTs to its outgoing notification hooks (Slack, Discord, ntfy, or JSON
// signed the Standard Webhooks way), and a push to the workspace's paired
// phones through its relay (a [Phones], set with SetPhones).
//
// A notification's deliveries are queued in its own transaction (the
// outbox table), already rendered and masked, and sent by one sender per
// workspace, retried with backoff. Each row's id, the send id, is recorded
// before anything is sent and becomes the mail's Message-ID and the hook's
// webhook-id: a send interrupted by a crash is retried after the restart as
// the same message, which the receiver can tell from a new one; a row
// recorded as sent is never sent again.
package outbox

import (
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Channels of an outbox row.
const (
	ChannelEmail = "email"
	ChannelHook  = "hook"
	ChannelPhone = "phone" // one row per notification: the relay fans it out to every paired phone
)

// Phones is what pushes a notification to the workspace's paired phones
// (package relaylink, through the relay).
type Phones interface {
	// PhonesPaired says whether any phone is paired (as last heard from
	// the relay); Plan queues no phone row without one.
	PhonesPaired() bool
	// PushPhones seals m for the phones and pushes it; sendID and the
	// notification id are the same on a retry.
	PushPhones(ctx context.Context, sendID string, m Message) error
}

// Statuses of an outbox row.
const (
	Pending = "pending" // waits for its turn (next_at)
	Sending = "sending" // claimed: an attempt started (and may have been cut by a crash)
	Sent    = "sent"
	Failed  = "failed" // given up after the last attempt, or nowhere to send
)

// Vars is the workspace's variables: references resolve at send time and
// every text is masked when queued.
type Vars interface {
	Resolve(text string) (string, error)
	Redact(s string) string
	Has(name string) bool
}

// Deps is what the outbox works with.
type Deps struct {
	DB        *store.DB
	Workspace string
	Bus       *event.Bus // "notification.updated" when a delivery changes; may be nil
	Notify    *notify.Service
	Vars      Vars
	Logger    *slog.Logger
	// AppURL is the local app's address (http://127.0.0.1:7777): mails and
	// hooks link to the card there. "" leaves the link out.
	AppURL string
	// TLS is the TLS configuration for SMTP and hooks; nil: the system's
	// roots (tests give their own CA).
	TLS *tls.Config
}

// Config tunes retries. Zero values take the defaults.
type Config struct {
	Backoff    time.Duration // before the first retry; doubles each time (default 15s)
	MaxBackoff time.Duration // the longest wait between attempts (default 30 min)
	Attempts   int           // attempts before a row fails (default 8)
	Timeout    time.Duration // one attempt (default 30s)
}

func (c Config) withDefaults() Config {
	if c.Backoff <= 0 {
		c.Backoff = 15 * time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Minute
	}
	if c.Attempts <= 0 {
		c.Attempts = 8
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	return c
}

// Service is the outbox of one workspace.
type Service struct {
	d    Deps
	c    Config
	http *http.Client
	now  func() time.Time
	wake chan struct{}

	mu     sync.Mutex
	phones Phones
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns the outbox; Start starts its sender.
func New(d Deps, c Config) *Service {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = d.TLS
	c = c.withDefaults()
	return &Service{
		d: d, c: c, now: time.Now, wake: make(chan struct{}, 1),
		http: &http.Client{Transport: tr, Timeout: c.Timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
}

func (s *Service) publish(kind, id, agent string) {
	if s.d.Bus != nil {
		s.d.Bus.Publish(event.Change{Workspace: s.d.Workspace, Kind: kind, ID: id, Agent: agent})
	}
}

// SetPhones sets what pushes to the workspace's phones (nil: none).
func (s *Service) SetPhones(p Phones) {
	s.mu.Lock()
	s.phones = p
	s.mu.Unlock()
}

func (s *Service) phoneSender() Phones {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.phones
}

// Plan queues n's mail and hook POSTs in tx (the notification's own), as
// the delivery settings and the hooks say: it is notify's Planner.
func (s *Service) Plan(ctx context.Context, tx *sql.Tx, n notify.Notification) error {
	d, err := s.d.Notify.Delivery(ctx)
	if err != nil {
		return err
	}
	wantEmail, wantHooks := d.Wants(n, notify.Email), d.Wants(n, notify.Hooks)
	phones := s.phoneSender()
	wantPhone := d.Wants(n, notify.Phone) && phones != nil && phones.PhonesPaired()
	if !wantEmail && !wantHooks && !wantPhone {
		return nil
	}
	// Settings that cannot be read send nothing on that channel: the
	// notification itself is never refused for them.
	var email Email
	var hooks []Hook
	if wantEmail {
		if err := readMeta(ctx, tx, emailKey, &email); err != nil {
			s.d.Logger.Error("outbox: read email settings", "err", err)
			email = Email{}
		}
	}
	if wantHooks {
		if err := readMeta(ctx, tx, hooksKey, &hooks); err != nil {
			s.d.Logger.Error("outbox: read notification hooks", "err", err)
			hooks = nil
		}
	}
	type row struct{ channel, target string }
	var rows []row
	if email.Host != "" {
		rows = append(rows, row{ChannelEmail, "email"})
	}
	for _, h := range hooks {
		if len(h.Kinds) == 0 || slices.Contains(h.Kinds, n.Kind) {
			rows = append(rows, row{ChannelHook, h.ID})
		}
	}
	if wantPhone {
		rows = append(rows, row{ChannelPhone, "phones"})
	}
	if len(rows) == 0 {
		return nil
	}
	m, err := s.render(ctx, tx, n)
	if err != nil {
		return fmt.Errorf("render notification %s: %w", n.ID, err)
	}
	payload, _ := json.Marshal(m)
	now := store.FormatTime(s.now())
	for _, r := range rows {
		_, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, notification_id, channel, target, payload, status, next_at, created_at)
			VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT DO NOTHING`,
			store.NewID("ob"), n.ID, r.channel, r.target, string(payload), now, now)
		if err != nil {
			return fmt.Errorf("queue %s of notification %s: %w", r.channel, n.ID, err)
		}
	}
	return nil
}

// Planned wakes the sender: a notification's deliveries were committed.
func (s *Service) Planned() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Start starts the sender. Rows a crash left in "sending" are due again:
// they are sent with the same send id.
func (s *Service) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go s.loop(ctx, s.done)
}

// Close stops the sender and waits for an attempt under way to end. A nil
// outbox closes as nothing.
func (s *Service) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (s *Service) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	if _, err := s.d.DB.ExecContext(ctx, `UPDATE outbox SET status = 'pending' WHERE status = 'sending'`); err != nil && ctx.Err() == nil {
		s.d.Logger.Error("outbox: resume interrupted sends", "err", err)
	}
	for {
		wait := s.sendDue(ctx)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// idle is the longest the sender sleeps with nothing due.
const idle = 10 * time.Minute

// sendDue sends every due row and says how long until the next is due.
func (s *Service) sendDue(ctx context.Context) time.Duration {
	for ctx.Err() == nil {
		var id, next string
		err := s.d.DB.QueryRowContext(ctx, `SELECT id, next_at FROM outbox WHERE status = 'pending' ORDER BY next_at, rowid LIMIT 1`).Scan(&id, &next)
		if errors.Is(err, sql.ErrNoRows) {
			return idle
		}
		if err != nil {
			if ctx.Err() == nil {
				s.d.Logger.Error("outbox: read due", "err", err)
			}
			return 5 * time.Second
		}
		if wait := store.ParseTime(next).Sub(s.now()); wait > 0 {
			return min(wait, idle)
		}
		s.attempt(ctx, id)
	}
	return 0
}

// attempt claims row id (recorded before anything is sent), sends it and
// records the outcome.
func (s *Service) attempt(ctx context.Context, id string) {
	var e entry
	err := s.d.DB.Tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `UPDATE outbox SET status = 'sending', attempts = attempts + 1
			WHERE id = ? AND status = 'pending' RETURNING `+entryColumns, id).Scan(e.fields()...)
		return err
	})
	if err != nil {
		if !errors.Is(err, sql.ErrNoRows) && ctx.Err() == nil {
			s.d.Logger.Error("outbox: claim", "id", id, "err", err)
		}
		return
	}
	sendCtx, cancel := context.WithTimeout(ctx, s.c.Timeout)
	sendErr := s.send(sendCtx, e)
	cancel()
	if ctx.Err() != nil {
		return // closing: the row stays "sending" and is retried on the next start
	}
	now := s.now()
	if sendErr == nil {
		_, err = s.d.DB.ExecContext(context.WithoutCancel(ctx), `UPDATE outbox SET status = 'sent', sent_at = ?, last_error = '' WHERE id = ?`, store.FormatTime(now), id)
	} else {
		msg := s.d.Vars.Redact(sendErr.Error())
		var final *permanent
		status, next := Pending, now.Add(s.backoff(e.Attempts))
		if e.Attempts >= s.c.Attempts || errors.As(sendErr, &final) {
			status = Failed
		}
		s.d.Logger.Warn("outbox: send failed", "id", id, "channel", e.Channel, "attempt", e.Attempts, "status", status, "err", msg)
		_, err = s.d.DB.ExecContext(context.WithoutCancel(ctx), `UPDATE outbox SET status = ?, next_at = ?, last_error = ? WHERE id = ?`,
			status, store.FormatTime(next), cut(msg, 1000), id)
	}
	if err != nil {
		s.d.Logger.Error("outbox: record outcome", "id", id, "err", err)
	}
	s.publish("notification.updated", e.NotificationID, e.message().AgentID)
}

// backoff is the wait after attempt n (1-based) failed.
func (s *Service) backoff(n int) time.Duration {
	d := s.c.Backoff
	for i := 1; i < n && d < s.c.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, s.c.MaxBackoff)
}

// permanent is a failure no retry fixes (the hook was removed, email was
// turned off).
type permanent struct{ error }

func (s *Service) send(ctx context.Context, e entry) error {
	m := e.message()
	switch e.Channel {
	case ChannelEmail:
		var email Email
		if err := readMeta(ctx, s.d.DB, emailKey, &email); err != nil {
			return err
		}
		if email.Host == "" {
			return &permanent{errors.New("email was turned off in Settings → Notifications before this mail was sent")}
		}
		return s.sendMail(ctx, email, e.ID, m)
	case ChannelHook:
		var hooks []Hook
		if err := readMeta(ctx, s.d.DB, hooksKey, &hooks); err != nil {
			return err
		}
		for _, h := range hooks {
			if h.ID == e.Target {
				return s.post(ctx, h, e.ID, m)
			}
		}
		return &permanent{fmt.Errorf("hook %s was removed before this notification was sent", e.Target)}
	case ChannelPhone:
		p := s.phoneSender()
		if p == nil || !p.PhonesPaired() {
			return &permanent{errors.New("no phone is paired any more (Settings → Phone)")}
		}
		return p.PushPhones(ctx, e.ID, m)
	}
	return &permanent{fmt.Errorf("unknown channel %q", e.Channel)}
}

// entry is an outbox row.
type entry struct {
	ID, NotificationID, Channel, Target, Payload, Status string
	Attempts                                             int
	NextAt, LastError, CreatedAt                         string
	SentAt                                               sql.NullString
}

const entryColumns = `id, notification_id, channel, target, payload, status, attempts, next_at, last_error, created_at, sent_at`

func (e *entry) fields() []any {
	return []any{&e.ID, &e.NotificationID, &e.Channel, &e.Target, &e.Payload, &e.Status, &e.Attempts, &e.NextAt, &e.LastError, &e.CreatedAt, &e.SentAt}
}

func (e entry) message() Message {
	var m Message
	_ = json.Unmarshal([]byte(e.Payload), &m)
	return m
}

// Delivery is one mail or hook POST of a notification, as the panel shows it.
type Delivery struct {
	ID             string     `json:"id"` // the send id
	NotificationID string     `json:"notification_id"`
	Channel        string     `json:"channel"` // email | hook | phone
	Target         string     `json:"target"`  // "email", the hook's id, or "phones"
	TargetName     string     `json:"target_name"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastError      string     `json:"last_error"`
	NextAt         *time.Time `json:"next_at"` // when a pending one is tried next
	CreatedAt      time.Time  `json:"created_at"`
	SentAt         *time.Time `json:"sent_at"`
}

// ListOptions filters Deliveries.
type ListOptions struct {
	NotificationID string // "" for all
	Problems       bool   // only those that failed or wait for a retry after an error
	Limit          int    // default 100, at most 500
}

// Deliveries lists deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, o ListOptions) ([]Delivery, error) {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	o.Limit = min(o.Limit, 500)
	q := `SELECT ` + entryColumns + ` FROM outbox WHERE 1 = 1`
	var args []any
	if o.NotificationID != "" {
		q += ` AND notification_id = ?`
		args = append(args, o.NotificationID)
	}
	if o.Problems {
		q += ` AND (status = 'failed' OR (status = 'pending' AND last_error != ''))`
	}
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	list, err := store.Query(ctx, s.d.DB, func(r store.Scanner) (entry, error) {
		var e entry
		return e, r.Scan(e.fields()...)
	}, q, append(args, o.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	hooks, _ := s.Hooks(ctx)
	email, _ := s.Email(ctx)
	out := make([]Delivery, len(list))
	for i, e := range list {
		d := Delivery{ID: e.ID, NotificationID: e.NotificationID, Channel: e.Channel, Target: e.Target,
			Status: e.Status, Attempts: e.Attempts, LastError: e.LastError, CreatedAt: store.ParseTime(e.CreatedAt)}
		if e.Status == Pending {
			t := store.ParseTime(e.NextAt)
			d.NextAt = &t
		}
		if e.SentAt.Valid {
			t := store.ParseTime(e.SentAt.String)
			d.SentAt = &t
		}
		d.TargetName = "email to " + email.To
		if e.Channel == ChannelPhone {
			d.TargetName = "your phones"
		}
		if e.Channel == ChannelHook {
			d.TargetName = "removed hook"
			for _, h := range hooks {
				if h.ID == e.Target {
					d.TargetName = h.Name
				}
			}
		}
		out[i] = d
	}
	return out, nil
}

// Retry makes a failed delivery due now, with its attempts counted afresh.
func (s *Service) Retry(ctx context.Context, id string) error {
	res, err := s.d.DB.ExecContext(ctx, `UPDATE outbox SET status = 'pending', attempts = 0, next_at = ? WHERE id = ? AND status = 'failed'`,
		store.FormatTime(s.now()), id)
	if err != nil {
		return fmt.Errorf("retry delivery %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fault.NotFound("no failed delivery with id %q", id)
	}
	s.Planned()
	return nil
}
