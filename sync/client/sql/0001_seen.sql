-- Deliveries the relay sent this desktop that Deliver queued: one sent
-- again (its ack was lost, or this process died before acking) is acked
-- without a second run.
CREATE TABLE seen (
	id      TEXT PRIMARY KEY, -- the relay's delivery id
	run_id  TEXT NOT NULL,
	seen_at INTEGER NOT NULL  -- Unix ms; pruned after the retention window
);
CREATE INDEX seen_at ON seen (seen_at);
