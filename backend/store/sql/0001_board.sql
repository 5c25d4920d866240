-- The board: the workspace's own settings, its boxes, and its agents with every
-- version of their souls.

CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

CREATE TABLE boxes (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	position   INTEGER NOT NULL,
	created_at TEXT NOT NULL
) STRICT;

CREATE TABLE agents (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	handle       TEXT NOT NULL UNIQUE,
	-- RESTRICT: a box with agents on it cannot be deleted.
	box_id       TEXT NOT NULL REFERENCES boxes(id) ON DELETE RESTRICT,
	provider     TEXT NOT NULL DEFAULT '',
	model        TEXT NOT NULL DEFAULT '',
	capabilities TEXT NOT NULL DEFAULT '[]', -- JSON array of family ids
	created_at   TEXT NOT NULL,
	updated_at   TEXT NOT NULL
) STRICT;

CREATE INDEX agents_box ON agents(box_id);

CREATE TABLE souls (
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	version    INTEGER NOT NULL,
	body       TEXT NOT NULL,
	created_at TEXT NOT NULL,
	PRIMARY KEY (agent_id, version)
) STRICT;
