-- Which of the MCP tools a key's client is offered: 'full' (all of them)
-- or 'compact' (the core set, for clients that handle few tools, such as
-- Cursor). Changed in Settings → API keys; the tool set itself is mcpapi's.
ALTER TABLE api_keys ADD COLUMN tool_set TEXT NOT NULL DEFAULT 'full' CHECK (tool_set IN ('full', 'compact'));
