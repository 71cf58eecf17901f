/**
 * The document's rules on stored files beyond their type and name (SU budgets, Sizes and counts, Time
 * limits): the download address lifetime, the 50 SU minimum balance, Project storage and whether an input
 * file can be given to an execution. Pure functions of their inputs and `now`. File retention periods and
 * expiries are in retention.ts.
 */
import { createHash } from 'node:crypto'
import { bareMimeType } from './file-rules.js'
import { isExpired } from './retention.js'

/** ART-004: a download address is valid at most 60 seconds. */
export const DOWNLOAD_TOKEN_LIFETIME_MS = 60 * 1000
/** BUD-008: file upload and download need an account balance of at least 50 SU (not charged). */
export const MINIMUM_FILE_BALANCE_SU = 50

/** BUD-008: whether the balance allows a file operation. */
export const balanceAllowsFiles = (suBalance: number): boolean =>
  suBalance >= MINIMUM_FILE_BALANCE_SU

/** SIZE-013: whether adding `bytes` keeps the Project within its storage limit. */
export const storageAllows = (inUse: number, bytes: number, limit: number): boolean =>
  inUse + bytes <= limit

/** Lowercase hex SHA-256 of the bytes (RES-005). */
export const sha256Hex = (bytes: Uint8Array): string =>
  createHash('sha256').update(bytes).digest('hex')

/** What the input-file check needs of a stored file. */
export type InputFileFacts = {
  kind: 'INPUT' | 'ARTIFACT'
  project_id: string
  session_id: string | null
  bound_to: string | null
  mime_type: string
  status: string
  expires_at: number
  deleted: boolean
}

/** Who wants to use the file: the Project of the key, the Session (Turns) and the execution being created. */
export type InputFileUse = {
  projectId: string
  nowMs: number
  /** The Session of the Turn; Session files are usable only there. */
  sessionId?: string
  /** The execution the file will be bound to; a file bound to it already is still usable by it. */
  executionId?: string
  /** The Deployment's input_mime_types (DEP-005); null or absent: every allowed type. */
  acceptedMimeTypes?: readonly string[] | null
}

export type InputFileProblem =
  | { code: 'NOT_FOUND'; reason: 'ABSENT' | 'OTHER_SESSION' }
  | { code: 'FILE_EXPIRED'; reason: 'EXPIRED' | 'NOT_READY' }
  | { code: 'INVALID_INPUT'; reason: 'BOUND_TO_ANOTHER_EXECUTION' }
  | { code: 'UNSUPPORTED_FILE_TYPE'; reason: 'NOT_ACCEPTED_BY_DEPLOYMENT' }

/**
 * Whether a file may be given as Turn or Run input (SES-006, RET-006, FILE-009, DEP-005), or the error code:
 * NOT_FOUND for an absent, deleted or other Project's file (SVC-002) or another Session's file; FILE_EXPIRED
 * for an expired or not-ready file; 422 INVALID_INPUT (assumed: the document names no code; its content is not
 * gone, so not FILE_EXPIRED, which would send the client to upload it again) for one bound to another execution;
 * UNSUPPORTED_FILE_TYPE when the Deployment narrows input types and this one is not among them.
 */
export function inputFileProblem(
  file: InputFileFacts | undefined,
  use: InputFileUse,
): InputFileProblem | undefined {
  if (!file || file.kind !== 'INPUT' || file.deleted || file.project_id !== use.projectId)
    return { code: 'NOT_FOUND', reason: 'ABSENT' }
  if (file.session_id !== null && file.session_id !== use.sessionId)
    return { code: 'NOT_FOUND', reason: 'OTHER_SESSION' }
  if (isExpired(file.expires_at, use.nowMs)) return { code: 'FILE_EXPIRED', reason: 'EXPIRED' }
  if (file.status !== 'READY') return { code: 'FILE_EXPIRED', reason: 'NOT_READY' }
  if (file.bound_to !== null && file.bound_to !== use.executionId)
    return { code: 'INVALID_INPUT', reason: 'BOUND_TO_ANOTHER_EXECUTION' }
  if (
    use.acceptedMimeTypes &&
    !use.acceptedMimeTypes.map(bareMimeType).includes(bareMimeType(file.mime_type))
  )
    return { code: 'UNSUPPORTED_FILE_TYPE', reason: 'NOT_ACCEPTED_BY_DEPLOYMENT' }
  return undefined
}
