-- Result rules (SIZE-012): the files of one execution are summed by bound_to as well as by execution_id.
CREATE INDEX IF NOT EXISTS files_bound_to ON files (bound_to) WHERE bound_to IS NOT NULL;
