-- Human in the loop: secret variables, pauses (a run waiting for a person),
-- notifications, and each agent's "ask first" policy.

-- Variables: name → secret value, sealed with AES-256-GCM under the data key
-- (kept in the OS keychain, or a 0600 key file when none is reachable). The
-- label of each sealed value binds it to its workspace and name.
CREATE TABLE variables (
	name       TEXT PRIMARY KEY,
	value      TEXT NOT NULL,  -- sealed (base64 nonce + ciphertext)
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
) STRICT;

-- Pauses: a run waiting for a person. At most one open pause per run.
CREATE TABLE pauses (
	id           TEXT PRIMARY KEY,
	run_id       TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	agent_id     TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	session_id   TEXT NOT NULL,
	kind         TEXT NOT NULL,            -- question | approval | connector | credential
	status       TEXT NOT NULL,            -- open | answered | dismissed | cancelled
	tool_call_id TEXT NOT NULL DEFAULT '', -- the tool call that raised it ('' for a policy approval)
	request      TEXT NOT NULL,            -- JSON, by kind
	answer       TEXT NOT NULL DEFAULT '', -- JSON, by kind; never a secret value
	automated    INTEGER NOT NULL DEFAULT 0, -- the run was not started by a person
	settled      INTEGER NOT NULL DEFAULT 0, -- the answer was handed to the run
	created_at   TEXT NOT NULL,
	answered_at  TEXT
) STRICT;

CREATE UNIQUE INDEX pauses_one_open ON pauses(run_id) WHERE status = 'open';
CREATE INDEX pauses_agent ON pauses(agent_id, status, created_at);
CREATE INDEX pauses_run ON pauses(run_id, created_at);

-- Notifications: what an agent told the person, and what waits for them.
CREATE TABLE notifications (
	id         TEXT PRIMARY KEY,
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	run_id     TEXT NOT NULL DEFAULT '',
	pause_id   TEXT NOT NULL DEFAULT '',
	kind       TEXT NOT NULL,   -- info | progress | done | error | question | approval | connector | credential
	title      TEXT NOT NULL,
	body       TEXT NOT NULL DEFAULT '',
	automated  INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	handled_at TEXT            -- dismissed, or its pause answered
) STRICT;

CREATE INDEX notifications_open ON notifications(handled_at, created_at);
CREATE INDEX notifications_agent ON notifications(agent_id, created_at);
CREATE INDEX notifications_pause ON notifications(pause_id) WHERE pause_id != '';

-- Per agent, per tool family: ask the person before acting ({"shell":true,…}).
-- '' means the defaults.
ALTER TABLE agents ADD COLUMN ask_first TEXT NOT NULL DEFAULT '';
