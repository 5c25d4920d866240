// Package search finds what agents did and said: full-text search (SQLite
// FTS5) over run inputs, model messages, tool calls and results, errors,
// notes and notifications, per agent or across the workspace.
//
// The index (search_docs and search_fts, migration 0020) is kept by
// triggers in the transaction of every write of a step or a notification,
// and holds the text as stored (a queued run's input step is stored, and
// so found, once the run leaves the queue: migration 0025): masked by the run recorder, so no secret
// value is indexed. Snippets are masked again on the way out, for values
// that became variables after the text was stored.
package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// Redactor masks secret values in text.
type Redactor interface {
	Redact(s string) string
}

// Service searches one workspace's database.
type Service struct {
	db   *store.DB
	vars Redactor // nil: nothing to mask
}

// New returns the search of db; vars masks snippets (nil: none).
func New(db *store.DB, vars Redactor) *Service { return &Service{db: db, vars: vars} }

// Options are a search and its filters.
type Options struct {
	Query   string
	AgentID string    // only this agent's
	Source  string    // only runs started so: chat, api, agent, schedule, trigger
	Status  string    // only runs in this status
	Since   time.Time // only entries at or after; zero: no bound
	Until   time.Time // only entries before; zero: no bound
	Before  int64     // paging: only hits older than this cursor (Hit.N)
	Limit   int       // default 50, at most 200
}

// Hit is one step or notification that matches.
type Hit struct {
	N              int64     `json:"n"` // the cursor to page on (Options.Before)
	Kind           string    `json:"kind"`
	AgentID        string    `json:"agent_id"`
	RunID          string    `json:"run_id,omitempty"`
	Seq            int       `json:"seq,omitempty"`
	NotificationID string    `json:"notification_id,omitempty"`
	Source         string    `json:"source,omitempty"`
	Status         string    `json:"status,omitempty"`
	At             time.Time `json:"at"`
	Snippet        string    `json:"snippet"`
}

// Result is a page of hits, newest first.
type Result struct {
	Hits  []Hit    `json:"hits"`
	Terms []string `json:"terms"` // what to highlight in the snippets
	More  bool     `json:"more"`  // older hits remain: page with Before = the last N
}

// Sources and statuses a filter may name.
var (
	Sources  = []string{"chat", "api", "agent", "schedule", "trigger"}
	Statuses = []string{"queued", "running", "paused", "done", "failed", "cancelled"}
)

// Search returns the entries matching o, newest first.
func (s *Service) Search(ctx context.Context, o Options) (Result, error) {
	q, err := Parse(o.Query)
	if err != nil {
		return Result{}, err
	}
	if o.Source != "" && !oneOf(o.Source, Sources) {
		return Result{}, fault.Invalid("source %q is not one of %s", o.Source, strings.Join(Sources, ", "))
	}
	if o.Status != "" && !oneOf(o.Status, Statuses) {
		return Result{}, fault.Invalid("status %q is not one of %s", o.Status, strings.Join(Statuses, ", "))
	}
	switch {
	case o.Limit == 0:
		o.Limit = 50
	case o.Limit < 0 || o.Limit > 200:
		return Result{}, fault.Invalid("limit must be between 1 and 200 (default 50)")
	}
	sqlq := `SELECT d.n, d.kind, d.agent_id, d.run_id, d.seq, d.notification_id, d.created_at,
		coalesce(r.source, ''), coalesce(r.status, '')
		FROM search_fts f JOIN search_docs d ON d.n = f.rowid LEFT JOIN runs r ON r.id = d.run_id
		WHERE search_fts MATCH ?`
	args := []any{q.Match}
	add := func(cond string, v any) { sqlq += " AND " + cond; args = append(args, v) }
	if o.AgentID != "" {
		add("d.agent_id = ?", o.AgentID)
	}
	if o.Source != "" {
		add("r.source = ?", o.Source)
	}
	if o.Status != "" {
		add("r.status = ?", o.Status)
	}
	if !o.Since.IsZero() {
		add("d.created_at >= ?", store.FormatTime(o.Since))
	}
	if !o.Until.IsZero() {
		add("d.created_at < ?", store.FormatTime(o.Until))
	}
	if o.Before > 0 {
		add("f.rowid < ?", o.Before)
	}
	sqlq += ` ORDER BY f.rowid DESC LIMIT ?`
	args = append(args, o.Limit+1)
	hits, err := store.Query(ctx, s.db, func(row store.Scanner) (Hit, error) {
		var h Hit
		var at string
		err := row.Scan(&h.N, &h.Kind, &h.AgentID, &h.RunID, &h.Seq, &h.NotificationID, &at, &h.Source, &h.Status)
		h.At = store.ParseTime(at)
		return h, err
	}, sqlq, args...)
	if err != nil {
		return Result{}, fmt.Errorf("search %q: %w", o.Query, err)
	}
	res := Result{Hits: hits, Terms: q.Terms}
	if len(hits) > o.Limit {
		res.Hits, res.More = hits[:o.Limit], true
	}
	for i := range res.Hits {
		text, err := s.text(ctx, res.Hits[i])
		if err != nil {
			return Result{}, err
		}
		if s.vars != nil {
			text = s.vars.Redact(text)
		}
		res.Hits[i].Snippet = Snippet(text, q.Terms)
	}
	return res, nil
}

// text is what was indexed for h.
func (s *Service) text(ctx context.Context, h Hit) (string, error) {
	var text string
	var err error
	if h.NotificationID != "" {
		err = s.db.QueryRowContext(ctx, `SELECT title || char(10) || body FROM notifications WHERE id = ?`, h.NotificationID).Scan(&text)
	} else {
		err = s.db.QueryRowContext(ctx, `SELECT text FROM search_step_text WHERE run_id = ? AND seq = ?`, h.RunID, h.Seq).Scan(&text)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil // deleted since the match
	}
	if err != nil {
		return "", fmt.Errorf("read search hit %d: %w", h.N, err)
	}
	return text, nil
}

// snippetLen is about how many characters of text a snippet shows.
const snippetLen = 200

// Snippet is the part of text around the first of terms it contains
// (case-insensitively), on one line; text's start when none is found (a
// stemmed match: "runs" for "running").
func Snippet(text string, terms []string) string {
	text = strings.Join(strings.Fields(text), " ")
	lower := strings.ToLower(text)
	at := -1
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if len(lower) != len(text) { // lowercasing changed byte offsets
		at = -1
	}
	start := 0
	if at > snippetLen/3 {
		start = at - snippetLen/3
		for start < len(text) && !utf8.RuneStart(text[start]) {
			start++
		}
	}
	end := min(len(text), start+snippetLen)
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	out := text[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}

func oneOf(s string, list []string) bool {
	for _, v := range list {
		if s == v {
			return true
		}
	}
	return false
}
