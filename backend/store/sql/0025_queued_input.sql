-- A queued run's input step is written when the run leaves the queue (a
-- worker takes it, it is cancelled, or it waits on a card), not when it is
-- queued: a burst of webhook calls or schedules then writes only its runs,
-- and the search index waits for the runs that start. Until then the run
-- holds its input (runs.input, as before) and who wrote it, here; Steps
-- shows the input step made from them. Runs queued before keep the step
-- they have.
ALTER TABLE runs ADD COLUMN input_from TEXT NOT NULL DEFAULT '';
