/**
 * route(app, operationId, handler): serves one documented operation. Everything the document says about the
 * request comes from the operation table (spec/openapi.yaml): authentication and scopes, delegated access and
 * correlation id, call-rate class, body reading and validation, Idempotency-Key. Handlers get c.var.auth and
 * c.var.input and return a Reply (or a Response for streams and bytes); they never build an error body.
 *
 * An idempotent operation's handler is synchronous and runs inside one transaction with the receipt lookup and
 * store, so two concurrent requests with one key create one execution and a retry replays the receipt.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import type { Env } from '../deps.js'
import { requestFingerprint } from '../domain/idempotency.js'
import { idempotencyExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { authenticateApiKey, requireScopes } from '../middleware/api-key.js'
import { authenticateOwner } from '../middleware/owner-token.js'
import { rateLimit } from '../middleware/rate-limit.js'
import { readBody } from '../middleware/request-body.js'
import { checkCorrelationId, refuseDelegatedAccess } from '../middleware/request-headers.js'
import { requireIdempotencyKey, validateRequest } from '../middleware/validate.js'
import { liveReceipt, putIdempotency } from '../store/idempotency.js'
import { loadOperations, type OperationSpec } from './operations.js'

/** A successful answer: status, JSON body, extra headers; `execution` ties an idempotency receipt to it. */
export type Reply = {
  status: 200 | 201 | 202
  body: unknown
  headers?: Record<string, string>
  /** Turn or Run id: the idempotency receipt is kept until this execution ends (and at least 24 hours). */
  execution?: string
}

export type RouteHandler = (c: Context<Env>) => Reply | Response | Promise<Reply | Response>

const OPERATIONS = loadOperations()

/** The operation's spec, for handlers and tests. */
export function operation(operationId: string): OperationSpec {
  const op = OPERATIONS.get(operationId)
  if (!op) throw new Error(`no operation ${operationId} in spec/openapi.yaml`)
  return op
}

/** The middleware chain the document implies for an operation, in the order errors are decided. */
export function pipeline(op: OperationSpec): MiddlewareHandler<Env>[] {
  const chain: MiddlewareHandler<Env>[] = [
    async function setOperation(c, next) {
      c.set('op', op)
      await next()
    },
  ]
  if (op.security.kind === 'apiKey') {
    chain.push(
      authenticateApiKey(),
      refuseDelegatedAccess(),
      checkCorrelationId(),
      requireScopes(op.security.scopes),
    )
  } else if (op.security.kind === 'ownerToken') {
    chain.push(authenticateOwner())
  } else {
    chain.push(refuseDelegatedAccess(), checkCorrelationId())
  }
  if (op.idempotent) chain.push(requireIdempotencyKey())
  chain.push(...readBody(op), validateRequest(op))
  // RATE (assumed accounting): a request counts once it passed validation; see middleware/rate-limit.ts.
  if (op.rateClass && op.security.kind === 'apiKey') chain.push(rateLimit(op.rateClass))
  return chain
}

export type RouteOptions = {
  /**
   * Asynchronous work after the pipeline and before the handler (an idempotent handler is synchronous and runs
   * inside the receipt transaction), e.g. inspecting an upload's bytes. It may throw an ApiError.
   */
  prepare?: (c: Context<Env>) => Promise<void>
}

/** Registers the operation on a sub-app mounted at /v1 or /api/runtime. */
export function route(
  app: Hono<Env>,
  operationId: string,
  handler: RouteHandler,
  opts: RouteOptions = {},
): void {
  const op = operation(operationId)
  const mount = op.path.startsWith('/v1/') ? '/v1' : '/api/runtime'
  const serve: MiddlewareHandler<Env> = async function serve(c) {
    if (opts.prepare) await opts.prepare(c)
    const reply = op.idempotent ? idempotent(c, op, handler) : await handler(c)
    return reply instanceof Response ? reply : render(c, reply)
  }
  app.on([op.method], [op.honoPath.slice(mount.length)], ...pipeline(op), serve)
}

function render(c: Context<Env>, reply: Reply): Response {
  for (const [k, v] of Object.entries(reply.headers ?? {})) c.header(k, v)
  return c.json(reply.body as object, reply.status as ContentfulStatusCode)
}

/** IDEM rules: replay, conflict, or run the handler and keep its receipt, all in one transaction. */
function idempotent(c: Context<Env>, op: OperationSpec, handler: RouteHandler): Reply | Response {
  const { db, clock } = c.var.deps
  const input = c.var.input!
  const projectId = c.var.auth?.projectId ?? c.var.ownerProjectId!
  const key = input.idempotencyKey!
  const fingerprint = requestFingerprint({
    operationId: op.operationId,
    path: c.req.path,
    body: input.body,
    upload: input.upload,
  })
  // One instant per request: created_at, deadlines and idempotency_expires_at agree (RET-001).
  return clock.pinned(() =>
    db.tx(() => {
      const nowMs = clock.nowMs()
      const stored = liveReceipt(db, projectId, key, nowMs)
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          throw new ApiError('IDEMPOTENCY_CONFLICT', {
            message:
              'This Idempotency-Key was used with another request; send the same body or use a new key.',
            details: { idempotency_expires_at: new Date(stored.expires_at).toISOString() },
          })
        }
        c.header('Idempotent-Replayed', 'true')
        return {
          status: stored.status as Reply['status'],
          body: JSON.parse(stored.body_json) as unknown,
        }
      }
      const expiresAt = idempotencyExpiresAt(nowMs)
      c.set('input', { ...input, idempotencyExpiresAt: new Date(expiresAt).toISOString() })
      const reply = handler(c)
      if (reply instanceof Promise)
        throw new Error(`the handler of idempotent ${op.operationId} must be synchronous`)
      if (reply instanceof Response)
        throw new Error(`the handler of idempotent ${op.operationId} must return a Reply`)
      putIdempotency(db, {
        project_id: projectId,
        key,
        operation_id: op.operationId,
        path: c.req.path,
        fingerprint,
        status: reply.status,
        body_json: JSON.stringify(reply.body),
        created_at: nowMs,
        expires_at: expiresAt,
        execution_ref: reply.execution ?? null,
      })
      return reply
    }),
  )
}
