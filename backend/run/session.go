package run

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Session is a conversation thread with an agent.
type Session struct {
	ID          string    `json:"id"`
	AgentID     string    `json:"agent_id"`
	Kind        string    `json:"kind"` // a run source: chat, agent, api, schedule, trigger
	Title       string    `json:"title"`
	Provider    string    `json:"provider"`
	Model       string    `json:"model"`
	ParentRunID string    `json:"parent_run_id"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

const sessionColumns = `id, agent_id, kind, title, provider, model, parent_run_id, created_at, updated_at`

func scanSession(row store.Scanner) (Session, error) {
	var s Session
	var created, updated string
	err := row.Scan(&s.ID, &s.AgentID, &s.Kind, &s.Title, &s.Provider, &s.Model, &s.ParentRunID, &created, &updated)
	s.CreatedAt, s.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	return s, err
}

// Session returns one session.
func (s *Service) Session(ctx context.Context, id string) (Session, error) {
	sess, err := scanSession(s.db.QueryRowContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, fault.NotFound("no session with id %q", id)
	}
	if err != nil {
		return Session{}, fmt.Errorf("get session %q: %w", id, err)
	}
	return sess, nil
}

// NewSession opens a new session of the given kind with an agent.
func (s *Service) NewSession(ctx context.Context, agentID, kind, parentRunID string) (Session, error) {
	if _, err := s.agents.Get(ctx, agentID); err != nil {
		return Session{}, err
	}
	now := s.now()
	sess := Session{ID: store.NewSortedID("ses"), AgentID: agentID, Kind: kind, ParentRunID: parentRunID, CreatedAt: now, UpdatedAt: now}
	ts := store.FormatTime(now)
	if _, err := s.db.ExecContext(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, '', '', '', ?, ?, ?)`,
		sess.ID, agentID, kind, parentRunID, ts, ts); err != nil {
		return Session{}, fmt.Errorf("create session: %w", err)
	}
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: "session.created", ID: sess.ID, Agent: agentID, Session: sess.ID})
	}
	return sess, nil
}

// Sessions lists an agent's sessions of one kind, most recently used first.
func (s *Service) Sessions(ctx context.Context, agentID, kind string) ([]Session, error) {
	list, err := store.Query(ctx, s.db, scanSession, `SELECT `+sessionColumns+` FROM sessions
		WHERE agent_id = ? AND kind = ? ORDER BY updated_at DESC, id DESC`, agentID, kind)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return list, nil
}

// ChatSession returns the agent's most recent chat session, creating one when
// it has none.
func (s *Service) ChatSession(ctx context.Context, agentID string) (Session, error) {
	list, err := s.Sessions(ctx, agentID, SourceChat)
	if err != nil {
		return Session{}, err
	}
	if len(list) > 0 {
		return list[0], nil
	}
	return s.NewSession(ctx, agentID, SourceChat, "")
}

// SessionUpdate changes the fields that are not nil.
type SessionUpdate struct {
	Provider *string `json:"provider"`
	Model    *string `json:"model"`
	Title    *string `json:"title"`
}

// UpdateSession switches a conversation's model or renames it.
func (s *Service) UpdateSession(ctx context.Context, id string, u SessionUpdate) (Session, error) {
	sess, err := s.Session(ctx, id)
	if err != nil {
		return Session{}, err
	}
	if u.Provider != nil {
		sess.Provider = strings.TrimSpace(*u.Provider)
	}
	if u.Model != nil {
		sess.Model = strings.TrimSpace(*u.Model)
	}
	if u.Title != nil {
		sess.Title = strings.TrimSpace(*u.Title)
	}
	if len(sess.Provider) > 200 || len(sess.Model) > 200 || len(sess.Title) > 200 {
		return Session{}, fault.Invalid("provider, model and title are limited to 200 characters")
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE sessions SET provider = ?, model = ?, title = ? WHERE id = ?`,
		sess.Provider, sess.Model, sess.Title, id); err != nil {
		return Session{}, fmt.Errorf("update session: %w", err)
	}
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: "session.updated", ID: id, Agent: sess.AgentID, Session: id})
	}
	return sess, nil
}
