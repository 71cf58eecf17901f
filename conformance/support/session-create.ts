/**
 * Session creation (POST /v1/deployments/{deployment_id}/sessions) as the suite sends it: fresh Idempotency-Keys,
 * JSON bodies (objects serialized, strings sent as they are), 429s sent again after Retry-After (see pace.ts).
 */
import { randomUUID } from 'node:crypto'
import type { ApiResponse } from './client.js'
import { retryRateLimited } from './pace.js'
import type { Target } from './target.js'

export type SessionReceipt = {
  session_id: string
  turn_id: string
  status: string
  idempotency_expires_at: string
  status_url: string
  events_url: string
}

export const sessionsPath = (deploymentId: string): string =>
  `/v1/deployments/${deploymentId}/sessions`

/** A new Idempotency-Key, unique across runs (also against a real deployment that is never reset). */
export const newIdempotencyKey = (label = 'conformance'): string => `${label}-${randomUUID()}`

export type CreateSessionOptions = {
  /** Default: the world's full key. */
  key?: string
  /** Idempotency-Key; default a new one; null sends none. */
  idem?: string | null
  /** Default: the world's first ACTIVE Deployment. */
  deploymentId?: string
  headers?: Record<string, string>
  /** Resend after Retry-After on 429 (default true). */
  pace?: boolean
}

/** Creates a Session; a string body is sent as it is, as application/json unless headers say otherwise. */
export function createSession(
  target: Target,
  body: unknown,
  opts: CreateSessionOptions = {},
): Promise<ApiResponse> {
  const idem = opts.idem === null ? undefined : (opts.idem ?? newIdempotencyKey())
  const headers =
    typeof body === 'string' || Buffer.isBuffer(body)
      ? { 'Content-Type': 'application/json', ...opts.headers }
      : opts.headers
  const send = () =>
    target.api.post(sessionsPath(opts.deploymentId ?? target.world.deployments.active), body, {
      key: opts.key ?? target.world.keys.full,
      idem,
      headers,
    })
  return opts.pace === false ? send() : retryRateLimited(target, send, 5)
}
