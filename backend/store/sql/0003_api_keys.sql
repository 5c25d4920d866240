-- API keys of the workspace's MCP endpoint. Only a hash of each key is kept;
-- the key itself is shown once, when it is created.

CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	prefix       TEXT NOT NULL,  -- the key's first characters, to recognise it
	hash         TEXT NOT NULL,  -- hex SHA-256 of the whole key
	created_at   TEXT NOT NULL,
	last_used_at TEXT,
	revoked_at   TEXT
) STRICT;

CREATE INDEX api_keys_prefix ON api_keys(prefix);
