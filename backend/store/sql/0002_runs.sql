-- Runs: every execution of an agent, as a durable state machine. Each step
-- (model turn, tool call, tool result, error, cancel, compaction) is a row
-- committed before the next action, so a restart resumes from the last one.

CREATE TABLE sessions (
	id            TEXT PRIMARY KEY,
	agent_id      TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	kind          TEXT NOT NULL,             -- chat | agent | api | schedule | trigger
	title         TEXT NOT NULL DEFAULT '',
	provider      TEXT NOT NULL DEFAULT '',  -- the conversation's model, '' = the agent's
	model         TEXT NOT NULL DEFAULT '',
	parent_run_id TEXT NOT NULL DEFAULT '',  -- for kind agent: the calling run
	created_at    TEXT NOT NULL,
	updated_at    TEXT NOT NULL
) STRICT;

CREATE INDEX sessions_agent ON sessions(agent_id, kind, updated_at);

CREATE TABLE runs (
	id                 TEXT PRIMARY KEY,
	agent_id           TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	session_id         TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	source             TEXT NOT NULL,        -- chat | agent | api | schedule | trigger
	parent_run_id      TEXT NOT NULL DEFAULT '',
	depth              INTEGER NOT NULL DEFAULT 0,
	status             TEXT NOT NULL,        -- queued | running | paused | done | failed | cancelled
	input              TEXT NOT NULL,
	output             TEXT NOT NULL DEFAULT '',
	error              TEXT NOT NULL DEFAULT '',
	provider           TEXT NOT NULL DEFAULT '',
	model              TEXT NOT NULL DEFAULT '',
	steps              INTEGER NOT NULL DEFAULT 0,
	input_tokens       INTEGER NOT NULL DEFAULT 0,
	output_tokens      INTEGER NOT NULL DEFAULT 0,
	cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
	cache_write_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd           REAL NOT NULL DEFAULT 0,
	cost_known         INTEGER NOT NULL DEFAULT 1,
	created_at         TEXT NOT NULL,
	started_at         TEXT,
	ended_at           TEXT
) STRICT;

CREATE INDEX runs_agent ON runs(agent_id, created_at);
CREATE INDEX runs_session ON runs(session_id, created_at);
CREATE INDEX runs_status ON runs(status, created_at);
CREATE INDEX runs_parent ON runs(parent_run_id) WHERE parent_run_id != '';

CREATE TABLE steps (
	run_id        TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	seq           INTEGER NOT NULL,
	kind          TEXT NOT NULL,  -- input | model | tool_call | tool_result | error | cancel | compact | note
	data          TEXT NOT NULL,  -- JSON, by kind
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd      REAL NOT NULL DEFAULT 0,
	started_at    TEXT NOT NULL,
	ended_at      TEXT NOT NULL,
	PRIMARY KEY (run_id, seq)
) STRICT;
