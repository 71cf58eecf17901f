/**
 * Observes every /v1 request that carries a bearer key for the client referee (mock/referee): what was sent
 * (method, path, Idempotency-Key, a digest of query and body), when on the virtual clock, and what the client
 * got: the status, the envelope's retryable and Retry-After, or no answer at all when a fault rule dropped
 * the connection. The service edge (middleware/edge.ts) calls it outside the fault rules, so that it sees
 * their answers and drops. Hot path: a request of a key with nothing on record costs a few regex tests and
 * map reads, and no promise; digests are made only when a rule needs them (keyed requests, errors, resends
 * of an answered error).
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'
import { canonicalJson } from '../domain/idempotency.js'
import { sha256Hex } from '../util/sha256.js'
import type { Delivery, Observation } from '../referee/rules.js'
import { bearerToken } from './api-key.js'
import { framedByNode, headerOf, queryOf } from './node-request.js'
import { MAX_JSON_BYTES } from './request-body.js'

const POLL = /^\/v1\/(?:sessions\/[^/]+\/turns\/[^/]+|runs\/[^/]+)$/
const STREAM = /^\/v1\/(sessions|runs)\/([^/]+)\/events$/
const CREATES_WORK =
  /^\/v1\/(?:deployments\/[^/]+\/sessions|sessions\/[^/]+\/turns|workflows\/[^/]+\/runs)$/
/** Statuses a client treats as retryable without an envelope (Retry rules 5). */
const BARE_RETRYABLE = new Set([429, 502, 503, 504])

const sha256 = sha256Hex

/** The longest content text kept as it is (an operation's path is under 150 characters). */
const MAX_PLAIN_CONTENT = 256

/**
 * A keyed request's content (method, path and body digest) as the referee compares it: the text itself when
 * short (no hash per request; it cannot equal a digest, which has no space), else its SHA-256.
 */
function contentOf(method: string, path: string, digest: string): string {
  const text = `${method} ${path}\n${digest}`
  return text.length <= MAX_PLAIN_CONTENT ? text : sha256(text)
}

/**
 * A digest of the request body: an upload's file as the app read it, else the raw text (Hono keeps what the
 * app read; JSON canonicalised, since validation fills in defaults on the parsed copy); undefined when the
 * body cannot be read (a body refused while it was still arriving).
 */
async function bodyDigest(c: Context<Env>): Promise<string | undefined> {
  const upload = c.var.input?.upload
  if (upload)
    return sha256(`upload\n${upload.filename}\n${upload.mimeType}\n${sha256(upload.bytes)}`)
  // An upload the app did not read: its raw form (boundary) differs between resends, so it is not judged.
  if ((headerOf(c, 'content-type') ?? '').toLowerCase().startsWith('multipart/')) return undefined
  if (!bodyReadable(c)) return undefined
  try {
    const text = bodyless(c) ? '' : await c.req.text()
    // A resend carries the same text: its digest is made once (the referee keeps the last few).
    return c.var.deps.referee.digestOf(text, () => {
      try {
        return sha256(`json\n${canonicalJson(JSON.parse(text))}`)
      } catch {
        return sha256(`raw\n${text}`)
      }
    })
  } catch {
    return undefined
  }
}

/**
 * A request Node framed without Content-Length or Transfer-Encoding has no body (RFC 9112 6.3): its digest is
 * that of the empty text, without building the full Request that reading it would take. (In process, a body
 * comes without Content-Length: it is read.)
 */
function bodyless(c: Context<Env>): boolean {
  return (
    framedByNode(c) &&
    Object.keys(c.req.bodyCache).length === 0 &&
    headerOf(c, 'content-length') === undefined &&
    headerOf(c, 'transfer-encoding') === undefined
  )
}

/**
 * Whether the body may be read for a digest: already read by the app (Hono keeps it), absent, or a declared
 * length within the JSON limit. Never a body the app refused unread for its size or one of unknown length:
 * waiting for it would hold the answer (an early 413 leaves the rest unsent).
 */
function bodyReadable(c: Context<Env>): boolean {
  if (Object.keys(c.req.bodyCache).length > 0) return true
  const length = headerOf(c, 'content-length')
  if (length === undefined) return headerOf(c, 'transfer-encoding') === undefined
  return /^\d+$/.test(length) && Number(length) <= MAX_JSON_BYTES
}

/**
 * retryable and code of an answer known without reading its body: none for a success, the envelope's as
 * errorResponse recorded it; undefined when the body must be read (answerOf).
 */
function knownAnswer(
  c: Context<Env>,
  res: Response,
): { retryable?: boolean; code?: string } | undefined {
  if (res.status < 400) return {}
  const answered = c.var.answeredError
  return answered && { retryable: answered.retryable, code: answered.code }
}

/** retryable and code of an error answer: the envelope's, or by status for a bare 429/502/503/504. */
async function answerOf(res: Response): Promise<{ retryable?: boolean; code?: string }> {
  if ((res.headers.get('Content-Type') ?? '').includes('json')) {
    try {
      const body = (await res.clone().json()) as { error?: { retryable?: unknown; code?: unknown } }
      if (typeof body.error?.retryable === 'boolean')
        return {
          retryable: body.error.retryable,
          code: typeof body.error.code === 'string' ? body.error.code : undefined,
        }
    } catch {
      // not an envelope
    }
  }
  return BARE_RETRYABLE.has(res.status) ? { retryable: true } : {}
}

/**
 * Retry-After of an error answer in ms (seconds form only, which is what the document uses); the rules read it
 * of errors only, so a success answer's headers are not read.
 */
function retryAfterMs(res: Response): number | undefined {
  if (res.status < 400) return undefined
  const value = res.headers.get('Retry-After')
  if (value === null || !/^\d+$/.test(value.trim())) return undefined
  return Number(value.trim()) * 1000
}

/** What the referee noted of a request when it arrived (undefined: no bearer key, nothing to judge). */
export type Watch = {
  key: string
  atMs: number
  stream: RegExpExecArray | null
  lastDelivered: Delivery | undefined
  /** WHN-020: the Projects with a webhook notification in flight while this create arrived. */
  busy: ReadonlySet<string> | undefined
}

/** Notes a /v1 request as it arrives (the service edge, middleware/edge.ts, calls it before the handler). */
export function refereeArrival(c: Context<Env>): Watch | undefined {
  const key = bearerToken(headerOf(c, 'authorization'))
  if (key === undefined) return undefined
  const { clock, referee: ref, deliveries } = c.var.deps
  const method = c.req.method
  const path = c.req.path
  const stream = method === 'GET' ? STREAM.exec(path) : null
  return {
    key,
    atMs: clock.nowMs(),
    stream,
    lastDelivered: stream ? ref.lastDelivered(key, stream[2]!) : undefined,
    busy: method === 'POST' && CREATES_WORK.test(path) ? deliveries.busyGroups() : undefined,
  }
}

/**
 * Judges the request once it was answered (c.res), or dropped (`answered` false: a fault rule closed the
 * connection). Only what a rule needs is awaited (a body digest, an error answer's body): a plain success
 * with nothing on record is judged at once, without a promise. The referee never changes an answer.
 */
export function refereeAnswer(
  c: Context<Env>,
  watch: Watch,
  answered: boolean,
): void | Promise<void> {
  const failed = (error: unknown) =>
    c.var.deps.log.error('referee observation failed', {
      request_id: c.var.requestId,
      error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    })
  try {
    const status = answered ? c.res.status : 0
    const idempotencyKey = headerOf(c, 'idempotency-key')
    const needDigest =
      idempotencyKey !== undefined ||
      status >= 400 ||
      c.var.deps.referee.constrainsResends(watch.key)
    const known = answered ? knownAnswer(c, c.res) : {}
    if (!needDigest && known)
      return observe(c, watch, answered, status, idempotencyKey, undefined, known)
    return (async () => {
      const digest = needDigest ? await bodyDigest(c) : undefined
      const answer = known ?? (await answerOf(c.res))
      observe(c, watch, answered, status, idempotencyKey, digest, answer)
    })().catch(failed)
  } catch (error) {
    failed(error)
  }
}

function observe(
  c: Context<Env>,
  watch: Watch,
  answered: boolean,
  status: number,
  idempotencyKey: string | undefined,
  digest: string | undefined,
  { retryable, code }: { retryable?: boolean; code?: string },
): void {
  const { clock, referee: ref } = c.var.deps
  const { key, stream, busy, lastDelivered } = watch
  const method = c.req.method
  const path = c.req.path
  const res = c.res
  const cursor = headerOf(c, 'last-event-id') ?? ''
  const url = c.req.url
  const search = url.includes('?') ? url.slice(url.indexOf('?')) : ''
  const projectId = c.var.auth?.projectId
  const o: Observation = {
    method,
    path,
    requestId: c.var.requestId,
    atMs: watch.atMs,
    answeredAtMs: clock.nowMs(),
    identity: () =>
      digest === undefined
        ? undefined
        : sha256(`${method} ${path}${search}\n${idempotencyKey ?? ''}\n${cursor}\n${digest}`),
    idempotencyKey,
    content: () => (digest === undefined ? undefined : contentOf(method, path, digest)),
    status,
    retryable,
    retryAfterMs: answered ? retryAfterMs(res) : undefined,
    code,
    poll: method === 'GET' && POLL.test(path) ? path : undefined,
    stream: stream
      ? { aggregate: stream[2]!, cursor: hasCursor(c), lastDelivered: lastDelivered?.ref }
      : undefined,
    createdDuringWebhook: busy !== undefined && projectId !== undefined && busy.has(projectId),
  }
  ref.observe(key, o)
  // A dropped stream answer delivered nothing to the client.
  if (stream && !answered) ref.undoDeliveries(key, stream[2]!, lastDelivered)
}

const hasCursor = (c: Context<Env>) =>
  Boolean(headerOf(c, 'last-event-id')?.trim()) || Boolean(queryOf(c, 'after'))
