-- One index for a schedule's fires instead of two. The firing key still
-- lets a fire time be claimed once ("run now" rows, keyed by their own id,
-- may share an instant), and it also serves the history, newest first,
-- which had an index of the same columns of its own: a burst of 10,000
-- fires wrote every row into both, each at a random place.
DROP INDEX schedule_fires_history;
DROP INDEX schedule_fires_key;
CREATE UNIQUE INDEX schedule_fires_key ON schedule_fires(schedule_id, scheduled_for, CASE WHEN outcome = 'manual' THEN id ELSE '' END);
