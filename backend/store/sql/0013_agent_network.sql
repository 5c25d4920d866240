-- An agent's network switch: whether the commands it runs (shell commands,
-- its apps' stdio servers) may open TCP connections. On by default; off,
-- the sandbox denies TCP connect and bind (Landlock ABI 4+).
ALTER TABLE agents ADD COLUMN network INTEGER NOT NULL DEFAULT 1;
