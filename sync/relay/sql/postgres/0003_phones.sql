-- Phones (protocol: "Phones"). A pairing token is kept only as its hash,
-- spent once (used_at) before it expires. A phone's secret is kept only as
-- its verifier; its push subscription is where its notifications go.
CREATE TABLE phone_pairings (
	hash         TEXT PRIMARY KEY,  -- hex SHA-256 of the pairing token
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	expires_at   BIGINT NOT NULL,   -- Unix ms
	used_at      BIGINT             -- set when a phone paired with it
);

CREATE TABLE phones (
	id           TEXT PRIMARY KEY,  -- ph_…
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	verifier     TEXT NOT NULL,     -- hex SHA-256 of the phone's secret
	name         TEXT NOT NULL,
	endpoint     TEXT NOT NULL,     -- the push subscription
	p256dh       TEXT NOT NULL,
	auth         TEXT NOT NULL,
	paired_at    BIGINT NOT NULL,
	last_push_at BIGINT,
	last_error   TEXT NOT NULL DEFAULT ''
);
CREATE INDEX phones_workspace ON phones (workspace_id);

-- The relay's own keys: its VAPID key pair (RFC 8292), made once.
CREATE TABLE relay_keys (
	name  TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
