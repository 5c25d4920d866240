package foreman

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/event"
	"github.com/rerun-build/rerun-desktop/backend/pause"
	"github.com/rerun-build/rerun-desktop/backend/run"
)

// Onboarding states.
const (
	OnboardingNew     = "new"     // never started (a workspace joined from another device stays so)
	OnboardingRunning = "running" // the Foreman's run is on, or stopped and waiting to be resumed
	OnboardingSkipped = "skipped"
	OnboardingDone    = "done"
)

// KindOnboarding is the change published when a workspace's onboarding
// state changes.
const KindOnboarding = "onboarding.updated"

// Onboarding is where a workspace's onboarding is, for the app.
type Onboarding struct {
	State   string `json:"state"`
	AgentID string `json:"agent_id"` // the Foreman
	// SessionID and RunID are the Foreman's onboarding chat and its latest
	// run; CardID its open card, "" when none waits.
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	RunStatus string `json:"run_status"`
	CardID    string `json:"card_id"`
	// Stopped is set while running when the run ended without finishing
	// (Error says why); POST start resumes it. NeedsModel says no model is
	// configured: set one up in Settings → Models first.
	Stopped    bool   `json:"stopped"`
	NeedsModel bool   `json:"needs_model"`
	Error      string `json:"error"`
}

// onboardingRecord is what is stored in the meta table under
// "onboarding": per device, never synced.
type onboardingRecord struct {
	State     string `json:"state"`
	SessionID string `json:"session_id"`
	RunID     string `json:"run_id"`
	// FirstCard is the scripted first card; Seeded is set once the page
	// of its answers is written.
	FirstCard string `json:"first_card"`
	Seeded    bool   `json:"seeded"`
}

const onboardingKey = "onboarding"

func (f *Foreman) readOnboarding(ctx context.Context) (onboardingRecord, error) {
	var raw string
	err := f.d.DB.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, onboardingKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return onboardingRecord{State: OnboardingNew}, nil
	}
	if err != nil {
		return onboardingRecord{}, fmt.Errorf("read onboarding state: %w", err)
	}
	var rec onboardingRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil || rec.State == "" {
		return onboardingRecord{State: OnboardingNew}, nil // unreadable: start over rather than lock the person out
	}
	return rec, nil
}

func (f *Foreman) writeOnboarding(ctx context.Context, rec onboardingRecord) error {
	b, _ := json.Marshal(rec)
	if _, err := f.d.DB.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value`, onboardingKey, string(b)); err != nil {
		return fmt.Errorf("save onboarding state: %w", err)
	}
	f.d.Bus.Publish(event.Change{Workspace: f.d.Workspace, Kind: KindOnboarding, Agent: AgentID, Session: rec.SessionID})
	return nil
}

// Onboarding returns the workspace's onboarding state. A run that ended
// done makes it done.
func (f *Foreman) Onboarding(ctx context.Context) (Onboarding, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.onboardingLocked(ctx)
}

func (f *Foreman) onboardingLocked(ctx context.Context) (Onboarding, error) {
	rec, err := f.readOnboarding(ctx)
	if err != nil {
		return Onboarding{}, err
	}
	o := Onboarding{State: rec.State, AgentID: AgentID, SessionID: rec.SessionID, RunID: rec.RunID}
	if rec.State != OnboardingRunning || rec.RunID == "" {
		return o, nil
	}
	r, err := f.d.Runs.Get(ctx, rec.RunID)
	if err != nil {
		return o, err
	}
	o.RunStatus = string(r.Status)
	switch r.Status {
	case run.Done:
		rec.State, o.State = OnboardingDone, OnboardingDone
		return o, f.writeOnboarding(ctx, rec)
	case run.Failed, run.Cancelled:
		o.Stopped, o.Error = true, r.Error
		if _, _, _, err := f.d.Models.Pick("", ""); err != nil {
			o.NeedsModel = true
		}
	case run.Paused:
		if p, err := f.d.Runs.OpenPauseOf(ctx, r.ID); err == nil && p != nil {
			o.CardID = p.ID
		}
	}
	return o, nil
}

// StartOnboarding starts the Foreman's onboarding of w: a new run that
// opens with its first card; when one is under way, nothing changes; when
// it stopped (no model, a failure), a new run continues it in the same
// chat. After done or skipped it starts over: what it writes never
// replaces a page the person edited.
func (f *Foreman) StartOnboarding(ctx context.Context) (Onboarding, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cur, err := f.onboardingLocked(ctx)
	if err != nil {
		return Onboarding{}, err
	}
	rec, err := f.readOnboarding(ctx)
	if err != nil {
		return Onboarding{}, err
	}
	if cur.State == OnboardingRunning && !cur.Stopped {
		return cur, nil
	}
	if cur.State == OnboardingRunning && cur.Stopped && rec.SessionID != "" {
		r, err := f.d.Runs.Start(ctx, AgentID, rec.SessionID, run.SourceChat, onboardingResume, run.StartOptions{From: "Rerun"})
		if err != nil {
			return Onboarding{}, err
		}
		rec.RunID = r.ID
		if err := f.writeOnboarding(ctx, rec); err != nil {
			return Onboarding{}, err
		}
		f.log.Info("onboarding resumed", "run", r.ID)
		return f.onboardingLocked(ctx)
	}
	sess, err := f.d.Runs.NewSession(ctx, AgentID, run.SourceChat, "")
	if err != nil {
		return Onboarding{}, err
	}
	r, p, err := f.d.Runs.StartScripted(ctx, AgentID, sess.ID, run.ScriptedCard{
		Input: onboardingInput, Text: onboardingIntro, Kind: pause.Question, Request: onboardingCard(),
		Call: run.ToolCall{ID: "toolu_onboarding_" + strings.TrimPrefix(sess.ID, "ses_"), Name: "ask_question", Input: mustJSON(onboardingCard())},
	})
	if err != nil {
		return Onboarding{}, fmt.Errorf("start onboarding: %w", err)
	}
	rec = onboardingRecord{State: OnboardingRunning, SessionID: sess.ID, RunID: r.ID, FirstCard: p.ID}
	if err := f.writeOnboarding(ctx, rec); err != nil {
		return Onboarding{}, err
	}
	f.log.Info("onboarding started", "run", r.ID)
	f.watchLater()
	return f.onboardingLocked(ctx)
}

// SkipOnboarding ends w's onboarding: its run is cancelled with its open
// card. A finished onboarding stays done.
func (f *Foreman) SkipOnboarding(ctx context.Context) (Onboarding, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.skipLocked(ctx)
}

func (f *Foreman) skipLocked(ctx context.Context) (Onboarding, error) {
	cur, err := f.onboardingLocked(ctx)
	if err != nil {
		return Onboarding{}, err
	}
	if cur.State == OnboardingDone || cur.State == OnboardingSkipped {
		return cur, nil
	}
	rec, err := f.readOnboarding(ctx)
	if err != nil {
		return Onboarding{}, err
	}
	if rec.RunID != "" {
		if _, err := f.d.Runs.Cancel(ctx, rec.RunID); err != nil {
			return Onboarding{}, fmt.Errorf("skip onboarding: %w", err)
		}
	}
	rec.State = OnboardingSkipped
	if err := f.writeOnboarding(ctx, rec); err != nil {
		return Onboarding{}, err
	}
	f.log.Info("onboarding skipped")
	return f.onboardingLocked(ctx)
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
