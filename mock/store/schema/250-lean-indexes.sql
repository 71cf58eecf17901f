-- Every execution insert and every status change that ends one wrote these three indexes, though only rare
-- control operations read them (revoking or expiring a key, retiring a Deployment, stopping a Workflow). A
-- Project's open executions are few (its slots plus its waiting cap), so those lookups now search
-- executions_slots (project_id, terminal) of the key's, Deployment's or Workflow's Project instead
-- (store/access.ts, store/executions.ts openRunsOfWorkflow).
DROP INDEX IF EXISTS executions_key;
DROP INDEX IF EXISTS executions_deployment;
DROP INDEX IF EXISTS executions_workflow;

-- Only Sessions held by workflow steps have a workflow_run_id, and every read of this index asks for one
-- (workflow_run_id = ?): a partial index spares each API-created Session its entry.
DROP INDEX IF EXISTS sessions_workflow_run;
CREATE INDEX sessions_workflow_run ON sessions (workflow_run_id) WHERE workflow_run_id IS NOT NULL;
