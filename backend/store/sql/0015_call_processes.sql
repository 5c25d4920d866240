-- The processes of tool calls that are running: a shell command's process
-- group, recorded right after it starts and removed when it ends. A row a
-- crash left behind names a group the next start ends (run.Service.Serve,
-- tool.EndProcessGroup), once it has checked the group is still the one
-- started: start is "boot:ticks", the boot and the leader's start time, so a
-- pid the system has given to another process since is left alone.
CREATE TABLE call_processes (
	run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	call_id    TEXT NOT NULL,
	pid        INTEGER NOT NULL,
	start      TEXT NOT NULL,
	started_at TEXT NOT NULL,
	PRIMARY KEY (run_id, call_id, pid)
) STRICT;
