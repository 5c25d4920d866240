package brain

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/rerun-build/rerun-desktop/backend/fault"
	"github.com/rerun-build/rerun-desktop/backend/store"
)

// NewPage is a page to create.
type NewPage struct {
	Title   string `json:"title"`
	Body    string `json:"body"`
	Summary string `json:"summary"` // "" = the body's first paragraph
	By      Author `json:"-"`
}

// Change edits a page; nil fields stay as they are.
type Change struct {
	Title   *string `json:"title"`
	Body    *string `json:"body"`
	Summary *string `json:"summary"` // "" = the body's first paragraph from now on
	By      Author  `json:"-"`
	// BaseVersion is the version the editor started from. When the page
	// has moved on since, the change is refused with a conflict and nothing
	// is written; 0 skips the check.
	BaseVersion int `json:"base_version"`
}

// Write is what Save writes: the page titled Title, created when there is
// none.
type Write struct {
	Title       string
	Body        string
	Summary     *string // nil keeps the page's explicit summary
	By          Author
	BaseVersion int // as in Change; 0 skips the check
	// UnlessPersonEdited refuses, with ErrPersonEdited, to change a page a
	// person wrote, or to bring back one a person deleted: what onboarding
	// writes must never silently replace the person's own words.
	UnlessPersonEdited bool
}

// Create adds a page. A live page with the same title (case does not count)
// is a conflict.
func (s *Service) Create(ctx context.Context, n NewPage) (Page, error) {
	var p Page
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = s.create(ctx, tx, n)
		return err
	})
	if err != nil {
		return Page{}, wrap("create Brain page", err)
	}
	s.publish(EventCreated, p.ID)
	return p, nil
}

func (s *Service) create(ctx context.Context, tx *sql.Tx, n NewPage) (Page, error) {
	title, err := CleanTitle(n.Title)
	if err != nil {
		return Page{}, err
	}
	if err := checkBody(n.Body); err != nil {
		return Page{}, err
	}
	summary, err := cleanSummary(n.Summary)
	if err != nil {
		return Page{}, err
	}
	if err := n.By.check(); err != nil {
		return Page{}, err
	}
	if err := s.titleFree(ctx, tx, title, ""); err != nil {
		return Page{}, err
	}
	slug, err := s.freeSlug(ctx, tx, Slug(title), "")
	if err != nil {
		return Page{}, err
	}
	now := s.now().UTC()
	ts := store.FormatTime(now)
	id := store.NewID("bp")
	if _, err := tx.ExecContext(ctx, `INSERT INTO brain_pages (id, slug, title, title_key, summary, body, version, edited_by_person,
		created_at, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)`,
		id, slug, title, titleKey(title), summary, n.Body, n.By == Person, ts, ts, n.By); err != nil {
		return Page{}, err
	}
	if err := addVersion(ctx, tx, id, 1, title, summary, n.Body, n.By, ts); err != nil {
		return Page{}, err
	}
	return s.get(ctx, tx, id)
}

// Update changes a page (ref as for Get) and keeps the new version. A
// change that changes nothing writes nothing.
func (s *Service) Update(ctx context.Context, ref string, c Change) (Page, error) {
	var p Page
	var changed bool
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := s.get(ctx, tx, ref)
		if err != nil {
			return err
		}
		p, changed, err = s.update(ctx, tx, cur, c)
		return err
	})
	if err != nil {
		return Page{}, wrap("update Brain page", err)
	}
	if changed {
		s.publish(EventUpdated, p.ID)
	}
	return p, nil
}

func (s *Service) update(ctx context.Context, tx *sql.Tx, cur Page, c Change) (Page, bool, error) {
	if err := c.By.check(); err != nil {
		return Page{}, false, err
	}
	if c.BaseVersion < 0 {
		return Page{}, false, fault.Invalid("base_version %d is not a version; send the version you started editing from", c.BaseVersion)
	}
	if c.BaseVersion > 0 && c.BaseVersion != cur.Version {
		return Page{}, false, fault.Conflict("%q changed while you edited it: it is at version %d (saved by %s at %s) and you started from version %d. "+
			"Nothing was saved: reload the page, apply your edit to the new text, and save again.",
			cur.Title, cur.Version, cur.UpdatedBy, cur.UpdatedAt.Format("2006-01-02 15:04 UTC"), c.BaseVersion)
	}
	title, body, summary := cur.Title, cur.Body, cur.OwnSummary
	var err error
	if c.Title != nil {
		if title, err = CleanTitle(*c.Title); err != nil {
			return Page{}, false, err
		}
	}
	if c.Body != nil {
		if err := checkBody(*c.Body); err != nil {
			return Page{}, false, err
		}
		body = *c.Body
	}
	if c.Summary != nil {
		if summary, err = cleanSummary(*c.Summary); err != nil {
			return Page{}, false, err
		}
	}
	if title == cur.Title && body == cur.Body && summary == cur.OwnSummary {
		return cur, false, nil
	}
	slug := cur.Slug
	if titleKey(title) != titleKey(cur.Title) {
		if err := s.titleFree(ctx, tx, title, cur.ID); err != nil {
			return Page{}, false, err
		}
		if slug, err = s.freeSlug(ctx, tx, Slug(title), cur.ID); err != nil {
			return Page{}, false, err
		}
	}
	ts := store.FormatTime(s.now())
	next := cur.Version + 1
	if _, err := tx.ExecContext(ctx, `UPDATE brain_pages SET slug = ?, title = ?, title_key = ?, summary = ?, body = ?, version = ?,
		edited_by_person = edited_by_person OR ?, updated_at = ?, updated_by = ? WHERE id = ?`,
		slug, title, titleKey(title), summary, body, next, c.By == Person, ts, c.By, cur.ID); err != nil {
		return Page{}, false, err
	}
	if err := addVersion(ctx, tx, cur.ID, next, title, summary, body, c.By, ts); err != nil {
		return Page{}, false, err
	}
	p, err := s.get(ctx, tx, cur.ID)
	return p, true, err
}

// Save writes the page titled w.Title: a new version of it, or a new page
// when there is none. It is how approved agent proposals and the Foreman
// write.
func (s *Service) Save(ctx context.Context, w Write) (Page, error) {
	title, err := CleanTitle(w.Title)
	if err != nil {
		return Page{}, err
	}
	var p Page
	var kind string
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := s.byTitle(ctx, tx, title)
		switch {
		case errors.Is(err, fault.ErrNotFound):
			if w.UnlessPersonEdited {
				var by string
				err := tx.QueryRowContext(ctx, `SELECT deleted_by FROM brain_pages WHERE title_key = ? AND deleted_at IS NOT NULL
					AND deleted_by = ? LIMIT 1`, titleKey(title), Person).Scan(&by)
				if err == nil {
					return personEdited(fmt.Sprintf("the person deleted the Brain page %q; ask them before writing it again", title))
				} else if !errors.Is(err, sql.ErrNoRows) {
					return err
				}
			}
			if w.BaseVersion > 0 {
				return fault.Conflict("%q was deleted or renamed since version %d; nothing was saved. Read the Brain again and propose the page anew.", title, w.BaseVersion)
			}
			summary := ""
			if w.Summary != nil {
				summary = *w.Summary
			}
			p, err = s.create(ctx, tx, NewPage{Title: title, Body: w.Body, Summary: summary, By: w.By})
			kind = EventCreated
			return err
		case err != nil:
			return err
		}
		if w.UnlessPersonEdited && cur.EditedByPerson {
			return personEdited(fmt.Sprintf("the person edited the Brain page %q; ask them before changing it", cur.Title))
		}
		var changed bool
		p, changed, err = s.update(ctx, tx, cur, Change{Title: &title, Body: &w.Body, Summary: w.Summary, By: w.By, BaseVersion: w.BaseVersion})
		if changed {
			kind = EventUpdated
		}
		return err
	})
	if err != nil {
		return Page{}, wrap("save Brain page", err)
	}
	if kind != "" {
		s.publish(kind, p.ID)
	}
	return p, nil
}

// Delete marks a page deleted. Its versions stay (Versions by its id), its
// title and slug are free again, and a page a person deleted counts as
// edited by them (Save with UnlessPersonEdited will not bring it back).
func (s *Service) Delete(ctx context.Context, ref string, by Author) error {
	if err := by.check(); err != nil {
		return err
	}
	var id string
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := s.get(ctx, tx, ref)
		if err != nil {
			return err
		}
		id = cur.ID
		_, err = tx.ExecContext(ctx, `UPDATE brain_pages SET deleted_at = ?, deleted_by = ?, edited_by_person = edited_by_person OR ?
			WHERE id = ?`, store.FormatTime(s.now()), by, by == Person, id)
		return err
	})
	if err != nil {
		return wrap("delete Brain page", err)
	}
	s.publish(EventDeleted, id)
	return nil
}

// titleFree reports a conflict when a live page other than self has title.
func (s *Service) titleFree(ctx context.Context, tx *sql.Tx, title, self string) error {
	var other string
	err := tx.QueryRowContext(ctx, `SELECT title FROM brain_pages WHERE deleted_at IS NULL AND title_key = ? AND id != ?`, titleKey(title), self).Scan(&other)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	return fault.Conflict("the Brain already has a page titled %q; edit that page, or pick another title", other)
}

// freeSlug returns base, or base-2, base-3… when a live page other than
// self has it.
func (s *Service) freeSlug(ctx context.Context, tx *sql.Tx, base, self string) (string, error) {
	for i := 1; ; i++ {
		slug := base
		if i > 1 {
			slug = fmt.Sprintf("%s-%d", base, i)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM brain_pages WHERE deleted_at IS NULL AND slug = ? AND id != ?`, slug, self).Scan(&n); err != nil {
			return "", err
		}
		if n == 0 {
			return slug, nil
		}
	}
}

func addVersion(ctx context.Context, tx *sql.Tx, id string, version int, title, summary, body string, by Author, ts string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO brain_versions (page_id, version, title, summary, body, author, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, id, version, title, summary, body, by, ts)
	return err
}

// wrap keeps a fault's message for the person and adds context for logs.
func wrap(what string, err error) error {
	if fault.Is(err) || errors.Is(err, ErrPersonEdited) {
		return err
	}
	if strings.Contains(err.Error(), "UNIQUE constraint failed") {
		// Two writers raced past titleFree; the loser is told plainly.
		return fault.Conflict("another page took that title or address at the same moment; reload the Brain and try again")
	}
	return fmt.Errorf("%s: %w", what, err)
}
