-- The internal Sessions of a Run's steps, looked up by their Run.
CREATE INDEX sessions_workflow_run ON sessions (workflow_run_id);
