-- Run steps a script marks (step_start / step_end): the open step, the unique steps that succeeded
-- (progress.completed) and how long later steps waited queued (the whole-Run queue total). NULL: no steps yet.
ALTER TABLE executions ADD COLUMN run_steps_json TEXT;
