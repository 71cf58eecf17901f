-- Run request rules 4-5: a workflow's organization data (the grant declared at publication, what its steps use,
-- whether the data store checking Run input is reachable), as JSON (mock/domain/organization-data.ts); NULL for
-- a workflow that uses no organization data.
ALTER TABLE workflows ADD COLUMN organization_data_json TEXT;
