-- The outbox: what a notification sends beyond the window (package outbox),
-- one row per mail or hook POST. A row is written in the notification's own
-- transaction, with what it sends already rendered and masked (payload), so
-- a restart neither loses nor invents a delivery. Its id is the send id:
-- the mail's Message-ID and the hook's webhook-id are made from it, so a
-- retry after a crash mid-send is the same message to whoever receives it.
CREATE TABLE outbox (
	id              TEXT PRIMARY KEY,  -- the send id (ob_…)
	notification_id TEXT NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
	channel         TEXT NOT NULL,     -- email | hook
	target          TEXT NOT NULL,     -- 'email', or the hook's id
	payload         TEXT NOT NULL,     -- JSON: the rendered message, never a secret value
	status          TEXT NOT NULL,     -- pending | sending | sent | failed
	attempts        INTEGER NOT NULL DEFAULT 0,
	next_at         TEXT NOT NULL,     -- when a pending row is due
	last_error      TEXT NOT NULL DEFAULT '',
	created_at      TEXT NOT NULL,
	sent_at         TEXT,
	UNIQUE (notification_id, channel, target)
) STRICT;

CREATE INDEX outbox_due ON outbox(status, next_at);
