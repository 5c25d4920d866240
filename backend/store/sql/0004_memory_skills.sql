-- Memories: short durable facts owned by one agent, with a strength that fades
-- unless recalled (backend/memory documents the formula), and every version of
-- each agent's SKILL.md files (the skill folders themselves live on disk).

CREATE TABLE memories (
	-- n is the FTS5 rowid: an INTEGER PRIMARY KEY never changes on VACUUM,
	-- unlike an implicit rowid, so the external-content index stays valid.
	n                INTEGER PRIMARY KEY,
	id               TEXT NOT NULL UNIQUE,
	agent_id         TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	text             TEXT NOT NULL,
	source_run_id    TEXT NOT NULL DEFAULT '',  -- '' = written by a person
	source_step      INTEGER NOT NULL DEFAULT 0,
	state            TEXT NOT NULL DEFAULT 'active', -- active | retired | superseded
	supersedes       TEXT NOT NULL DEFAULT '',  -- id of the memory this one replaced
	superseded_by    TEXT NOT NULL DEFAULT '',
	strength         REAL NOT NULL,             -- as of reinforced_at
	recalls          INTEGER NOT NULL DEFAULT 0,
	reinforced_at    TEXT NOT NULL,
	last_recalled_at TEXT,
	embed_model      TEXT NOT NULL DEFAULT '',  -- model of its vector in the vector store, '' = none
	created_at       TEXT NOT NULL,
	updated_at       TEXT NOT NULL
) STRICT;

CREATE INDEX memories_agent ON memories(agent_id, state, created_at);
CREATE INDEX memories_embed ON memories(embed_model, state);

-- Keyword recall: an external-content FTS5 index over memories.text, kept in
-- sync by triggers, so it changes in the same transaction as the row.
CREATE VIRTUAL TABLE memories_fts USING fts5(
	text,
	content='memories',
	content_rowid='n',
	tokenize='porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
	INSERT INTO memories_fts(rowid, text) VALUES (new.n, new.text);
END;

CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
	INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.n, old.text);
END;

CREATE TRIGGER memories_fts_update AFTER UPDATE OF text ON memories BEGIN
	INSERT INTO memories_fts(memories_fts, rowid, text) VALUES ('delete', old.n, old.text);
	INSERT INTO memories_fts(rowid, text) VALUES (new.n, new.text);
END;

-- Every saved version of every skill's SKILL.md, the current one included.
-- Deleting a skill keeps its versions; deleting the agent removes them.
CREATE TABLE skill_versions (
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	version    INTEGER NOT NULL,
	body       TEXT NOT NULL,  -- the whole SKILL.md
	created_at TEXT NOT NULL,
	PRIMARY KEY (agent_id, name, version)
) STRICT;
