/**
 * Who may read an aggregate's events, decided from the store alone (no request context), so an open SSE
 * stream can re-check it on every delivery and keep-alive (Authentication 6, AUTH-010): the key is still
 * usable, still holds the scopes, its Project is approved, and the Session or Run is still visible to it.
 */
import type { Deps } from '../deps.js'
import { sessionExpired } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { getExecution, getSession } from '../store/executions.js'
import { getApiKey, getProject } from '../store/projects.js'
import type { AggregateKind } from './log.js'

/** Scopes each stream needs (streamSessionEvents, streamRunEvents). */
export const STREAM_SCOPES: Record<AggregateKind, readonly string[]> = {
  SESSION: ['events:read'],
  RUN: ['events:read', 'runs:read'],
}

/** An aggregate the key reads: a Session or a Run. */
export type Aggregate = { kind: AggregateKind; id: string }

/** The key's problem with reading the aggregate now, as the error it would get; undefined when it may. */
export function accessProblem(
  deps: Deps,
  apiKey: string,
  aggregate: Aggregate,
): ApiError | undefined {
  const { db, clock } = deps
  const nowMs = clock.nowMs()
  const key = getApiKey(db, apiKey)
  if (!key || key.revoked || (key.expires_at !== null && key.expires_at <= nowMs))
    return new ApiError('INVALID_API_KEY', { message: 'The API key was revoked or has expired.' })
  if (!getProject(db, key.project_id)?.approved) return new ApiError('NOT_FOUND')
  const missing = STREAM_SCOPES[aggregate.kind].filter((s) => !key.scopes.includes(s))
  if (missing.length > 0)
    return new ApiError('INSUFFICIENT_SCOPE', {
      message: `The key no longer holds ${missing.join(' and ')}.`,
      details: { required_scopes: [STREAM_SCOPES[aggregate.kind]] },
    })
  if (aggregate.kind === 'SESSION') {
    const s = getSession(db, aggregate.id)
    if (
      !s ||
      s.project_id !== key.project_id ||
      !key.deployment_ids.includes(s.deployment_id) ||
      s.deleted_at !== null
    )
      return new ApiError('NOT_FOUND', { message: 'No such Session.' })
    if (s.workflow_run_id !== null) return new ApiError('WORKFLOW_MANAGED_SESSION')
    if (sessionExpired(s.last_activity_at, nowMs))
      return new ApiError('SESSION_EXPIRED', {
        message: 'The Session passed its 30-day idle retention.',
      })
    return undefined
  }
  const run = getExecution(db, aggregate.id)
  if (
    !run ||
    run.kind !== 'RUN' ||
    run.project_id !== key.project_id ||
    (run.deleted_at ?? null) !== null
  )
    return new ApiError('NOT_FOUND', { message: 'No such Run.' })
  return undefined
}
