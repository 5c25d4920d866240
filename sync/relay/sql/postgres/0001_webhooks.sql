-- A workspace linked to this relay. Its secret is never stored: verifier
-- checks the Bearer secret, signing_key signs delivery frames, and neither
-- gives the secret or the other.
CREATE TABLE workspaces (
	id          TEXT PRIMARY KEY,
	verifier    TEXT NOT NULL,    -- hex SHA-256 of the secret
	signing_key BYTEA NOT NULL,    -- HMAC-SHA256(secret, "rerun-relay delivery signing v1")
	created_at  BIGINT NOT NULL  -- Unix ms, as every time here
);

-- The hashes of a workspace's trigger tokens: the only ones whose calls are
-- kept. The tokens themselves never reach the relay's disk.
CREATE TABLE tokens (
	hash         TEXT PRIMARY KEY, -- hex SHA-256 of the token
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE
);
CREATE INDEX tokens_workspace ON tokens (workspace_id);

-- Webhook calls not yet acked by the desktop; once acked, deleted. After
-- expires_at a delivery is a dead letter (dead_at set): listed, sent again
-- only after a replay, deleted dead-letter retention after dead_at.
CREATE TABLE deliveries (
	id              TEXT PRIMARY KEY, -- dlv_…, sorts by intake time
	workspace_id    TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	token_hash      TEXT NOT NULL,
	received_at     BIGINT NOT NULL,
	method          TEXT NOT NULL,
	query           TEXT NOT NULL,
	header          TEXT NOT NULL,    -- JSON object of the forwarded headers
	body            BYTEA NOT NULL,
	attempts        INTEGER NOT NULL DEFAULT 0, -- nacks so far
	next_attempt_at BIGINT NOT NULL,
	last_error      TEXT NOT NULL DEFAULT '',
	expires_at      BIGINT NOT NULL,
	dead_at         BIGINT
);
CREATE INDEX deliveries_due ON deliveries (workspace_id, next_attempt_at) WHERE dead_at IS NULL;
CREATE INDEX deliveries_expiry ON deliveries (expires_at) WHERE dead_at IS NULL;
CREATE INDEX deliveries_dead ON deliveries (workspace_id, dead_at) WHERE dead_at IS NOT NULL;
