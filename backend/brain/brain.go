// Package brain owns the workspace's Brain: markdown pages about the company
// (what it sells, to whom, how it works) that every agent of the workspace
// reads. A page has a title unique per workspace (case does not count), a
// slug, a body of at most 64 KiB and a short summary; every edit is kept as a
// version that says who wrote it ("person", "agent:@handle", "foreman").
//
// Agents never write here directly: they propose an edit that a person
// approves (the runtime's approval card); the Foreman writes during
// onboarding with Save and UnlessPersonEdited, so it never overwrites what a
// person wrote. Deleting a page marks it deleted and keeps its history.
package brain

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

// Events published on the bus after each committed change; ID is the page's.
const (
	EventCreated = "brain.page.created"
	EventUpdated = "brain.page.updated"
	EventDeleted = "brain.page.deleted"
)

// ErrPersonEdited is the conflict Save reports, with UnlessPersonEdited, for
// a page a person wrote or deleted: onboarding must ask before changing it.
// Such an error is also a fault.ErrConflict.
var ErrPersonEdited = errors.New("edited by a person")

type personEdited string

func (e personEdited) Error() string { return string(e) }
func (e personEdited) Is(target error) bool {
	return target == ErrPersonEdited || target == fault.ErrConflict
}

// Summary is a page in a list: everything but the body.
type Summary struct {
	ID    string `json:"id"`
	Slug  string `json:"slug"`
	Title string `json:"title"`
	// Summary is what agents read in the index: the explicit summary, or
	// the body's first paragraph.
	Summary string `json:"summary"`
	// OwnSummary is the explicit summary, "" when it is derived.
	OwnSummary string `json:"own_summary"`
	Version    int    `json:"version"`
	Size       int    `json:"size"` // bytes of the body
	// EditedByPerson is set once a person wrote a version (or deleted the
	// page): the Foreman changes it only with their approval.
	EditedByPerson bool      `json:"edited_by_person"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
	UpdatedBy      Author    `json:"updated_by"`
}

// Page is a page with its body.
type Page struct {
	Summary
	Body string `json:"body"`
}

// Version is one saved version of a page.
type Version struct {
	Version   int       `json:"version"`
	Title     string    `json:"title"`
	Summary   string    `json:"summary"` // the explicit summary of that version
	Body      string    `json:"body"`
	Author    Author    `json:"author"`
	CreatedAt time.Time `json:"created_at"`
}

// Service reads and writes the Brain of one workspace.
type Service struct {
	db        *store.DB
	workspace string
	bus       *event.Bus
	now       func() time.Time
}

// New returns the Brain of the workspace whose database is db; changes are
// announced on bus (which may be nil).
func New(db *store.DB, workspaceID string, bus *event.Bus) *Service {
	return &Service{db: db, workspace: workspaceID, bus: bus, now: time.Now}
}

func (s *Service) publish(kind, id string) {
	if s.bus != nil {
		s.bus.Publish(event.Change{Workspace: s.workspace, Kind: kind, ID: id})
	}
}

const columns = `id, slug, title, summary, body, version, edited_by_person, created_at, updated_at, updated_by`

func scanPage(row store.Scanner) (Page, error) {
	var p Page
	var created, updated string
	err := row.Scan(&p.ID, &p.Slug, &p.Title, &p.OwnSummary, &p.Body, &p.Version, &p.EditedByPerson, &created, &updated, &p.UpdatedBy)
	p.CreatedAt, p.UpdatedAt = store.ParseTime(created), store.ParseTime(updated)
	p.Summary.Summary = Summarize(p.OwnSummary, p.Body)
	p.Size = len(p.Body)
	return p, err
}

// List returns every live page, by title.
func (s *Service) List(ctx context.Context) ([]Summary, error) {
	pages, err := s.Pages(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Summary, len(pages))
	for i, p := range pages {
		out[i] = p.Summary
	}
	return out, nil
}

// Pages returns every live page with its body, by title: what the prompt
// is assembled from.
func (s *Service) Pages(ctx context.Context) ([]Page, error) {
	pages, err := store.Query(ctx, s.db, scanPage, `SELECT `+columns+` FROM brain_pages WHERE deleted_at IS NULL ORDER BY title_key`)
	if err != nil {
		return nil, fmt.Errorf("list Brain pages: %w", err)
	}
	return pages, nil
}

// Get returns a live page by id ("bp_…"), slug or title (case does not
// count).
func (s *Service) Get(ctx context.Context, ref string) (Page, error) {
	return s.get(ctx, s.db, ref)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// get finds a live page by id, title or slug, in that order: a title that
// is also another page's slug names the titled page.
func (s *Service) get(ctx context.Context, q querier, ref string) (Page, error) {
	ref = strings.TrimSpace(ref)
	key := titleKey(strings.Join(strings.Fields(ref), " "))
	p, err := scanPage(q.QueryRowContext(ctx, `SELECT `+columns+` FROM brain_pages WHERE deleted_at IS NULL
		AND (id = ?1 OR slug = ?1 OR title_key = ?2) ORDER BY id = ?1 DESC, title_key = ?2 DESC LIMIT 1`, ref, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Page{}, fault.NotFound("the Brain has no page %q", ref)
	}
	if err != nil {
		return Page{}, fmt.Errorf("get Brain page %q: %w", ref, err)
	}
	return p, nil
}

// byTitle finds the live page titled title (any case): Save writes by
// title, never by slug, so a new title that reads like another page's slug
// makes a new page instead of renaming that one.
func (s *Service) byTitle(ctx context.Context, q querier, title string) (Page, error) {
	p, err := scanPage(q.QueryRowContext(ctx, `SELECT `+columns+` FROM brain_pages WHERE deleted_at IS NULL AND title_key = ?`, titleKey(title)))
	if errors.Is(err, sql.ErrNoRows) {
		return Page{}, fault.NotFound("the Brain has no page titled %q", title)
	}
	if err != nil {
		return Page{}, fmt.Errorf("get Brain page %q: %w", title, err)
	}
	return p, nil
}

// Versions returns every version of a page, newest first. ref is as for
// Get; a deleted page's history is reachable by its id.
func (s *Service) Versions(ctx context.Context, ref string) ([]Version, error) {
	id, err := s.idOf(ctx, ref)
	if err != nil {
		return nil, err
	}
	vs, err := store.Query(ctx, s.db, scanVersion, `SELECT version, title, summary, body, author, created_at
		FROM brain_versions WHERE page_id = ? ORDER BY version DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("list versions of Brain page %q: %w", ref, err)
	}
	return vs, nil
}

// Version returns version n of a page.
func (s *Service) Version(ctx context.Context, ref string, n int) (Version, error) {
	id, err := s.idOf(ctx, ref)
	if err != nil {
		return Version{}, err
	}
	v, err := scanVersion(s.db.QueryRowContext(ctx, `SELECT version, title, summary, body, author, created_at
		FROM brain_versions WHERE page_id = ? AND version = ?`, id, n))
	if errors.Is(err, sql.ErrNoRows) {
		return Version{}, fault.NotFound("Brain page %q has no version %d", ref, n)
	}
	if err != nil {
		return Version{}, fmt.Errorf("get version %d of Brain page %q: %w", n, ref, err)
	}
	return v, nil
}

func scanVersion(row store.Scanner) (Version, error) {
	var v Version
	var created string
	err := row.Scan(&v.Version, &v.Title, &v.Summary, &v.Body, &v.Author, &created)
	v.CreatedAt = store.ParseTime(created)
	return v, err
}

// idOf resolves ref to a page id: a live page by id, slug or title, or a
// deleted page by its id.
func (s *Service) idOf(ctx context.Context, ref string) (string, error) {
	if p, err := s.Get(ctx, ref); err == nil {
		return p.ID, nil
	} else if !errors.Is(err, fault.ErrNotFound) {
		return "", err
	}
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM brain_pages WHERE id = ?`, strings.TrimSpace(ref)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fault.NotFound("the Brain has no page %q", ref)
	}
	return id, err
}
