-- The runs of a status by session, then time. The workers' dispatch pass
-- looks for each session's oldest queued run: it now seeks from one
-- session to the next (run/dispatch.go) instead of reading every queued
-- run, so a backlog of 100,000 webhook calls behind one busy session is a
-- few seeks, not 100,000 rows read on every pass. The index is as wide as
-- the one it replaces: queuing a run writes the same number of entries.
DROP INDEX runs_status;
CREATE INDEX runs_status ON runs(status, session_id, created_at);
