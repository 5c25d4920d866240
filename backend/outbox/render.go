package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/notify"
	"github.com/rerun-build/rerun-desktop/backend/pause"
)

// Message is what one notification sends, rendered and masked when it is
// queued: every string in it went through the workspace's masker.
type Message struct {
	NotificationID string     `json:"notification_id"`
	Workspace      string     `json:"workspace"`
	Kind           string     `json:"kind"`
	AgentID        string     `json:"agent_id"`
	PauseID        string     `json:"pause_id,omitempty"` // the card a phone answers
	Agent          string     `json:"agent"`              // the agent's name
	Title          string     `json:"title"`
	Body           string     `json:"body"`
	Automated      bool       `json:"automated"`
	Link           string     `json:"link"` // opens the card in the app ("" when the app's address is unknown)
	Questions      []Question `json:"questions,omitempty"`
	Items          []Item     `json:"items,omitempty"`
	CreatedAt      time.Time  `json:"created_at"`
}

// Question is one question of a question card.
type Question struct {
	Question string   `json:"question"`
	Options  []string `json:"options"`
}

// Item is one action of an approval card.
type Item struct {
	ID     string `json:"id,omitempty"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// maxDetail bounds an approval item's detail in a message.
const maxDetail = 2000

// render builds the message of n, reading its agent and pause in tx, and
// masks it.
func (s *Service) render(ctx context.Context, tx *sql.Tx, n notify.Notification) (Message, error) {
	m := Message{
		NotificationID: n.ID, Workspace: s.d.Workspace, Kind: n.Kind, AgentID: n.AgentID,
		PauseID: n.PauseID, Title: n.Title, Body: n.Body, Automated: n.Automated, CreatedAt: n.CreatedAt,
		Link: Link(s.d.AppURL, s.d.Workspace, n.ID),
	}
	if err := tx.QueryRowContext(ctx, `SELECT name FROM agents WHERE id = ?`, n.AgentID).Scan(&m.Agent); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return m, err
	}
	if m.Agent == "" {
		m.Agent = n.AgentID
	}
	if n.PauseID != "" {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT request FROM pauses WHERE id = ?`, n.PauseID).Scan(&raw)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return m, err
		}
		switch n.Kind {
		case notify.Question:
			if q, err := pause.Decode[pause.QuestionRequest](json.RawMessage(raw)); err == nil {
				for _, it := range q.Questions {
					m.Questions = append(m.Questions, Question{Question: it.Question, Options: it.Options})
				}
			}
		case notify.Approval:
			if a, err := pause.Decode[pause.ApprovalRequest](json.RawMessage(raw)); err == nil {
				for _, it := range a.Items {
					m.Items = append(m.Items, Item{ID: it.ID, Title: it.Title, Kind: it.Kind, Detail: cut(it.Detail, maxDetail)})
				}
			}
		}
	}
	return s.mask(m), nil
}

// mask runs every text of m through the workspace's masker.
func (s *Service) mask(m Message) Message {
	r := s.d.Vars.Redact
	m.Agent, m.Title, m.Body = r(m.Agent), r(m.Title), r(m.Body)
	for i := range m.Questions {
		m.Questions[i].Question = r(m.Questions[i].Question)
		for j := range m.Questions[i].Options {
			m.Questions[i].Options[j] = r(m.Questions[i].Options[j])
		}
	}
	for i := range m.Items {
		m.Items[i].Title, m.Items[i].Detail = r(m.Items[i].Title), r(m.Items[i].Detail)
	}
	return m
}

// Link is the address that opens notification id of workspace ws in the
// app: the local app's URL with ?workspace=…&notification=…, which the UI
// reads when it loads. "" when appURL is "".
func Link(appURL, ws, id string) string {
	if appURL == "" {
		return ""
	}
	return strings.TrimSuffix(appURL, "/") + "/?" + url.Values{"workspace": {ws}, "notification": {id}}.Encode()
}

// Subject is the mail's subject line.
func (m Message) Subject() string {
	return cut(fmt.Sprintf("[Rerun] %s: %s", m.Agent, m.Title), 200)
}

// Text is the message as plain text: which agent, what it asks, the link.
func (m Message) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s — %s\n", m.Agent, m.Title)
	if m.Body != "" {
		fmt.Fprintf(&b, "\n%s\n", m.Body)
	}
	if len(m.Questions) > 0 {
		b.WriteString("\nQuestions:\n")
		for i, q := range m.Questions {
			fmt.Fprintf(&b, "%d. %s\n", i+1, q.Question)
			if len(q.Options) > 0 {
				fmt.Fprintf(&b, "   Suggested answers: %s\n", strings.Join(q.Options, " / "))
			}
		}
	}
	if len(m.Items) > 0 {
		b.WriteString("\nTo approve or decline:\n")
		for i, it := range m.Items {
			fmt.Fprintf(&b, "%d. %s\n", i+1, it.Title)
			if it.Detail != "" {
				for _, line := range strings.Split(it.Detail, "\n") {
					fmt.Fprintf(&b, "   %s\n", line)
				}
			}
		}
	}
	if m.Link != "" {
		fmt.Fprintf(&b, "\nOpen it in Rerun: %s\n", m.Link)
	}
	origin := "a run you started"
	if m.Automated {
		origin = "a run that started on its own (a schedule, a trigger or another agent)"
	}
	fmt.Fprintf(&b, "\nSent by Rerun on your computer, for %s. Change what reaches you in Settings → Notifications.\n", origin)
	return b.String()
}

func cut(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}
