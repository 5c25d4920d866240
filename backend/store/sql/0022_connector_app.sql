-- What a registry app was installed from: its MCP Registry entry as a
-- catalog app (JSON: description, setup fields, drafted skill, icon), so
-- it keeps working when the registry is unreachable or drops the entry.
-- Empty for built-in apps (their entry is the embedded catalog) and custom
-- servers.
ALTER TABLE connectors ADD COLUMN app TEXT NOT NULL DEFAULT '';
