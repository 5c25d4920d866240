// Package notify owns what agents tell the person and what waits for them:
// the notifications of a workspace (an agent's info, progress, done and error
// messages, and the cards its pauses raise), whether each is still waiting
// ("To handle"), and how each kind is delivered (in the window, as an OS
// notification, by email, to outgoing hooks), separately for runs the person
// started and runs that fired on their own. Email and hooks are sent by
// package outbox, which plans them through [Service.SetPlanner] in the
// notification's own transaction.
//
// A notification raised by a pause is handled by answering the pause
// (HandlePause), never by dismissing it; every other one is handled by
// dismissing it.
package notify

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Kinds of notification sent by agents (the notify tool, a failed run).
const (
	Info     = "info"
	Progress = "progress"
	Done     = "done"
	Error    = "error"
)

// The kinds raised by a pause carry its id; each pause kind is one
// (package pause lists them). These name the ones Rerun's own code raises.
const (
	Question   = pause.Question
	Approval   = pause.Approval
	Connector  = pause.Connector
	Credential = pause.Credential
	Takeover   = pause.Takeover
)

// Kinds lists every kind, in the order Settings shows them.
var Kinds = append([]string{Info, Progress, Done, Error}, pause.Names()...)

// pauseKinds are raised by a pause and handled by answering it.
var pauseKinds = pause.Names()

// Limits on what a notification holds. Longer text is cut (with "…"), not
// refused: an agent's message should arrive even when it runs long.
const (
	MaxTitleLen = 200  // characters
	MaxBodyLen  = 4000 // characters
)

// List limits.
const (
	DefaultLimit = 100
	MaxLimit     = 500
)

// Notification is one thing an agent told the person.
type Notification struct {
	ID      string `json:"id"`
	AgentID string `json:"agent_id"`
	RunID   string `json:"run_id"`
	// PauseID is the pause that raised it ("" unless Kind is a pause kind).
	PauseID   string    `json:"pause_id"`
	Kind      string    `json:"kind"`
	Title     string    `json:"title"`
	Body      string    `json:"body"`
	Automated bool      `json:"automated"` // the run was not started by the person in chat
	CreatedAt time.Time `json:"created_at"`
	// HandledAt is when it was dismissed or its pause answered; nil while it
	// waits.
	HandledAt *time.Time `json:"handled_at"`
}

// Input is a new notification. PauseID is required for the pause kinds and
// refused for the others.
type Input struct {
	AgentID, RunID, PauseID string
	Kind, Title, Body       string
	Automated               bool
}

// Service keeps the notifications of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	bus       *event.Bus
	now       func() time.Time
	planner   Planner
}

// Planner queues what a new notification sends beyond the window (package
// outbox): Plan runs inside the transaction that stores it (a notification
// is never stored without its deliveries, nor they without it), Planned
// after that transaction committed.
type Planner interface {
	Plan(ctx context.Context, tx *sql.Tx, n Notification) error
	Planned()
}

// SetPlanner sets the planner new notifications go through; call it before
// the workspace serves.
func (s *Service) SetPlanner(p Planner) { s.planner = p }

// New returns the notification service of the workspace whose database is
// db; changes are announced on bus (which may be nil) as
// "notification.created" and "notification.updated" (ID: the notification,
// Agent: its agent) and "settings.changed" (ID: "notifications").
func New(db *store.DB, workspaceID string, bus *event.Bus) *Service {
	return &Service{db: db, workspace: workspaceID, bus: bus, now: time.Now}
}

func (s *Service) publish(kind, id, agent string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: id, Agent: agent})
	}
}

// clean checks in and trims its text to the limits.
func clean(in Input) (Input, error) {
	if !slices.Contains(Kinds, in.Kind) {
		return in, fault.Invalid("notification kind %q is unknown; use one of %s", in.Kind, strings.Join(Kinds, ", "))
	}
	if in.AgentID == "" {
		return in, fault.Invalid("a notification needs the agent that sends it")
	}
	isPause := slices.Contains(pauseKinds, in.Kind)
	switch {
	case isPause && in.PauseID == "":
		return in, fault.Invalid("a %s notification is raised by a pause; give its pause id", in.Kind)
	case !isPause && in.PauseID != "":
		return in, fault.Invalid("a %s notification is not raised by a pause; only %s carry a pause id", in.Kind, strings.Join(pauseKinds, ", "))
	}
	// A title is one line: newlines and other control characters become spaces.
	in.Title = strings.Join(strings.FieldsFunc(in.Title, unicode.IsControl), " ")
	in.Title = strings.TrimSpace(in.Title)
	if in.Title == "" {
		return in, fault.Invalid("a notification needs a title: say what happened in one line")
	}
	in.Title = cut(in.Title, MaxTitleLen)
	in.Body = cut(strings.TrimSpace(in.Body), MaxBodyLen)
	return in, nil
}

// cut shortens s to at most max characters, ending in "…" when it was cut.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimRightFunc(string(r[:max-1]), unicode.IsSpace) + "…"
}

const columns = `id, agent_id, run_id, pause_id, kind, title, body, automated, created_at, handled_at`

func scan(row store.Scanner) (Notification, error) {
	var n Notification
	var created string
	var handled sql.NullString
	err := row.Scan(&n.ID, &n.AgentID, &n.RunID, &n.PauseID, &n.Kind, &n.Title, &n.Body, &n.Automated, &created, &handled)
	n.CreatedAt = store.ParseTime(created)
	if handled.Valid {
		t := store.ParseTime(handled.String)
		n.HandledAt = &t
	}
	return n, err
}

// Notify stores a new notification and announces it; it waits ("To
// handle") until dismissed or, for a pause's, until the pause is answered.
// Title and body longer than the limits are cut. A pause has one
// notification: raising it again (a run resumed after a restart) returns the
// first, unannounced.
func (s *Service) Notify(ctx context.Context, in Input) (Notification, error) {
	in, err := clean(in)
	if err != nil {
		return Notification{}, err
	}
	n := Notification{
		ID: store.NewID("nt"), AgentID: in.AgentID, RunID: in.RunID, PauseID: in.PauseID,
		Kind: in.Kind, Title: in.Title, Body: in.Body, Automated: in.Automated, CreatedAt: s.now().UTC(),
	}
	existing := false
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM agents WHERE id = ?`, n.AgentID).Scan(&one); errors.Is(err, sql.ErrNoRows) {
			return fault.NotFound("no agent with id %q", n.AgentID)
		} else if err != nil {
			return err
		}
		if n.PauseID != "" {
			first, err := scan(tx.QueryRowContext(ctx, `SELECT `+columns+` FROM notifications WHERE pause_id = ?`, n.PauseID))
			if err == nil {
				n, existing = first, true
				return nil
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notifications (`+columns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
			n.ID, n.AgentID, n.RunID, n.PauseID, n.Kind, n.Title, n.Body, n.Automated, store.FormatTime(n.CreatedAt))
		if err == nil && s.planner != nil {
			err = s.planner.Plan(ctx, tx, n)
		}
		return err
	})
	if err != nil {
		return Notification{}, fmt.Errorf("notify %s: %w", n.Kind, err)
	}
	if !existing {
		if s.planner != nil {
			s.planner.Planned()
		}
		s.publish("notification.created", n.ID, n.AgentID)
	}
	return n, nil
}

// HandlePause marks the notification of a pause handled (the pause was
// answered, dismissed or cancelled). A pause without an open notification
// is no error: handling twice is handling once.
func (s *Service) HandlePause(ctx context.Context, pauseID string) error {
	if pauseID == "" {
		return fault.Invalid("no pause id given")
	}
	var handled []Notification
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE notifications SET handled_at = ?
			WHERE pause_id = ? AND handled_at IS NULL RETURNING id, agent_id`, store.FormatTime(s.now()), pauseID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n Notification
			if err := rows.Scan(&n.ID, &n.AgentID); err != nil {
				return err
			}
			handled = append(handled, n)
		}
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("handle notification of pause %s: %w", pauseID, err)
	}
	for _, n := range handled {
		s.publish("notification.updated", n.ID, n.AgentID)
	}
	return nil
}

// ListOptions filters List.
type ListOptions struct {
	AgentID string // "" for every agent
	Open    bool   // only those not handled yet
	Limit   int    // default DefaultLimit, at most MaxLimit
}

// List returns notifications, newest first.
func (s *Service) List(ctx context.Context, o ListOptions) ([]Notification, error) {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	o.Limit = min(o.Limit, MaxLimit)
	q := `SELECT ` + columns + ` FROM notifications WHERE 1 = 1`
	var args []any
	if o.AgentID != "" {
		q += ` AND agent_id = ?`
		args = append(args, o.AgentID)
	}
	if o.Open {
		q += ` AND handled_at IS NULL`
	}
	q += ` ORDER BY created_at DESC, rowid DESC LIMIT ?`
	list, err := store.Query(ctx, s.db, scan, q, append(args, o.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return list, nil
}

// Get returns one notification.
func (s *Service) Get(ctx context.Context, id string) (Notification, error) {
	n, err := scan(s.db.QueryRowContext(ctx, `SELECT `+columns+` FROM notifications WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Notification{}, fault.NotFound("no notification with id %q", id)
	}
	if err != nil {
		return Notification{}, fmt.Errorf("get notification %s: %w", id, err)
	}
	return n, nil
}

// Dismiss marks a notification handled. A pause's notification is refused
// (fault.ErrConflict): it is handled by answering its card. Dismissing a
// handled one returns it unchanged.
func (s *Service) Dismiss(ctx context.Context, id string) (Notification, error) {
	n, err := s.Get(ctx, id)
	if err != nil {
		return Notification{}, err
	}
	if n.PauseID != "" {
		return Notification{}, fault.Conflict("this notification waits for an answer to the agent's %s card; answer the card to handle it", n.Kind)
	}
	if n.HandledAt != nil {
		return n, nil
	}
	now := s.now().UTC()
	res, err := s.db.ExecContext(ctx, `UPDATE notifications SET handled_at = ? WHERE id = ? AND handled_at IS NULL`, store.FormatTime(now), id)
	if err != nil {
		return Notification{}, fmt.Errorf("dismiss notification %s: %w", id, err)
	}
	if changed, _ := res.RowsAffected(); changed == 0 {
		return s.Get(ctx, id) // dismissed meanwhile
	}
	n.HandledAt = &now
	s.publish("notification.updated", n.ID, n.AgentID)
	return n, nil
}

// DismissAll dismisses every waiting notification that is not a pause's —
// of one agent, or of all when agentID is "" — and says how many. It
// announces one "notification.updated" per agent concerned, without an ID.
func (s *Service) DismissAll(ctx context.Context, agentID string) (int, error) {
	if agentID != "" {
		var one int
		err := s.db.QueryRowContext(ctx, `SELECT 1 FROM agents WHERE id = ?`, agentID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, fault.NotFound("no agent with id %q", agentID)
		} else if err != nil {
			return 0, fmt.Errorf("dismiss notifications: %w", err)
		}
	}
	q := `UPDATE notifications SET handled_at = ? WHERE handled_at IS NULL AND pause_id = ''`
	args := []any{store.FormatTime(s.now())}
	if agentID != "" {
		q += ` AND agent_id = ?`
		args = append(args, agentID)
	}
	agents := map[string]int{}
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q+` RETURNING agent_id`, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a string
			if err := rows.Scan(&a); err != nil {
				return err
			}
			agents[a]++
		}
		return rows.Err()
	})
	if err != nil {
		return 0, fmt.Errorf("dismiss notifications: %w", err)
	}
	total := 0
	for a, n := range agents {
		total += n
		s.publish("notification.updated", "", a)
	}
	return total, nil
}

// Open counts the notifications waiting for the person (a pause's included),
// in all and by agent id (agents with none are absent).
func (s *Service) Open(ctx context.Context) (total int, byAgent map[string]int, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id, count(*) FROM notifications WHERE handled_at IS NULL GROUP BY agent_id`)
	if err != nil {
		return 0, nil, fmt.Errorf("count open notifications: %w", err)
	}
	defer rows.Close()
	byAgent = map[string]int{}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			return 0, nil, fmt.Errorf("count open notifications: %w", err)
		}
		byAgent[a] = n
		total += n
	}
	if err := rows.Err(); err != nil {
		return 0, nil, fmt.Errorf("count open notifications: %w", err)
	}
	return total, byAgent, nil
}
