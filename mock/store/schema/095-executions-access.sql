-- Lookups of open executions by the key that created them or their Deployment (revocation cancels them).
CREATE INDEX executions_key ON executions (api_key, terminal);
CREATE INDEX executions_deployment ON executions (deployment_id, terminal);
