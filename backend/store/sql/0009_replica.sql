-- Device sync (backend/replica): what this device captured and has still to
-- stamp, the last-writer-wins state of every synced record, records waiting
-- for their parent, the engine's own state, and the synced settings.
-- The capture triggers themselves are (re)created by the engine when sync is
-- enabled, from its table list: adding a table needs no migration.

-- Rows changed locally since the last stamp: table, primary key (the JSON
-- array SQLite's json_array makes of the key columns) and when (Unix ms).
CREATE TABLE sync_outbox (
	n   INTEGER PRIMARY KEY,
	tbl TEXT NOT NULL,
	pk  TEXT NOT NULL,
	at  INTEGER NOT NULL
) STRICT;

-- The newest version of every record this device knows: its hybrid logical
-- clock (see backend/replica/hlc.go) and device, whether it is a tombstone,
-- and whether this device still has to push it.
CREATE TABLE sync_records (
	tbl     TEXT NOT NULL,
	pk      TEXT NOT NULL,
	hlc     TEXT NOT NULL,
	device  TEXT NOT NULL,
	deleted INTEGER NOT NULL DEFAULT 0,
	pushed  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (tbl, pk)
) STRICT;

CREATE INDEX sync_records_unpushed ON sync_records(hlc) WHERE pushed = 0;

-- Pulled records whose parent row is not here yet, kept (opened, as JSON)
-- and retried after each batch, in relay order.
CREATE TABLE sync_parked (
	tbl    TEXT NOT NULL,
	pk     TEXT NOT NULL,
	seq    INTEGER NOT NULL,
	record TEXT NOT NULL,
	PRIMARY KEY (tbl, pk)
) STRICT;

-- One row: 1 while the engine applies pulled records, so the capture
-- triggers leave them out (triggers cannot see TEMP tables).
CREATE TABLE sync_applying (
	id     INTEGER PRIMARY KEY CHECK (id = 1),
	active INTEGER NOT NULL
) STRICT;

INSERT INTO sync_applying (id, active) VALUES (1, 0);

-- The engine's local state: enabled, cursor (the relay seq pulled up to),
-- hlc (the clock), first (this device enabled sync first), tables (synced
-- so far).
CREATE TABLE sync_state (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

-- Workspace settings that sync like any record: automations_device (the
-- device that fires schedules).
CREATE TABLE sync_settings (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;

-- Skills removed from disk (their versions stay in skill_versions): a skill
-- is gone while its removal's version is at least its newest version.
CREATE TABLE skill_removals (
	agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	name     TEXT NOT NULL,
	version  INTEGER NOT NULL,
	PRIMARY KEY (agent_id, name)
) STRICT;
