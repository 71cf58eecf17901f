-- ART-003: the SU a consumed download address costs, settled in the file_storage_transfer category (assumed
-- amount: the document names none). Fixture field download_su.
ALTER TABLE projects ADD COLUMN download_su REAL NOT NULL DEFAULT 0.01;
