-- Files and artifacts (Endpoints > Files and artifacts; Limits > Retention). One row per stored file: an input
-- file (uploaded with POST /v1/files or to a Session) or an artifact (a result file of an execution, with its
-- own artifact_id). The bytes live in the row. `released` means the bytes were dropped and the Project's
-- storage given back (after expiry or deletion); expiry itself is a pure function of expires_at and the clock.
CREATE TABLE files (
  id            TEXT PRIMARY KEY,                       -- file_id
  kind          TEXT NOT NULL CHECK (kind IN ('INPUT', 'ARTIFACT')),
  artifact_id   TEXT UNIQUE,                            -- ARTIFACT rows only
  project_id    TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  deployment_id TEXT,                                   -- the Deployment whose keys may read it, if any
  session_id    TEXT,                                   -- a Session file or a Session's artifact
  execution_id  TEXT,                                   -- ARTIFACT: the Turn or Run that produced it
  bound_to      TEXT,                                   -- INPUT: the execution it was given to as input
  filename      TEXT NOT NULL,
  mime_type     TEXT NOT NULL,
  size_bytes    INTEGER NOT NULL CHECK (size_bytes >= 0),
  sha256        TEXT NOT NULL,
  bytes         BLOB,                                   -- NULL once released
  status        TEXT NOT NULL DEFAULT 'READY',
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  deleted       INTEGER NOT NULL DEFAULT 0,
  released      INTEGER NOT NULL DEFAULT 0
);
-- Expired rows still holding storage, oldest expiry first, per Project (the lazy reclamation sweep).
CREATE INDEX files_live_expiry ON files (project_id, expires_at) WHERE released = 0;
CREATE INDEX files_session ON files (session_id) WHERE session_id IS NOT NULL;
CREATE INDEX files_execution ON files (execution_id) WHERE execution_id IS NOT NULL;

-- Running total of the bytes a Project holds (Limits > Sizes and counts: Project file storage), updated in the
-- same transaction as every insert and release, so the storage check never scans the files.
CREATE TABLE project_storage (
  project_id   TEXT PRIMARY KEY,
  bytes_in_use INTEGER NOT NULL CHECK (bytes_in_use >= 0)
) WITHOUT ROWID;

-- One-use download tokens (60 seconds of virtual time). Only a SHA-256 of the token is stored.
CREATE TABLE download_tokens (
  token_hash  TEXT PRIMARY KEY,
  artifact_id TEXT NOT NULL,
  api_key     TEXT NOT NULL,                            -- the key that issued it (rate limits of the download)
  issued_at   INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
) WITHOUT ROWID;
