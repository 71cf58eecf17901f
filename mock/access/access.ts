/**
 * Access (Authentication 3-6; What the service does: isolation): the one home of "is this key usable" and
 * "may this key see this Deployment, Session or Run". Routes, uploads, artifact reads and an open SSE
 * stream's re-check on every delivery and keep-alive (AUTH-010) all ask here, so every path answers alike:
 * anything outside the key's access is 404 NOT_FOUND, as if absent (SVC-002).
 */
import type { AuthInfo, Deps } from '../deps.js'
import { ApiError } from '../errors.js'
import type { AggregateKind } from '../events/log.js'
import type { Db } from '../store/db.js'
import { getDeployment, type Deployment } from '../store/deployments.js'
import {
  getExecution,
  getSession,
  viewSession,
  type RunRecord,
  type SessionRecord,
} from '../store/executions.js'
import { getArtifactFile, getDownloadToken, type StoredFile } from '../store/files.js'
import { getApiKey, getApiKeyAndApproval, getProject, type ApiKey } from '../store/projects.js'
import { getWorkflow, type Workflow } from '../store/workflows.js'
import { sha256Hex } from '../domain/files.js'
import { isExpired, runContentExpired, sessionExpired } from '../domain/retention.js'

/** What a key reaches: its Project and the Deployments allowed for it. */
export type Grant = Pick<AuthInfo, 'projectId' | 'deploymentIds'>

/** AUTH-007: the one rule of a key's use: neither revoked nor expired. */
const keyInForce = (key: ApiKey, nowMs: number): boolean =>
  !key.revoked && (key.expires_at === null || key.expires_at > nowMs)

/** AUTH-006, AUTH-007: a key that exists and is neither revoked nor expired; undefined otherwise. */
export function usableKey(db: Db, token: string | undefined, nowMs: number): ApiKey | undefined {
  const key = token === undefined ? undefined : getApiKey(db, token)
  return key && keyInForce(key, nowMs) ? key : undefined
}

/** usableKey and whether the key's Project is approved for the beta, read in one statement. */
export function usableKeyAndApproval(
  db: Db,
  token: string | undefined,
  nowMs: number,
): { key: ApiKey; approved: boolean } | undefined {
  const found = token === undefined ? undefined : getApiKeyAndApproval(db, token)
  if (!found) return undefined
  return keyInForce(found.key, nowMs) ? found : undefined
}

/** A Deployment of the key's Project that the key may call; else 404 NOT_FOUND. */
export function callableDeployment(deps: Deps, grant: Grant, id: string): Deployment {
  const deployment = getDeployment(deps.db, id)
  if (!deployment || deployment.project_id !== grant.projectId || !grant.deploymentIds.includes(id))
    throw new ApiError('NOT_FOUND', { message: 'No such Deployment.' })
  return deployment
}

/**
 * A Session the key may see: of its Project, not deleted, of a Deployment the key may call; else 404
 * NOT_FOUND. Run request rule 6: one held by workflow steps is 409 WORKFLOW_MANAGED_SESSION; one past its
 * 30-day idle retention is 410 SESSION_EXPIRED.
 */
export function visibleSession(deps: Deps, grant: Grant, id: string): Readonly<SessionRecord> {
  const session = viewSession(deps.db, id)
  if (!session || session.project_id !== grant.projectId || session.deleted_at !== null)
    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })
  // RUN-037: a Session held by workflow steps (its "Deployment" is the workflow) is refused on Session paths.
  if (session.workflow_run_id !== null) throw new ApiError('WORKFLOW_MANAGED_SESSION')
  if (!grant.deploymentIds.includes(session.deployment_id))
    throw new ApiError('NOT_FOUND', { message: 'No such Session.' })
  if (sessionExpired(session.last_activity_at, deps.clock.nowMs()))
    throw new ApiError('SESSION_EXPIRED', {
      message: 'The Session passed its 30-day idle retention.',
    })
  return session
}

/**
 * A Run of the key's Project that is not deleted (DEL-001); else 404 NOT_FOUND. RET-013: a Run past its content
 * retention (RET-010) is 410 on every read path (detail, outputs, events, cancel, delete, actions). Assumed
 * code: SESSION_EXPIRED with details.content_expired true (the document names no code for Runs; a Run's
 * content lives in the internal Sessions of its steps). A Run event stream with a cursor turns it into
 * EVENT_CURSOR_EXPIRED with content_expired (SSE-019, mock/routes/events.ts).
 */
export function visibleRun(deps: Deps, grant: Grant, id: string): RunRecord {
  const e = getExecution(deps.db, id)
  if (
    !e ||
    e.kind !== 'RUN' ||
    !e.run ||
    e.project_id !== grant.projectId ||
    (e.deleted_at ?? null) !== null
  )
    throw new ApiError('NOT_FOUND', { message: 'No such Run.' })
  if (runContentExpired(e.completed_at, e.run.retention_days, deps.clock.nowMs()))
    throw new ApiError('SESSION_EXPIRED', {
      message: "The Run's content passed its retention (retention_days after the Run ended).",
      details: { run_id: e.id, content_expired: true },
    })
  return e as RunRecord
}

/**
 * An artifact the key may read now (ART-002: checked on every call): of its Project, of a Deployment the key
 * may call, and of a Session that still exists; otherwise 404 NOT_FOUND as if absent (SVC-002).
 */
export function visibleArtifact(deps: Deps, grant: Grant, artifactId: string): StoredFile {
  const a = getArtifactFile(deps.db, artifactId)
  if (
    !a ||
    a.project_id !== grant.projectId ||
    (a.deployment_id !== null && !grant.deploymentIds.includes(a.deployment_id)) ||
    (a.session_id !== null && findSession(deps.db, a.session_id, deps.clock.nowMs()) === undefined)
  )
    throw new ApiError('NOT_FOUND', { message: 'No such artifact.' })
  return a
}

/** The scopes that read a review file of an approval action (ACT-021). */
export const REVIEW_FILE_SCOPES = ['artifacts:read', 'actions:approve'] as const

/**
 * ACT-021 (Approval handling rule 4): a review file of an approval action is read (its metadata and its
 * download address) only by a key holding artifacts:read and the action's approval permission, the explicit
 * actions:approve delegation; else 403 INSUFFICIENT_SCOPE naming both (the key never gains it on its own).
 */
export function requireReviewPermission(auth: Pick<AuthInfo, 'scopes'>, file: StoredFile): void {
  if (file.review_action_id === null) return
  if (REVIEW_FILE_SCOPES.every((s) => auth.scopes.includes(s))) return
  throw new ApiError('INSUFFICIENT_SCOPE', {
    message:
      'This is a review file of an approval: reading it needs artifacts:read and actions:approve.',
    details: { required_scopes: [[...REVIEW_FILE_SCOPES]] },
  })
}

/** A Workflow of the key's Project, or 404 NOT_FOUND exactly as for an absent one (AUTH-009). */
export function visibleWorkflow(deps: Deps, grant: Grant, id: string): Workflow {
  const workflow = getWorkflow(deps.db, id)
  if (!workflow || workflow.project_id !== grant.projectId)
    throw new ApiError('NOT_FOUND', { message: 'No such workflow.' })
  return workflow
}

/** The 404 of a download address that is unknown, another artifact's, used or expired (ART-004, ART-005). */
export const downloadNotFound = (): ApiError =>
  new ApiError('NOT_FOUND', {
    message: 'This download address is unknown, used or expired: issue a new one.',
  })

/**
 * AUTH-013: the one-use token of a download address replaces the bearer key: the token's hash when it was
 * issued for this artifact, is unused and unexpired (else 404), and the issuing key's access when that key
 * still exists (the download counts against its call rate).
 */
export function downloadGrant(
  deps: Deps,
  artifactId: string,
  token: string | undefined,
): { tokenHash: string; auth: AuthInfo | undefined } {
  const tokenHash = token ? sha256Hex(Buffer.from(token, 'utf8')) : undefined
  const issued = tokenHash ? getDownloadToken(deps.db, tokenHash) : undefined
  if (
    !tokenHash ||
    !issued ||
    issued.artifact_id !== artifactId ||
    issued.used_at !== null ||
    isExpired(issued.expires_at, deps.clock.nowMs())
  )
    throw downloadNotFound()
  const key = getApiKey(deps.db, issued.api_key)
  const auth = key && {
    projectId: key.project_id,
    key: key.key,
    scopes: key.scopes,
    deploymentIds: key.deployment_ids,
  }
  return { tokenHash, auth }
}

/** What artifact reads and the control API need to know of a Session. EXPIRED: content retention ended. */
export type SessionInfo = {
  project_id: string
  deployment_id: string
  status: 'ACTIVE' | 'CLOSED' | 'EXPIRED'
  /** Held by a workflow step: Session paths refuse it (409 WORKFLOW_MANAGED_SESSION). */
  workflow_managed: boolean
}

/** A Session that is not deleted, whoever asks (undefined: absent or deleted). */
export function findSession(db: Db, sessionId: string, nowMs: number): SessionInfo | undefined {
  const s = getSession(db, sessionId)
  if (!s || s.deleted_at !== null) return undefined
  const expired = sessionExpired(s.last_activity_at, nowMs)
  return {
    project_id: s.project_id,
    deployment_id: s.deployment_id,
    status: expired ? 'EXPIRED' : s.status,
    workflow_managed: s.workflow_run_id !== null,
  }
}

/** Scopes each stream needs (streamSessionEvents, streamRunEvents). */
export const STREAM_SCOPES: Record<AggregateKind, readonly string[]> = {
  SESSION: ['events:read'],
  RUN: ['events:read', 'runs:read'],
}

/** An aggregate the key reads: a Session or a Run. */
export type Aggregate = { kind: AggregateKind; id: string }

/**
 * The key's problem with reading the aggregate's events now, as the error it would get; undefined when it
 * may. Decided from the store alone, so an open stream re-checks it on every delivery and keep-alive.
 */
export function accessProblem(
  deps: Deps,
  apiKey: string,
  aggregate: Aggregate,
): ApiError | undefined {
  const { db, clock } = deps
  const key = usableKey(db, apiKey, clock.nowMs())
  if (!key)
    return new ApiError('INVALID_API_KEY', { message: 'The API key was revoked or has expired.' })
  if (!getProject(db, key.project_id)?.approved) return new ApiError('NOT_FOUND')
  const missing = STREAM_SCOPES[aggregate.kind].filter((s) => !key.scopes.includes(s))
  if (missing.length > 0)
    return new ApiError('INSUFFICIENT_SCOPE', {
      message: `The key no longer holds ${missing.join(' and ')}.`,
      details: { required_scopes: [STREAM_SCOPES[aggregate.kind]] },
    })
  const grant: Grant = { projectId: key.project_id, deploymentIds: key.deployment_ids }
  try {
    if (aggregate.kind === 'SESSION') visibleSession(deps, grant, aggregate.id)
    else visibleRun(deps, grant, aggregate.id)
    return undefined
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
}
