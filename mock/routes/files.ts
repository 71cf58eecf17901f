/**
 * Uploads (Endpoints > Files and artifacts): POST /v1/files and POST /v1/sessions/{session_id}/files. The
 * pipeline reads the one `file` part (20 MiB, FILE_TOO_LARGE) and handles Idempotency-Key; this module applies
 * the filename, type, balance and storage rules and stores the file with its retention (24 hours ahead of use,
 * 30 days in a Session).
 */
import type { Context, Hono } from 'hono'
import type { Env } from '../deps.js'
import {
  canonicalMimeType,
  fileTypeProblem,
  filenameProblem,
  isAllowedPair,
} from '../domain/file-rules.js'
import { MINIMUM_FILE_BALANCE_SU, balanceAllowsFiles, storageAllows } from '../domain/files.js'
import { uploadedFileExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { route } from '../http/route.js'
import type { Prepared, Reply, TypedRequest } from '../http/typed.js'
import { visibleSession } from '../access/access.js'
import type { SessionRecord } from '../store/executions.js'
import { getDeployment } from '../store/deployments.js'
import { insertInputFile, storageInUse } from '../store/files.js'
import { fileReceipt } from '../domain/file-views.js'
import { getProject } from '../store/projects.js'

type Upload = TypedRequest<'uploadFile' | 'uploadSessionFile'>

/** The content check is asynchronous (file-type); it runs before the synchronous idempotent handler. */
async function inspectUpload(_c: Context<Env>, req: Upload): Promise<Prepared> {
  const upload = req.upload
  return {
    uploadTypeProblem: filenameProblem(upload.filename)
      ? undefined
      : await fileTypeProblem(upload.filename, upload.mimeType, upload.bytes),
  }
}

/** A Session the key may upload to (access/access.ts), and not closed (409 SESSION_CLOSED). */
function uploadableSession(
  c: Context<Env>,
  req: Upload,
  sessionId: string,
): Readonly<SessionRecord> {
  const session = visibleSession(c.var.deps, req.auth, sessionId)
  if (session.status === 'CLOSED') {
    throw new ApiError('SESSION_CLOSED', { message: 'A closed Session accepts no files.' })
  }
  return session
}

/** The upload rules in order: Session, filename, type and content, minimum balance, Project storage. */
function upload(
  c: Context<Env>,
  req: Upload,
  sessionId?: string,
): Reply<'uploadFile'> & Reply<'uploadSessionFile'> {
  const { db, clock, ids } = c.var.deps
  const auth = req.auth
  const file = req.upload
  const nowMs = clock.nowMs()
  const session = sessionId === undefined ? undefined : uploadableSession(c, req, sessionId)
  // ERR-045: empty, over 255 bytes, slash, backslash or control character.
  if (filenameProblem(file.filename)) {
    throw new ApiError('INVALID_FILENAME', {
      message:
        'The filename must be 1 to 255 bytes without slash, backslash or control characters.',
      details: { filename_bytes: Buffer.byteLength(file.filename, 'utf8') },
    })
  }
  // ERR-047, SIZE-010: allowed extension and MIME pair, content really that format, nothing unsafe; a
  // Session file also within its Deployment's input_mime_types (DEP-005, applied at upload: assumed).
  const narrowedTo = session && getDeployment(db, session.deployment_id)?.input_mime_types
  if (req.uploadTypeProblem || !isAllowedPair(file.filename, file.mimeType, narrowedTo)) {
    throw new ApiError('UNSUPPORTED_FILE_TYPE', {
      message:
        'The extension and MIME type are not an allowed pair, or the content is not that format or is unsafe (macro document, encrypted PDF).',
      details: { mime_type: file.mimeType },
    })
  }
  const project = getProject(db, auth.projectId)!
  // BUD-008, BUD-009: at least 50 SU, not charged.
  if (!balanceAllowsFiles(project.su_balance)) {
    throw new ApiError('MINIMUM_SU_REQUIRED', {
      message: `File operations need an account balance of at least ${MINIMUM_FILE_BALANCE_SU} SU (not charged).`,
      details: { minimum_su: MINIMUM_FILE_BALANCE_SU },
    })
  }
  // SIZE-013: the Project's storage limit (500 MiB unless the fixture lowers it).
  const inUse = storageInUse(db, project.id, nowMs)
  if (!storageAllows(inUse, file.bytes.byteLength, project.storage_limit_bytes)) {
    throw new ApiError('PROJECT_STORAGE_LIMIT', {
      message: 'This upload would take the Project over its file storage limit.',
      details: {
        limit_bytes: project.storage_limit_bytes,
        in_use_bytes: inUse,
        size_bytes: file.bytes.byteLength,
      },
    })
  }
  const stored = insertInputFile(db, {
    id: ids.uuid(),
    projectId: project.id,
    deploymentId: session?.deployment_id ?? null,
    sessionId: sessionId ?? null,
    filename: file.filename,
    mimeType: canonicalMimeType(file.filename)!,
    bytes: file.bytes,
    nowMs,
    // RET-005 / RET-007: 24 hours ahead of use; a Session file 30 days from upload.
    expiresAtMs: uploadedFileExpiresAt(nowMs, session !== undefined),
  })
  return { status: 201, body: fileReceipt(stored) }
}

export function fileRoutes(app: Hono<Env>): void {
  route(app, 'uploadFile', (c, req) => upload(c, req), { prepare: inspectUpload })
  route(app, 'uploadSessionFile', (c, req) => upload(c, req, req.params.session_id), {
    prepare: inspectUpload,
  })
}
