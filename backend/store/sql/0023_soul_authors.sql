-- Who wrote each version of a soul: 'person' (edited in the app), 'agent'
-- (the agent itself, tool update_soul) or 'api' (an MCP client). Versions
-- saved before this column, and the one an agent is created with, have ''.
ALTER TABLE souls ADD COLUMN author TEXT NOT NULL DEFAULT '';
