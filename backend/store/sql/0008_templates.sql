-- Templates (backend/template): packaged agent setups kept in the workspace's
-- library. The row holds the manifest (what template.json says); the soul,
-- skills and files live in the folder templates/<id>/ beside workspace.db
-- (soul.md, skills/<name>/…, files/…). Neither ever holds a memory, a
-- variable's value, a trigger token or run history.
CREATE TABLE templates (
	id              TEXT PRIMARY KEY,
	name            TEXT NOT NULL,
	manifest        TEXT NOT NULL,             -- JSON of template.json (backend/template/schema/template.schema.json)
	status          TEXT NOT NULL DEFAULT 'draft', -- draft | submitted
	source_agent_id TEXT NOT NULL DEFAULT '',  -- the agent it was saved from; '' for a blank or imported one
	created_at      TEXT NOT NULL,
	updated_at      TEXT NOT NULL
) STRICT;

CREATE INDEX templates_updated ON templates(updated_at);
