-- The change log of each workspace, sealed end to end: the relay keeps the
-- latest change of each record key and can read none of them.
-- change_seq is the workspace's newest seq; a push raises it in its own
-- transaction, which also locks the workspace's row, so seqs become
-- visible in order even with several relay processes.
ALTER TABLE workspaces ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;

CREATE TABLE changes (
	workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
	key          TEXT NOT NULL,     -- 64 hex: the desktop's HMAC of the record's table and primary key
	seq          INTEGER NOT NULL,   -- assigned at push, increasing per workspace; a new push of the key takes a new one
	device       TEXT NOT NULL,     -- dev_…, the device that pushed it
	body         BLOB NOT NULL,     -- the sealed record
	pushed_at    INTEGER NOT NULL,   -- Unix ms
	PRIMARY KEY (workspace_id, key)
);
CREATE UNIQUE INDEX changes_seq ON changes (workspace_id, seq);
