/**
 * route(app, operationId, handler): serves one documented operation. Everything the document says about the
 * request comes from the operation table (spec/openapi.yaml): authentication and scopes, delegated access and
 * correlation id, call-rate class, body reading and validation, Idempotency-Key. Handlers get the context and
 * the typed, validated request (mock/http/typed.ts) and return a Reply of the operation's documented success
 * responses (or a Response for streams and bytes); they never build an error body.
 *
 * An idempotent operation's handler is synchronous and runs inside one transaction with the receipt lookup and
 * store, so two concurrent requests with one key create one execution and a retry replays the receipt.
 */
import type { Context, Handler, Hono } from 'hono'
import type { Env, RequestInput } from '../deps.js'
import { requestFingerprint } from '../domain/idempotency.js'
import { idempotencyExpiresAt } from '../domain/retention.js'
import { ApiError } from '../errors.js'
import { authenticateApiKey, requireScopes } from '../middleware/api-key.js'
import type { Guard } from '../middleware/guard.js'
import { answer, answerHeader } from '../util/answer.js'
import { iso } from '../util/iso.js'
import { Recent } from '../util/recent.js'
import { authenticateOwner } from '../middleware/owner-token.js'
import { rateLimit } from '../middleware/rate-limit.js'
import { readBody } from '../middleware/request-body.js'
import { checkCorrelationId, refuseDelegatedAccess } from '../middleware/request-headers.js'
import {
  optionalIdempotencyKey,
  requireIdempotencyKey,
  validateRequest,
} from '../middleware/validate.js'
import { offeringReceipt } from '../store/carried-receipts.js'
import type { FoundReceipt } from '../store/idempotency.js'
import { carriedAnswerJson, carriesReceipt, rebuildsAnswer } from './receipt-bodies.js'
import { loadOperations, type OperationSpec } from './operations.js'
import {
  requestOf,
  securityKind,
  type AnyReply,
  type HandlerOf,
  type OperationId,
  type Prepared,
  type TypedRequest,
} from './typed.js'

/** A handler as route() calls it, whatever its operation (it is given its own operation's request). */
type AnyHandler = (
  c: Context<Env>,
  req: unknown,
) => AnyReply | Response | Promise<AnyReply | Response>

const OPERATIONS = loadOperations()
/** Fingerprints kept per operation (the oldest forgotten first), and the longest body text kept. */
const KEPT_FINGERPRINTS = 64
const MAX_KEPT_TEXT = 8 * 1024

/** The operation's spec, for handlers and tests. */
export function operation(operationId: string): OperationSpec {
  const op = OPERATIONS.get(operationId)
  if (!op) throw new Error(`no operation ${operationId} in spec/openapi.yaml`)
  return op
}

/** The checks the document implies for an operation, in the order errors are decided. */
export function pipeline(op: OperationSpec): Guard[] {
  const chain: Guard[] = []
  if (op.security.kind === 'apiKey') {
    chain.push(
      authenticateApiKey(),
      refuseDelegatedAccess(),
      checkCorrelationId(),
      // x-scope-by-body: the handler checks the scope the body's kind needs (its own refusal code).
      ...(op.scopeByBody ? [] : [requireScopes(op.security.scopes)]),
    )
  } else if (op.security.kind === 'ownerToken') {
    chain.push(authenticateOwner())
  } else {
    chain.push(refuseDelegatedAccess(), checkCorrelationId())
  }
  if (op.idempotent) chain.push(requireIdempotencyKey())
  else if (op.idempotencyOptional) chain.push(optionalIdempotencyKey())
  chain.push(...readBody(op), validateRequest(op))
  // RATE (assumed accounting): a request counts once it passed validation; see middleware/rate-limit.ts.
  if (op.rateClass && op.security.kind === 'apiKey') chain.push(rateLimit(op.rateClass))
  return chain
}

export type RouteOptions<O extends OperationId> = {
  /**
   * Asynchronous work after the pipeline and before the handler (an idempotent handler is synchronous and runs
   * inside the receipt transaction), e.g. inspecting an upload's bytes. It may throw an ApiError; what it
   * returns is added to the request the handler gets.
   */
  prepare?: (c: Context<Env>, req: TypedRequest<O>) => Promise<Prepared>
}

/** Registers the operation on a sub-app mounted at /v1 or /api/runtime. */
export function route<O extends OperationId>(
  app: Hono<Env>,
  operationId: O,
  handler: HandlerOf[O],
  opts: RouteOptions<O> = {},
): void {
  const op = operation(operationId)
  // The request types assume this authentication (req.auth or req.ownerProjectId): it must be the document's.
  if (securityKind(operationId) !== op.security.kind)
    throw new Error(`${operationId}: mock/http/typed.ts assumes ${securityKind(operationId)} auth`)
  // A handler takes only its own operation's request, which is what it is given below (requestOf(c, op));
  // its Reply<O> is one of the AnyReply shapes render() and the idempotency receipt take.
  const run = handler as unknown as AnyHandler
  const mount = op.path.startsWith('/v1/') ? '/v1' : '/api/runtime'
  const guards = pipeline(op)
  /**
   * Fingerprints of recent JSON body texts (a resend carries the same text). The validated body the
   * fingerprint is made of is a function of the text (parsing and validation are deterministic), so the same
   * path and text have the same fingerprint.
   */
  const fingerprints = new Recent<string>(KEPT_FINGERPRINTS)
  const fingerprintOf = (c: Context<Env>, input: RequestInput): string => {
    const make = () =>
      requestFingerprint({
        operationId: op.operationId,
        path: c.req.path,
        body: input.body,
        upload: input.upload,
      })
    const text = input.text
    if (text === undefined || input.upload || text.length > MAX_KEPT_TEXT) return make()
    return fingerprints.get(`${c.req.path}\n${text}`, make)
  }
  // One handler per operation: its guards are plain calls, awaited only when one must wait (a body), and an
  // answer ready without waiting (a read, a replay) is returned as it is, not in a promise.
  const answerOf = (c: Context<Env>, reply: AnyReply | StoredReply | Response): Response =>
    reply instanceof Response ? reply : render(c, reply)
  const respond = (c: Context<Env>): Response | Promise<Response> => {
    const keyed = op.idempotent || (op.idempotencyOptional && c.var.input?.idempotencyKey)
    if (keyed) return answerOf(c, idempotent(c, op, run, fingerprintOf(c, c.var.input!)))
    const reply = run(c, requestOf(c, op))
    return reply instanceof Promise ? reply.then((r) => answerOf(c, r)) : answerOf(c, reply)
  }
  const prepared = async (c: Context<Env>): Promise<Response> => {
    const extra = await opts.prepare!(c, requestOf<O>(c, op))
    c.set('input', Object.assign({}, c.var.input!, extra))
    return respond(c)
  }
  const guarded = (c: Context<Env>, from: number): Response | Promise<Response> => {
    for (let i = from; i < guards.length; i++) {
      const waiting = guards[i]!(c)
      if (waiting) return waiting.then(() => guarded(c, i + 1))
    }
    return opts.prepare ? prepared(c) : respond(c)
  }
  const serve: Handler<Env> = function serve(c) {
    c.set('op', op)
    return guarded(c, 0)
  }
  app.on([op.method], [op.honoPath.slice(mount.length)], serve)
}

function render(c: Context<Env>, reply: AnyReply | StoredReply): Response {
  const json = 'json' in reply ? reply.json : JSON.stringify(reply.body)
  return answer(c, json, reply.status, {
    'Content-Type': 'application/json',
    ...reply.headers,
  })
}

/** A reply whose body is already JSON text (a receipt's, stored or just kept): sent as it is. */
type StoredReply = { status: AnyReply['status']; json: string; headers?: Record<string, string> }

/** IDEM rules: the stored receipt's answer (a replay), 409 IDEMPOTENCY_CONFLICT, or undefined if none. */
function answerFromReceipt(
  c: Context<Env>,
  stored: FoundReceipt | undefined,
  fingerprint: string,
): StoredReply | undefined {
  if (!stored) return undefined
  if (stored.fingerprint !== fingerprint) {
    throw new ApiError('IDEMPOTENCY_CONFLICT', {
      message:
        'This Idempotency-Key was used with another request; send the same body or use a new key.',
      details: { idempotency_expires_at: iso(stored.expires_at) },
    })
  }
  answerHeader(c, 'Idempotent-Replayed', 'true')
  const json = stored.body_json ?? carriedAnswerJson(stored.answer!, stored.expires_at)
  return { status: stored.status as AnyReply['status'], json }
}

/** IDEM rules: replay, conflict, or run the handler and keep its receipt, all in one transaction. */
function idempotent(
  c: Context<Env>,
  op: OperationSpec,
  handler: AnyHandler,
  fingerprint: string,
): AnyReply | StoredReply | Response {
  const { db, clock, receipts } = c.var.deps
  const input = c.var.input!
  const projectId = c.var.auth?.projectId ?? c.var.ownerProjectId!
  const key = input.idempotencyKey!
  // A receipt that answers is a replay (or a conflict) and writes nothing: answered without a transaction.
  // Everything below is synchronous, so no receipt can be stored between this lookup and the handler's run
  // (and a receipt the lookup did not find cannot start holding later).
  const replayed = answerFromReceipt(c, receipts.live(projectId, key, clock.nowMs()), fingerprint)
  if (replayed) return replayed
  // One instant per request: created_at, deadlines and idempotency_expires_at agree (RET-001).
  return clock.pinned(() =>
    db.tx(() => {
      const nowMs = clock.nowMs()
      const expiresAt = idempotencyExpiresAt(nowMs)
      c.set('input', Object.assign({}, input, { idempotencyExpiresAt: iso(expiresAt) }))
      const run = () => handler(c, requestOf(c, op))
      // The receipt of a request creating an execution is offered to that execution's row
      // (store/carried-receipts.ts): no receipt row then.
      const { result: reply, carrier } = carriesReceipt(op.operationId)
        ? offeringReceipt(db, { key, fingerprint, expires_at: expiresAt }, run)
        : { result: run(), carrier: undefined }
      if (reply instanceof Promise)
        throw new Error(`the handler of idempotent ${op.operationId} must be synchronous`)
      if (reply instanceof Response)
        throw new Error(`the handler of idempotent ${op.operationId} must return a Reply`)
      // The body is serialised once: the receipt keeps the text the answer sends. A carried receipt is kept
      // when its execution is the one the answer names and its row rebuilds this very text (compared field
      // by field, not serialised again); else a row is.
      const json = JSON.stringify(reply.body)
      const carried =
        carrier !== undefined &&
        reply.status === 202 &&
        carrier.id === reply.execution &&
        rebuildsAnswer(carrier, expiresAt, reply.body)
      receipts.put(
        {
          project_id: projectId,
          key,
          operation_id: op.operationId,
          path: c.req.path,
          fingerprint,
          status: reply.status,
          body_json: json,
          created_at: nowMs,
          expires_at: expiresAt,
          execution_ref: reply.execution ?? null,
        },
        carried ? carrier : undefined,
      )
      return { status: reply.status, json, headers: reply.headers }
    }),
  )
}
