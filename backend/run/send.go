package run

import (
	"context"

	"github.com/rerun-build/rerun-desktop/backend/fault"
)

// SendRequest is a message to an agent from a person (the app's chat) or
// from the API (MCP send_message, and the Rerun agent through it).
type SendRequest struct {
	AgentID string
	// SessionID is the conversation to continue; it must be the agent's.
	// Empty: the agent's most recent session of Source's kind (for chat,
	// its chat session), opened when it has none.
	SessionID string
	// NewSession opens a fresh session of Source's kind instead; it
	// excludes SessionID.
	NewSession bool
	Source     string // SourceChat or SourceAPI
	Input      string
	From       string // who wrote it; empty: the source's ("you", "api")
}

// cardOpenMessage says why a message was refused and what to do instead;
// the same for every transport, since the card is answered in the app.
const cardOpenMessage = "the agent is waiting for an answer on a card in this conversation; " +
	"answer or dismiss the card in the Rerun app first (or start a new conversation), then send the message again"

// Send starts a run from a message: every transport that passes on what a
// person or the API writes goes through here, so the choice of session and
// the open-card rule are the same everywhere.
//
// A session with an open card (its own runs' or an agent's they called)
// refuses the message with a fault.ErrConflict: the conversation goes on
// from the card's answer, not past it. Schedules and triggers do not come
// here: they queue into their own sessions with StartTx, and a run of theirs
// that arrives while a card is open there is queued behind it (dispatch
// takes no run of a session with a paused run) and runs once the card is
// answered, since an unattended fire has nobody to tell it was refused.
func (s *Service) Send(ctx context.Context, req SendRequest) (Run, error) {
	if req.Source != SourceChat && req.Source != SourceAPI {
		return Run{}, fault.Invalid("a message is sent from chat or the API, not %q", req.Source)
	}
	if _, err := s.agents.Get(ctx, req.AgentID); err != nil {
		return Run{}, err
	}
	sid, err := s.sendSession(ctx, req)
	if err != nil {
		return Run{}, err
	}
	if p, err := s.OpenPauseIn(ctx, sid); err != nil {
		return Run{}, err
	} else if p != nil {
		return Run{}, fault.Conflict(cardOpenMessage)
	}
	return s.Start(ctx, req.AgentID, sid, req.Source, req.Input, StartOptions{From: req.From})
}

// sendSession is the session a message goes to.
func (s *Service) sendSession(ctx context.Context, req SendRequest) (string, error) {
	switch {
	case req.SessionID != "" && req.NewSession:
		return "", fault.Invalid("give a session or ask for a new one, not both")
	case req.SessionID != "":
		sess, err := s.Session(ctx, req.SessionID)
		if err != nil {
			return "", err
		}
		if sess.AgentID != req.AgentID {
			return "", fault.Invalid("session %q belongs to another agent; leave it out to use this agent's own", req.SessionID)
		}
		return sess.ID, nil
	case req.NewSession:
		sess, err := s.NewSession(ctx, req.AgentID, req.Source, "")
		return sess.ID, err
	}
	list, err := s.Sessions(ctx, req.AgentID, req.Source)
	if err != nil {
		return "", err
	}
	if len(list) > 0 {
		return list[0].ID, nil
	}
	sess, err := s.NewSession(ctx, req.AgentID, req.Source, "")
	return sess.ID, err
}
