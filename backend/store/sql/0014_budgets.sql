-- Spend budgets: limits on what runs may spend in tokens and in money (USD,
-- from the price table), per run and per day, set for the workspace (the
-- row with agent_id '') and for each agent. 0 means no limit. Every limit
-- that applies binds: an agent's run is held to its agent's limits and to
-- the workspace's.
CREATE TABLE budgets (
	agent_id   TEXT PRIMARY KEY,  -- '' for the workspace
	run_tokens INTEGER NOT NULL DEFAULT 0 CHECK (run_tokens >= 0),
	run_usd    REAL NOT NULL DEFAULT 0 CHECK (run_usd >= 0),
	day_tokens INTEGER NOT NULL DEFAULT 0 CHECK (day_tokens >= 0),
	day_usd    REAL NOT NULL DEFAULT 0 CHECK (day_usd >= 0),
	updated_at TEXT NOT NULL
) STRICT;

CREATE TRIGGER budgets_agent_deleted AFTER DELETE ON agents BEGIN
	DELETE FROM budgets WHERE agent_id = OLD.id;
END;

-- What the person allowed one run beyond the limits on a budget card
-- ("allow N more for this run"), added to every limit of its unit for that
-- run only.
CREATE TABLE budget_grants (
	run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
	tokens INTEGER NOT NULL DEFAULT 0,
	usd    REAL NOT NULL DEFAULT 0
) STRICT;

-- The cached input a model step used (cache reads and writes): a token
-- budget counts every token of a call, and steps held only the uncached
-- input until now.
ALTER TABLE steps ADD COLUMN cache_tokens INTEGER NOT NULL DEFAULT 0;

-- The spend of a day is summed over the model steps that ended in it.
CREATE INDEX steps_spend ON steps(ended_at) WHERE input_tokens + output_tokens + cache_tokens > 0 OR cost_usd > 0;
