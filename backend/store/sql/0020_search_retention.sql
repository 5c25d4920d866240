-- Search and retention.
--
-- Search: a full-text index (FTS5) over what runs did and what agents told
-- the person: run inputs, model messages, tool calls and results, errors,
-- notes and notifications. The text indexed is the text stored, and the
-- recorder stores it masked (run/tools.go, run/start.go): no secret value
-- is indexed. Triggers keep the index in the writing transaction; deleting
-- a run, an agent or a step (pruning, a cascade) deletes its entries.
--
-- search_docs names each entry; its n is the FTS rowid (an INTEGER PRIMARY
-- KEY survives VACUUM, steps' implicit rowid may not). The index is
-- contentless: the text lives once, in steps and notifications, and
-- search_step_text extracts it again for snippets.

CREATE VIEW search_step_text AS
SELECT run_id, seq, kind, ended_at AS at,
	coalesce(CASE WHEN json_valid(data) THEN CASE kind
		WHEN 'input' THEN json_extract(data, '$.text')
		WHEN 'model' THEN json_extract(data, '$.text')
		WHEN 'tool_call' THEN json_extract(data, '$.name') || ' ' || coalesce(json_extract(data, '$.input'), '')
		WHEN 'tool_result' THEN json_extract(data, '$.name') || ' ' || coalesce(json_extract(data, '$.output'), '')
		WHEN 'error' THEN json_extract(data, '$.message')
		WHEN 'note' THEN json_extract(data, '$.text')
	END END, '') AS text
FROM steps;

CREATE TABLE search_docs (
	n               INTEGER PRIMARY KEY,
	agent_id        TEXT NOT NULL,
	run_id          TEXT NOT NULL DEFAULT '',  -- '' for a notification of no run
	seq             INTEGER NOT NULL DEFAULT 0, -- the step; 0 for a notification
	notification_id TEXT NOT NULL DEFAULT '',
	kind            TEXT NOT NULL,             -- the step's kind, or 'notification'
	created_at      TEXT NOT NULL
) STRICT;

CREATE UNIQUE INDEX search_docs_step ON search_docs(run_id, seq) WHERE notification_id = '';
CREATE UNIQUE INDEX search_docs_notification ON search_docs(notification_id) WHERE notification_id != '';
CREATE INDEX search_docs_agent ON search_docs(agent_id, n);

CREATE VIRTUAL TABLE search_fts USING fts5(
	text,
	content='',
	contentless_delete=1,
	-- no porter stemming: a bare word matches as a prefix (search as you
	-- type), and stems would cut the prefix short ("deploym" ≠ "deploy").
	tokenize='unicode61 remove_diacritics 2'
);

CREATE TRIGGER search_steps_insert AFTER INSERT ON steps BEGIN
	INSERT INTO search_docs (agent_id, run_id, seq, kind, created_at)
	SELECT r.agent_id, v.run_id, v.seq, v.kind, v.at FROM search_step_text v JOIN runs r ON r.id = v.run_id
	WHERE v.run_id = NEW.run_id AND v.seq = NEW.seq AND v.text != '';
	INSERT INTO search_fts (rowid, text)
	SELECT d.n, v.text FROM search_docs d JOIN search_step_text v ON v.run_id = d.run_id AND v.seq = d.seq
	WHERE d.run_id = NEW.run_id AND d.seq = NEW.seq AND d.notification_id = '';
END;

CREATE TRIGGER search_steps_delete AFTER DELETE ON steps BEGIN
	DELETE FROM search_fts WHERE rowid IN
		(SELECT n FROM search_docs WHERE run_id = OLD.run_id AND seq = OLD.seq AND notification_id = '');
	DELETE FROM search_docs WHERE run_id = OLD.run_id AND seq = OLD.seq AND notification_id = '';
END;

-- Retention trims tool outputs in place: the step stays, its entry follows.
CREATE TRIGGER search_steps_update AFTER UPDATE OF data ON steps BEGIN
	DELETE FROM search_fts WHERE rowid IN
		(SELECT n FROM search_docs WHERE run_id = OLD.run_id AND seq = OLD.seq AND notification_id = '');
	DELETE FROM search_docs WHERE run_id = OLD.run_id AND seq = OLD.seq AND notification_id = '';
	INSERT INTO search_docs (agent_id, run_id, seq, kind, created_at)
	SELECT r.agent_id, v.run_id, v.seq, v.kind, v.at FROM search_step_text v JOIN runs r ON r.id = v.run_id
	WHERE v.run_id = NEW.run_id AND v.seq = NEW.seq AND v.text != '';
	INSERT INTO search_fts (rowid, text)
	SELECT d.n, v.text FROM search_docs d JOIN search_step_text v ON v.run_id = d.run_id AND v.seq = d.seq
	WHERE d.run_id = NEW.run_id AND d.seq = NEW.seq AND d.notification_id = '';
END;

CREATE TRIGGER search_notifications_insert AFTER INSERT ON notifications BEGIN
	INSERT INTO search_docs (agent_id, run_id, notification_id, kind, created_at)
	VALUES (NEW.agent_id, NEW.run_id, NEW.id, 'notification', NEW.created_at);
	INSERT INTO search_fts (rowid, text)
	SELECT n, NEW.title || char(10) || NEW.body FROM search_docs WHERE notification_id = NEW.id;
END;

CREATE TRIGGER search_notifications_delete AFTER DELETE ON notifications BEGIN
	DELETE FROM search_fts WHERE rowid IN (SELECT n FROM search_docs WHERE notification_id = OLD.id);
	DELETE FROM search_docs WHERE notification_id = OLD.id;
END;

CREATE TRIGGER search_notifications_update AFTER UPDATE OF title, body ON notifications BEGIN
	DELETE FROM search_fts WHERE rowid IN (SELECT n FROM search_docs WHERE notification_id = OLD.id);
	INSERT INTO search_fts (rowid, text)
	SELECT n, NEW.title || char(10) || NEW.body FROM search_docs WHERE notification_id = NEW.id;
END;

-- Backfill, oldest first, so newer entries have higher n (search lists
-- newest first by n).
INSERT INTO search_docs (agent_id, run_id, seq, notification_id, kind, created_at)
SELECT agent_id, run_id, seq, notification_id, kind, at FROM (
	SELECT r.agent_id, v.run_id, v.seq, '' AS notification_id, v.kind, v.at FROM search_step_text v
	JOIN runs r ON r.id = v.run_id WHERE v.text != ''
	UNION ALL
	SELECT agent_id, run_id, 0, id, 'notification', created_at FROM notifications
) ORDER BY at, run_id, seq;
INSERT INTO search_fts (rowid, text)
SELECT d.n, v.text FROM search_docs d JOIN search_step_text v ON v.run_id = d.run_id AND v.seq = d.seq
WHERE d.notification_id = '';
INSERT INTO search_fts (rowid, text)
SELECT d.n, nt.title || char(10) || nt.body FROM search_docs d JOIN notifications nt ON nt.id = d.notification_id;

-- Retention: how long this workspace keeps runs (keep_days, 0 = forever)
-- and after how many days tool outputs longer than trim_chars are cut to
-- that length (trim_days, 0 = never). One row. trimmed_through is how far
-- (runs' created_at) the trimming got: older runs are done.
CREATE TABLE retention (
	id              INTEGER PRIMARY KEY CHECK (id = 1),
	keep_days       INTEGER NOT NULL DEFAULT 90 CHECK (keep_days >= 0),
	trim_days       INTEGER NOT NULL DEFAULT 30 CHECK (trim_days >= 0),
	trim_chars      INTEGER NOT NULL DEFAULT 4096 CHECK (trim_chars >= 256),
	trimmed_through TEXT NOT NULL DEFAULT '',
	updated_at      TEXT NOT NULL DEFAULT ''
) STRICT;

INSERT INTO retention (id) VALUES (1);

-- Pinned runs are never pruned.
CREATE TABLE run_pins (
	run_id    TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	pinned_at TEXT NOT NULL
) STRICT;
