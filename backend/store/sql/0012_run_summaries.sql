-- Run summaries: what the workspace's other devices see of a run that ended
-- here (device sync carries them; runs, steps and their logs never leave
-- the device that ran them). A summary is only ever shown: no run, session
-- or step is made from it, so a summary never resumes or executes.
--
-- Filled by the triggers below when a run reaches a final state (done,
-- failed, cancelled), in the run's own transaction: the input's first 500
-- characters, the output's first 2,000, the error's first 500, tokens and
-- cost, and the device that ran it (sync_state 'device', written by the
-- workspace when it opens).
CREATE TABLE run_summaries (
	id            TEXT PRIMARY KEY,  -- the run's id on the device that ran it
	agent_id      TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
	source        TEXT NOT NULL,
	status        TEXT NOT NULL,
	input         TEXT NOT NULL DEFAULT '',
	output        TEXT NOT NULL DEFAULT '',
	error         TEXT NOT NULL DEFAULT '',
	model         TEXT NOT NULL DEFAULT '',
	input_tokens  INTEGER NOT NULL DEFAULT 0,
	output_tokens INTEGER NOT NULL DEFAULT 0,
	cost_usd      REAL NOT NULL DEFAULT 0,
	cost_known    INTEGER NOT NULL DEFAULT 1,
	created_at    TEXT NOT NULL,
	started_at    TEXT,
	ended_at      TEXT,
	device        TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE INDEX run_summaries_agent ON run_summaries(agent_id, device, created_at);

CREATE TRIGGER run_summaries_on_end AFTER UPDATE OF status ON runs
WHEN NEW.status IN ('done', 'failed', 'cancelled') AND OLD.status IS NOT NEW.status BEGIN
	INSERT INTO run_summaries (id, agent_id, source, status, input, output, error, model, input_tokens, output_tokens,
		cost_usd, cost_known, created_at, started_at, ended_at, device)
	VALUES (NEW.id, NEW.agent_id, NEW.source, NEW.status, substr(NEW.input, 1, 500), substr(NEW.output, 1, 2000),
		substr(NEW.error, 1, 500), NEW.model, NEW.input_tokens, NEW.output_tokens, NEW.cost_usd, NEW.cost_known,
		NEW.created_at, NEW.started_at, NEW.ended_at, coalesce((SELECT value FROM sync_state WHERE key = 'device'), ''))
	ON CONFLICT (id) DO UPDATE SET status = excluded.status, input = excluded.input, output = excluded.output,
		error = excluded.error, model = excluded.model, input_tokens = excluded.input_tokens,
		output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd, cost_known = excluded.cost_known,
		started_at = excluded.started_at, ended_at = excluded.ended_at, device = excluded.device;
END;

-- A run stored already ended (one refused before it started).
CREATE TRIGGER run_summaries_on_insert AFTER INSERT ON runs
WHEN NEW.status IN ('done', 'failed', 'cancelled') BEGIN
	INSERT OR IGNORE INTO run_summaries (id, agent_id, source, status, input, output, error, model, input_tokens,
		output_tokens, cost_usd, cost_known, created_at, started_at, ended_at, device)
	VALUES (NEW.id, NEW.agent_id, NEW.source, NEW.status, substr(NEW.input, 1, 500), substr(NEW.output, 1, 2000),
		substr(NEW.error, 1, 500), NEW.model, NEW.input_tokens, NEW.output_tokens, NEW.cost_usd, NEW.cost_known,
		NEW.created_at, NEW.started_at, NEW.ended_at, coalesce((SELECT value FROM sync_state WHERE key = 'device'), ''));
END;
