-- What a Project's open executions hold in reserve (max_su - spent_su, summed on every acceptance) is read
-- from this index alone, without a lookup of each open execution's row.
CREATE INDEX executions_open_su ON executions (project_id, terminal, max_su, spent_su);
