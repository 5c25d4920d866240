-- The Brain: the workspace's pages about the company (what it sells, to whom,
-- how it works), which every agent reads. Each page keeps every version of
-- itself; deleting a page only marks it (deleted_at), so its history stays
-- readable and onboarding can tell a page the person removed from one that
-- never existed.

CREATE TABLE brain_pages (
	id               TEXT PRIMARY KEY,             -- "bp_…"
	slug             TEXT NOT NULL,                -- from the title, unique among live pages
	title            TEXT NOT NULL,
	title_key        TEXT NOT NULL,                -- lower-cased title: titles are unique case-insensitively
	summary          TEXT NOT NULL DEFAULT '',     -- explicit summary; '' = the body's first paragraph
	body             TEXT NOT NULL,                -- markdown, the current version
	version          INTEGER NOT NULL,             -- the current version's number
	edited_by_person INTEGER NOT NULL DEFAULT 0,   -- a person wrote some version (or deleted it)
	created_at       TEXT NOT NULL,
	updated_at       TEXT NOT NULL,
	updated_by       TEXT NOT NULL,                -- "person", "agent:@handle", "foreman"
	deleted_at       TEXT,
	deleted_by       TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE UNIQUE INDEX brain_pages_title ON brain_pages(title_key) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX brain_pages_slug ON brain_pages(slug) WHERE deleted_at IS NULL;

-- Every version of every page, the current one included.
CREATE TABLE brain_versions (
	page_id    TEXT NOT NULL REFERENCES brain_pages(id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,
	title      TEXT NOT NULL,
	summary    TEXT NOT NULL,
	body       TEXT NOT NULL,
	author     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (page_id, version)
) STRICT;
