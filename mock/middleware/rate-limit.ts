/**
 * Call-rate limits on the virtual clock (Limits > Call rates): each request of an operation's class is counted
 * per key, per Project and per Deployment (when the request names one); the first full counter answers
 * 429 RATE_LIMITED with Retry-After and details.reset_at. Off with --no-rate-limits.
 *
 * What counts (assumed; the document does not say): a request counts once it passed authentication, scopes,
 * headers and body validation (it runs after them), so a malformed request neither uses up the quota nor
 * hides its own error behind a 429; an idempotent resend answered from its stored receipt (the replay, or
 * IDEMPOTENCY_CONFLICT) creates nothing, so it is neither counted nor refused.
 */
import type { Context } from 'hono'
import type { Deps, Env } from '../deps.js'
import { decide, effectiveLimit, type RateClass, type RateScope } from '../domain/rate-limits.js'
import { ApiError } from '../errors.js'
import { getDeployment } from '../store/deployments.js'
import { getSession } from '../store/executions.js'
import { getArtifactFile } from '../store/files.js'
import { getApiKey } from '../store/projects.js'
import { getRateWindow, putRateWindow } from '../store/rate-windows.js'
import type { Guard } from './guard.js'

/**
 * RATE-002: the Deployment a request counts against: the path's Deployment, else the Deployment of the
 * path's Session or of the path's artifact.
 */
function deploymentOfRequest(c: Context<Env>): string | undefined {
  const { db } = c.var.deps
  const deploymentId = c.req.param('deployment_id')
  if (deploymentId) return deploymentId
  const sessionId = c.req.param('session_id')
  if (sessionId) return getSession(db, sessionId)?.deployment_id
  const artifactId = c.req.param('artifact_id')
  if (artifactId) return getArtifactFile(db, artifactId)?.deployment_id ?? undefined
  return undefined
}

export const rateLimit = (cls: RateClass): Guard =>
  function rateLimit(c) {
    const { db, settings, receipts } = c.var.deps
    const auth = c.var.auth
    if (!settings.rateLimits || !auth) return
    const idempotencyKey = c.var.input?.idempotencyKey
    if (
      idempotencyKey !== undefined &&
      receipts.live(auth.projectId, idempotencyKey, c.var.deps.clock.nowMs())
    )
      return
    const key = getApiKey(db, auth.key)
    const perMinute = `${cls}_per_minute` as const
    const scopes: RateScope[] = [
      { id: `key:${auth.key}:${cls}`, limit: effectiveLimit(cls, key?.[perMinute]) },
      { id: `project:${auth.projectId}:${cls}`, limit: effectiveLimit(cls) },
    ]
    const deploymentId = deploymentOfRequest(c)
    const deployment = deploymentId ? getDeployment(db, deploymentId) : undefined
    if (deployment && deployment.project_id === auth.projectId) {
      scopes.push({
        id: `deployment:${deployment.id}:${cls}`,
        limit: effectiveLimit(cls, deployment.rate_limits[perMinute]),
      })
    }
    chargeRate(c.var.deps, scopes, (limit, scope) => ({
      message: `Call rate exceeded: ${limit} ${cls} requests per minute.`,
      details: { limit, rate_class: cls, scope },
    }))
  }

/**
 * Charges one request to every scope in one transaction, or throws 429 RATE_LIMITED with Retry-After and
 * details.reset_at (RATE-005) when one of them is full; a refused request is not counted. `describe` gives the
 * message and the details of the full scope (its limit and the kind of scope: key, project, deployment, ...).
 */
export function chargeRate(
  deps: Deps,
  scopes: RateScope[],
  describe: (limit: number, scope: string) => { message: string; details: Record<string, unknown> },
): void {
  const { db, clock } = deps
  const nowMs = clock.nowMs()
  const decision = db.tx(() => {
    const d = decide(
      scopes.map((scope) => ({ scope, window: getRateWindow(db, scope.id) })),
      nowMs,
    )
    if (d.allowed) for (const { id, window } of d.windows) putRateWindow(db, id, window)
    return d
  })
  if (decision.allowed) return
  const { message, details } = describe(decision.limit, decision.scope.split(':')[0]!)
  throw new ApiError('RATE_LIMITED', {
    message,
    retryAfterS: Math.max(1, Math.ceil((decision.resetAtMs - nowMs) / 1000)),
    details: { reset_at: new Date(decision.resetAtMs).toISOString(), ...details },
  })
}
