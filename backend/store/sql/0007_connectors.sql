-- Apps (connectors) and custom MCP servers installed per agent
-- (backend/connector). Configuration holds ${NAME} references to workspace
-- variables only, never their values.

CREATE TABLE connectors (
	id         TEXT PRIMARY KEY,
	agent_id   TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	slug       TEXT NOT NULL,             -- tool prefix: the agent calls <slug>__<tool>
	catalog_id TEXT NOT NULL DEFAULT '',  -- the catalog app; '' for a custom server
	name       TEXT NOT NULL,
	auth       TEXT NOT NULL DEFAULT 'none', -- none | api_key | oauth
	config     TEXT NOT NULL,             -- JSON transport {type, command, args, env, url, headers}
	oauth      TEXT NOT NULL DEFAULT '',  -- JSON {scopes, client_id_var, client_secret_var}; '' for none
	status     TEXT NOT NULL DEFAULT 'untested', -- last known: untested | connected | error | needs_sign_in | blocked_changed
	error      TEXT NOT NULL DEFAULT '',  -- why the last connection failed
	pinned_at  TEXT,                      -- when its tools were last approved; NULL: never
	checked_at TEXT,                      -- the last connection attempt
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	UNIQUE (agent_id, slug)
) STRICT;

CREATE INDEX connectors_agent ON connectors(agent_id, created_at);

-- The tools of each connector: the definition the person approved (pinned)
-- and the one the server last listed (live). A tool whose live hash differs
-- from its pinned hash is blocked; one with no pinned hash is new and waits
-- for approval; one with no live hash is gone from the server.
CREATE TABLE connector_tools (
	connector_id TEXT NOT NULL REFERENCES connectors(id) ON DELETE CASCADE,
	name         TEXT NOT NULL,            -- the server's name for it
	pinned_hash  TEXT NOT NULL DEFAULT '', -- hex SHA-256 of the canonical {name, description, input_schema}
	pinned       TEXT NOT NULL DEFAULT '', -- that JSON
	live_hash    TEXT NOT NULL DEFAULT '',
	live         TEXT NOT NULL DEFAULT '',
	seen_at      TEXT,
	PRIMARY KEY (connector_id, name)
) STRICT;
