-- Built-in agents (the Rerun agent, later the Foreman) and the hidden system
-- box they sit on. Both have fixed ids, so the same records exist on every
-- device of a workspace; the rows are written by the app when a workspace
-- opens (agent.Service.EnsureBuiltin), not here.

-- builtin names which built-in agent a row is ('rerun', 'foreman'); '' for
-- the person's own agents.
ALTER TABLE agents ADD COLUMN builtin TEXT NOT NULL DEFAULT '';
CREATE UNIQUE INDEX agents_builtin ON agents(builtin) WHERE builtin != '';

-- system marks the hidden box of the built-in agents: never listed, renamed,
-- deleted, reordered, and no other agent may sit on it.
ALTER TABLE boxes ADD COLUMN system INTEGER NOT NULL DEFAULT 0;
