-- Automations: scheduled tasks (backend/schedule) and webhook triggers
-- (backend/trigger). Each schedule and each trigger has its own session
-- (kind schedule / trigger), so automated runs never pollute the chat.

-- Schedules: a cron expression in a time zone, or a one-off moment. The
-- firing loop is durable: next_fire_at is stored, and every fire claims its
-- (schedule_id, scheduled_for) key in schedule_fires in the same transaction
-- that moves next_fire_at on.
CREATE TABLE schedules (
	id              TEXT PRIMARY KEY,
	agent_id        TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	session_id      TEXT NOT NULL,            -- the schedule's own session (package run)
	name            TEXT NOT NULL,
	instruction     TEXT NOT NULL,
	kind            TEXT NOT NULL,            -- cron | once
	cron            TEXT NOT NULL DEFAULT '', -- 5 fields or @daily-style, without any TZ= prefix
	timezone        TEXT NOT NULL,            -- IANA name, e.g. Europe/Berlin
	at              TEXT,                     -- kind once: the moment it fires
	enabled         INTEGER NOT NULL DEFAULT 1,
	catch_up        TEXT NOT NULL DEFAULT 'once', -- once | skip
	catch_up_within INTEGER NOT NULL DEFAULT 86400, -- seconds
	next_fire_at    TEXT,                     -- NULL: will not fire (paused, or a one-off that is done)
	last_fired_at   TEXT,
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
) STRICT;

CREATE INDEX schedules_agent ON schedules(agent_id, created_at);
CREATE INDEX schedules_due ON schedules(next_fire_at) WHERE next_fire_at IS NOT NULL;

-- Fire history: one row per fire time, fired or missed, and per "run now".
CREATE TABLE schedule_fires (
	id            TEXT PRIMARY KEY,
	schedule_id   TEXT NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
	scheduled_for TEXT NOT NULL,             -- the fire time (for manual: when it was asked for)
	fired_at      TEXT NOT NULL,             -- when the loop recorded it
	outcome       TEXT NOT NULL,             -- fired | missed | manual
	run_id        TEXT NOT NULL DEFAULT '',  -- '' while being queued, and for missed
	note          TEXT NOT NULL DEFAULT '',  -- why it was late or missed
	error         TEXT NOT NULL DEFAULT ''   -- why no run could be queued
) STRICT;

-- The firing key: a fire time is claimed at most once, across racing loops
-- and restarts. "Run now" rows are outside it: they may share an instant.
CREATE UNIQUE INDEX schedule_fires_key ON schedule_fires(schedule_id, scheduled_for) WHERE outcome != 'manual';
CREATE INDEX schedule_fires_history ON schedule_fires(schedule_id, scheduled_for);
-- Claimed fires whose run id is not known yet (the process stopped in between).
CREATE INDEX schedule_fires_pending ON schedule_fires(fired_at) WHERE run_id = '' AND outcome != 'missed' AND error = '';

-- Triggers: a webhook URL /hooks/{token}. The token is the credential; only
-- its SHA-256 is kept, in trigger_tokens (the current one, and a rotated one
-- during its grace period).
CREATE TABLE triggers (
	id                 TEXT PRIMARY KEY,
	agent_id           TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	session_id         TEXT NOT NULL,              -- the trigger's own session (package run)
	name               TEXT NOT NULL,
	instruction        TEXT NOT NULL,
	methods            TEXT NOT NULL DEFAULT '["POST"]', -- JSON array of allowed HTTP methods
	token_prefix       TEXT NOT NULL,              -- the current token's first characters
	signing_secret_var TEXT NOT NULL DEFAULT '',   -- variable holding the Standard Webhooks secret; '' = unsigned
	enabled            INTEGER NOT NULL DEFAULT 1,
	rate_limit         INTEGER NOT NULL DEFAULT 60, -- calls per minute
	created_at         TEXT NOT NULL,
	updated_at         TEXT NOT NULL,
	rotated_at         TEXT
) STRICT;

CREATE INDEX triggers_agent ON triggers(agent_id, created_at);

CREATE TABLE trigger_tokens (
	hash       TEXT PRIMARY KEY,   -- hex SHA-256 of the whole token
	trigger_id TEXT NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
	prefix     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	expires_at TEXT                -- NULL: the current token; else a rotated one, valid until then
) STRICT;

CREATE INDEX trigger_tokens_trigger ON trigger_tokens(trigger_id);

-- Deliveries: every call of a trigger's URL that reached it (and each test).
CREATE TABLE trigger_deliveries (
	id              TEXT PRIMARY KEY,
	trigger_id      TEXT NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
	received_at     TEXT NOT NULL,
	status          INTEGER NOT NULL,           -- the HTTP status answered
	outcome         TEXT NOT NULL,              -- accepted | test | rejected | failed
	idempotency_key TEXT NOT NULL DEFAULT '',   -- webhook-id / Idempotency-Key of an accepted call; cleared after 24 h
	method          TEXT NOT NULL DEFAULT '',
	content_type    TEXT NOT NULL DEFAULT '',
	size            INTEGER NOT NULL DEFAULT 0, -- body bytes
	run_id          TEXT NOT NULL DEFAULT '',   -- '' while being queued, and when rejected
	error           TEXT NOT NULL DEFAULT ''
) STRICT;

-- A repeated key starts no second run: race-safe, whatever answers first.
CREATE UNIQUE INDEX trigger_deliveries_key ON trigger_deliveries(trigger_id, idempotency_key) WHERE idempotency_key != '';
CREATE INDEX trigger_deliveries_list ON trigger_deliveries(trigger_id, received_at);
CREATE INDEX trigger_deliveries_pending ON trigger_deliveries(received_at)
	WHERE run_id = '' AND outcome IN ('accepted', 'test') AND error = '';
