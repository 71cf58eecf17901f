/**
 * Input files and artifacts with their bytes (BLOB), each Project's running storage total, and one-use
 * download tokens (only their hash). Every lookup is by primary key or index; the storage check reads one row.
 * Storage held by expired files is given back by a lazy sweep over an index of expiries (each row once).
 */
import {
  inputFileProblem,
  sha256Hex,
  type InputFileProblem,
  type InputFileUse,
} from '../domain/files.js'
import { artifactExpiresAt, boundInputExpiresAt, isExpired } from '../domain/retention.js'
import type { Db } from './db.js'

export type FileKind = 'INPUT' | 'ARTIFACT'

/** A stored file's metadata (never its bytes: read those with readFileBytes). Times are ms. */
export type StoredFile = {
  id: string
  kind: FileKind
  artifact_id: string | null
  project_id: string
  deployment_id: string | null
  session_id: string | null
  execution_id: string | null
  bound_to: string | null
  filename: string
  mime_type: string
  size_bytes: number
  sha256: string
  status: 'READY'
  /** An artifact whose preparation ends later: not ready before this time (ARTIFACT_NOT_READY); else null. */
  ready_at: number | null
  /** A review file of this approval action (ACT-021: read only with the approval permission); else null. */
  review_action_id: string | null
  created_at: number
  expires_at: number
  deleted: boolean
  released: boolean
}

type FileRow = Omit<StoredFile, 'deleted' | 'released'> & { deleted: number; released: number }

const COLUMNS = `id, kind, artifact_id, project_id, deployment_id, session_id, execution_id, bound_to,
  filename, mime_type, size_bytes, sha256, status, ready_at, review_action_id, created_at, expires_at, deleted,
  released`

const toFile = (r: FileRow): StoredFile => ({
  ...r,
  deleted: r.deleted === 1,
  released: r.released === 1,
})

/** What a new file row needs; the digest and size are computed from the bytes. */
export type NewFile = {
  id: string
  projectId: string
  deploymentId?: string | null
  sessionId?: string | null
  filename: string
  mimeType: string
  bytes: Uint8Array
  nowMs: number
  expiresAtMs: number
}

function addStorage(db: Db, projectId: string, delta: number): void {
  db.stmt(
    'INSERT INTO project_storage (project_id, bytes_in_use) VALUES (?, 0) ON CONFLICT DO NOTHING',
  ).run(projectId)
  db.stmt(
    'UPDATE project_storage SET bytes_in_use = MAX(bytes_in_use + ?, 0) WHERE project_id = ?',
  ).run(delta, projectId)
}

function insertRow(
  db: Db,
  f: NewFile & {
    kind: FileKind
    artifactId?: string
    executionId?: string | null
    readyAtMs?: number
    reviewActionId?: string
  },
): StoredFile {
  const row: FileRow = {
    id: f.id,
    kind: f.kind,
    artifact_id: f.artifactId ?? null,
    project_id: f.projectId,
    deployment_id: f.deploymentId ?? null,
    session_id: f.sessionId ?? null,
    execution_id: f.executionId ?? null,
    bound_to: null,
    filename: f.filename,
    mime_type: f.mimeType,
    size_bytes: f.bytes.byteLength,
    sha256: sha256Hex(f.bytes),
    status: 'READY',
    ready_at: f.readyAtMs ?? null,
    review_action_id: f.reviewActionId ?? null,
    created_at: f.nowMs,
    expires_at: f.expiresAtMs,
    deleted: 0,
    released: 0,
  }
  db.stmt(
    `INSERT INTO files (${COLUMNS}, bytes) VALUES (@id, @kind, @artifact_id, @project_id, @deployment_id,
       @session_id, @execution_id, @bound_to, @filename, @mime_type, @size_bytes, @sha256, @status, @ready_at,
       @review_action_id, @created_at, @expires_at, @deleted, @released, @bytes)`,
  ).run({ ...row, bytes: Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength) })
  addStorage(db, f.projectId, row.size_bytes)
  return toFile(row)
}

/** Stores an uploaded input file (a pre-upload, or a Session file when sessionId is given). */
export function insertInputFile(db: Db, f: NewFile): StoredFile {
  return db.tx(() => insertRow(db, { ...f, kind: 'INPUT' }))
}

/** What the execution engine (or the control API) gives to store a result file. */
export type NewArtifact = Omit<NewFile, 'id' | 'expiresAtMs'> & {
  artifactId: string
  fileId: string
  /** The Turn or Run that produced it. */
  executionId?: string | null
  /** Default: 30 days after nowMs (RET-009/RET-010 give Runs their own retention). */
  expiresAtMs?: number
  /** A file still being prepared: ready at this time (ARTIFACT_NOT_READY before). */
  readyAtMs?: number
  /** A review file of this approval action (ACT-021). */
  reviewActionId?: string
}

/**
 * Stores a result file of an execution and counts it in the Project's storage (no limit is enforced here:
 * the execution engine decides RUN_STORAGE_LIMIT / PROJECT_STORAGE_LIMIT before calling).
 * @example createArtifact(db, { artifactId: ids.uuid(), fileId: ids.uuid(), projectId, deploymentId,
 *   sessionId, executionId: turnId, filename: 'report.txt', mimeType: 'text/plain', bytes, nowMs })
 */
export function createArtifact(db: Db, a: NewArtifact): StoredFile {
  return db.tx(() => {
    releaseExpiredFiles(db, a.projectId, a.nowMs)
    return insertRow(db, {
      ...a,
      id: a.fileId,
      kind: 'ARTIFACT',
      expiresAtMs: a.expiresAtMs ?? artifactExpiresAt(a.nowMs),
    })
  })
}

/** A file's metadata by file_id, whatever its state. */
export function getFile(db: Db, fileId: string): StoredFile | undefined {
  const row = db.stmt(`SELECT ${COLUMNS} FROM files WHERE id = ?`).get(fileId) as
    FileRow | undefined
  return row && toFile(row)
}

/** An artifact's metadata by artifact_id, whatever its state. */
export function getArtifactFile(db: Db, artifactId: string): StoredFile | undefined {
  const row = db.stmt(`SELECT ${COLUMNS} FROM files WHERE artifact_id = ?`).get(artifactId) as
    FileRow | undefined
  return row && toFile(row)
}

/** The bytes of a file, or undefined once released (expired and swept, or deleted). */
export function readFileBytes(db: Db, fileId: string): Uint8Array<ArrayBuffer> | undefined {
  const row = db.stmt('SELECT bytes FROM files WHERE id = ? AND released = 0').get(fileId) as
    { bytes: Buffer | null } | undefined
  return row?.bytes ? new Uint8Array(row.bytes) : undefined
}

/** Drops the bytes of files and gives their storage back (each row once). */
function release(db: Db, rows: { id: string; project_id: string; size_bytes: number }[]): void {
  for (const r of rows) {
    const changed = db
      .stmt('UPDATE files SET released = 1, bytes = NULL WHERE id = ? AND released = 0')
      .run(r.id).changes
    if (changed > 0) addStorage(db, r.project_id, -r.size_bytes)
  }
}

/**
 * Gives back the storage of a Project's files whose retention has passed (RET-013: they are already hidden by
 * expires_at; this only reclaims space). Each row is swept once, so the cost is amortized O(1) per file.
 */
export function releaseExpiredFiles(db: Db, projectId: string, nowMs: number): number {
  return db.tx(() => {
    const rows = db
      .stmt(
        'SELECT id, project_id, size_bytes FROM files WHERE project_id = ? AND released = 0 AND expires_at <= ?',
      )
      .all(projectId, nowMs) as { id: string; project_id: string; size_bytes: number }[]
    release(db, rows)
    return rows.length
  })
}

/** Bytes a Project holds in files that are neither expired nor deleted (one row read after the sweep). */
export function storageInUse(db: Db, projectId: string, nowMs: number): number {
  releaseExpiredFiles(db, projectId, nowMs)
  const row = db
    .stmt('SELECT bytes_in_use FROM project_storage WHERE project_id = ?')
    .get(projectId) as { bytes_in_use: number } | undefined
  return row?.bytes_in_use ?? 0
}

/** The usable input file, or the error code to answer (see inputFileProblem in mock/domain/files.ts). */
export type UsableInputFile = { ok: true; file: StoredFile } | ({ ok: false } & InputFileProblem)

/**
 * Checks that a file_id may be given as Turn or Run input by this Project (and Session). Does not bind it.
 * @example const r = getUsableInputFile(db, fileId, { projectId, nowMs, sessionId, executionId: turnId })
 *   if (!r.ok) throw new ApiError(r.code, { details: { file_id: fileId, reason: r.reason } })
 */
export function getUsableInputFile(db: Db, fileId: string, use: InputFileUse): UsableInputFile {
  const file = getFile(db, fileId)
  const problem = inputFileProblem(file, use)
  return problem ? { ok: false, ...problem } : { ok: true, file: file! }
}

/**
 * FILE-009: binds an input file to the execution it was given to; no other execution may use it from now on.
 * A pre-uploaded file given to a Turn becomes a file of that Session. Retention (boundInputExpiresAt): a Session
 * file keeps its expiry (RET-008), a pre-uploaded file gets 30 days from now for a Turn (RET-007) or
 * `runFilesUntilMs` for a Run (RET-009). Binding again to the same execution changes nothing (an idempotent
 * replay must not extend retention). Call getUsableInputFile first; this throws when the file cannot be bound.
 */
export function bindFileToExecution(
  db: Db,
  fileId: string,
  executionId: string,
  nowMs: number,
  opts: { sessionId?: string; runFilesUntilMs?: number } = {},
): StoredFile {
  return db.tx(() => {
    const file = getFile(db, fileId)
    if (!file) throw new Error(`bindFileToExecution: no file ${fileId}`)
    if (file.bound_to === executionId) return file
    if (file.kind !== 'INPUT' || file.deleted || file.bound_to !== null)
      throw new Error(`bindFileToExecution: file ${fileId} cannot be bound`)
    if (isExpired(file.expires_at, nowMs))
      throw new Error(`bindFileToExecution: file ${fileId} has expired`)
    const expiresAt = boundInputExpiresAt(
      { expiresAtMs: file.expires_at, inSession: file.session_id !== null },
      nowMs,
      opts.runFilesUntilMs,
    )
    const session = file.session_id ?? opts.sessionId ?? null
    db.stmt('UPDATE files SET bound_to = ?, expires_at = ?, session_id = ? WHERE id = ?').run(
      executionId,
      expiresAt,
      session,
      fileId,
    )
    return { ...file, bound_to: executionId, expires_at: expiresAt, session_id: session }
  })
}

/** RET-009: sets the expiry of every file of an execution (input files bound to it and its result files). */
export function setExecutionFilesExpiry(db: Db, executionId: string, expiresAtMs: number): void {
  db.stmt(
    'UPDATE files SET expires_at = ? WHERE (bound_to = ? OR execution_id = ?) AND deleted = 0',
  ).run(expiresAtMs, executionId, executionId)
}

function deleteWhere(db: Db, where: string, arg: string): number {
  return db.tx(() => {
    const rows = db
      .stmt(`SELECT id, project_id, size_bytes FROM files WHERE ${where} AND deleted = 0`)
      .all(arg) as { id: string; project_id: string; size_bytes: number }[]
    for (const r of rows) db.stmt('UPDATE files SET deleted = 1 WHERE id = ?').run(r.id)
    release(db, rows)
    return rows.length
  })
}

/** RET-004: deleting a Session deletes its files and artifacts (their storage is given back at once). */
export const deleteSessionFiles = (db: Db, sessionId: string): number =>
  deleteWhere(db, 'session_id = ?', sessionId)

/** Deletes the artifacts an execution produced (Run deletion). */
export const deleteExecutionArtifacts = (db: Db, executionId: string): number =>
  deleteWhere(db, "kind = 'ARTIFACT' AND execution_id = ?", executionId)

/** Deletes one artifact (control API); true when it existed and was not deleted yet. */
export const deleteArtifact = (db: Db, artifactId: string): boolean =>
  deleteWhere(db, 'artifact_id = ?', artifactId) > 0

/** A download token as stored (its hash only). */
export type DownloadToken = {
  token_hash: string
  artifact_id: string
  api_key: string
  issued_at: number
  expires_at: number
  used_at: number | null
}

export function insertDownloadToken(db: Db, t: Omit<DownloadToken, 'used_at'>): void {
  db.stmt(
    `INSERT INTO download_tokens (token_hash, artifact_id, api_key, issued_at, expires_at, used_at)
     VALUES (@token_hash, @artifact_id, @api_key, @issued_at, @expires_at, NULL)`,
  ).run(t)
}

export function getDownloadToken(db: Db, tokenHash: string): DownloadToken | undefined {
  return db.stmt('SELECT * FROM download_tokens WHERE token_hash = ?').get(tokenHash) as
    DownloadToken | undefined
}

/** Marks a token used; false when it was used already (one use, even under concurrent requests). */
export function useDownloadToken(db: Db, tokenHash: string, nowMs: number): boolean {
  return (
    db
      .stmt('UPDATE download_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL')
      .run(nowMs, tokenHash).changes > 0
  )
}

/**
 * ART-004: uses a download token and reads its file in one transaction: undefined when the token is expired or
 * used already, or the file was deleted or passed retention meanwhile (one success under concurrent uses).
 */
export function consumeDownload(
  db: Db,
  tokenHash: string,
  artifactId: string,
  nowMs: number,
): { file: StoredFile; bytes: Uint8Array<ArrayBuffer> } | undefined {
  return db.tx(() => {
    const issued = getDownloadToken(db, tokenHash)
    if (!issued || isExpired(issued.expires_at, nowMs) || !useDownloadToken(db, tokenHash, nowMs))
      return undefined
    const file = getArtifactFile(db, artifactId)
    if (!file || file.deleted || isExpired(file.expires_at, nowMs)) return undefined
    const bytes = readFileBytes(db, file.id)
    return bytes && { file, bytes }
  })
}
