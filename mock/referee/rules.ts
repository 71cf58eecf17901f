/**
 * The client referee's judging rules (Retry rules, Call rates, SSE streams, Webhook notifications): pure
 * functions from one API key's record of what it sent and was answered to the violations of the document's
 * client rules. No HTTP, no clock: every observation carries its virtual time. The observer (referee.ts) keeps
 * one KeyRecord per key; the middleware (middleware/referee.ts) turns requests into Observations.
 *
 * Rules and how each is judged (README "Client referee"):
 * - resend-after-non-retryable (RETRY-001): the same request (method, path and query, Idempotency-Key and
 *   body) is sent again after an answer with retryable false.
 * - resend-before-retry-after (RETRY-002): the same request is sent again before the Retry-After seconds of
 *   its previous answer have passed on the virtual clock.
 * - changed-key-after-unanswered (RETRY-017): a request with an Idempotency-Key went unanswered (the
 *   connection closed without an answer) and the same operation and body is then sent with another key before
 *   a resend with the first key was answered.
 * - changed-body-same-key (RETRY-004): an Idempotency-Key that was accepted, left unanswered or answered with a
 *   retryable error is sent with another operation, path or body.
 * - polling-too-often (RATE-007): two successful reads of the same Turn or Run less than 2 virtual seconds
 *   apart (the document recommends polling every 2 to 5 seconds).
 * - sse-reconnect-without-last-id (SSE-023): a stream of a Session or Run is opened without Last-Event-ID or
 *   after although an earlier stream of that key delivered an event of it (a 410 EVENT_CURSOR_EXPIRED in
 *   between makes reopening without a cursor the right recovery, SSE-018).
 * - work-created-from-webhook (WHN-020): a Session, Turn or Run is created (accepted) by a key of a Project
 *   while a webhook notification to that Project is in flight (the receiver creates work before answering).
 */

/** The virtual-time minimum between two polls of one Turn or Run (Call rates: "2 to 5 seconds"). */
export const POLL_MIN_INTERVAL_MS = 2_000

/** The most entries kept per kind and key (oldest forgotten first), so the record stays bounded. */
export const MAX_ENTRIES_PER_KEY = 256

/** How long a used Idempotency-Key holds its body for the referee: the receipt's shortest life (RET-001). */
export const KEY_HELD_MS = 24 * 3600_000

export const RULES = {
  'resend-after-non-retryable': 'RETRY-001',
  'resend-before-retry-after': 'RETRY-002',
  'changed-key-after-unanswered': 'RETRY-017',
  'changed-body-same-key': 'RETRY-004',
  'polling-too-often': 'RATE-007',
  'sse-reconnect-without-last-id': 'SSE-023',
  'work-created-from-webhook': 'WHN-020',
} as const

export type RuleName = keyof typeof RULES

/** A request as a violation shows it: never a key, token, query string or body. */
export type RequestRef = { method: string; path: string; request_id: string; at: string }

export type Violation = {
  rule: RuleName
  requirement_id: (typeof RULES)[RuleName]
  key: string
  requests: RequestRef[]
  at: string
}

/**
 * A request as the record keeps it: its virtual time in ms, formatted only when a violation is reported (the
 * referee sees every request; most are never shown).
 */
export type Seen = { method: string; path: string; request_id: string; atMs: number }

/** A violation as the referee keeps it until it is reported. */
export type Found = { rule: RuleName; key: string; requests: Seen[] }

/** A request as a report shows it. */
export const shown = (r: Seen): RequestRef => ({
  method: r.method,
  path: r.path,
  request_id: r.request_id,
  at: new Date(r.atMs).toISOString(),
})

/** A violation as a report shows it (its time is that of the request that broke the rule, the last one). */
export function violationOf(f: Found): Violation {
  const requests = f.requests.map(shown)
  return {
    rule: f.rule,
    requirement_id: RULES[f.rule],
    key: f.key,
    requests,
    at: requests[requests.length - 1]!.at,
  }
}

/** One request of one key, and what the client got (or did not get). */
export type Observation = {
  method: string
  /** The path without the query string. */
  path: string
  requestId: string
  /** Virtual ms when the request arrived. */
  atMs: number
  /** Virtual ms when it was answered (or dropped). */
  answeredAtMs: number
  /**
   * What makes two requests "the same" for a resend: method, path and query, Idempotency-Key and body, as a
   * digest; undefined when the body could not be read (then resend rules do not judge it).
   */
  identity: () => string | undefined
  /** The Idempotency-Key header, when sent. */
  idempotencyKey?: string
  /**
   * Operation, path and body without the key (for a request with an Idempotency-Key): their text with the
   * body's digest, or a digest of that when long.
   */
  content?: () => string | undefined
  /** The HTTP status; 0 when the connection closed without an answer. */
  status: number
  /** The answer's retryable: the envelope's flag; 429, 502, 503, 504 without an envelope count as true. */
  retryable?: boolean
  /** Retry-After of an error answer, in ms. */
  retryAfterMs?: number
  /** The error code of the envelope, when there was one. */
  code?: string
  /** A read of a Turn or Run (getTurn, getRun): the resource polled. */
  poll?: string
  /** A stream open: the Session or Run id, whether a cursor was sent, the last delivery of an earlier stream. */
  stream?: { aggregate: string; cursor: boolean; lastDelivered: Seen | undefined }
  /** An operation creating work (createSession, addTurn, createRun) while a webhook to the Project was in flight. */
  createdDuringWebhook?: boolean
}

/** An event written to a stream, and the stream request it was written to. */
export type Delivery = { eventId: string; ref: Seen }

/**
 * A Map that knows its newest key (the last one added): remembering the newest again (a client polling one
 * Turn, resending one request) only replaces its value, where moving it to the end would delete and re-add it.
 */
export class Remembered<K, V> extends Map<K, V> {
  newest: K | undefined = undefined

  override set(key: K, value: V): this {
    if (!super.has(key)) this.newest = key
    return super.set(key, value)
  }
}

/** What the referee remembers of one key (each map bounded by MAX_ENTRIES_PER_KEY). */
export type KeyRecord = {
  /** Last answer per request identity that constrains a resend. */
  answers: Remembered<string, { ref: Seen; retryable: boolean; notBeforeMs: number }>
  /** Content digest per Idempotency-Key that the server may have acted on, and when it was used. */
  keys: Remembered<string, { content: string; ref: Seen; atMs: number }>
  /** Unanswered keyed requests by content, until a resend with their key is answered. */
  unanswered: Remembered<string, { idempotencyKey: string; ref: Seen }>
  /** Last successful poll per Turn or Run. */
  polls: Remembered<string, Seen>
  /** Last event delivered per Session or Run, and the stream request that delivered it (stream hook). */
  delivered: Remembered<string, Delivery>
}

export const emptyRecord = (): KeyRecord => ({
  answers: new Remembered(),
  keys: new Remembered(),
  unanswered: new Remembered(),
  polls: new Remembered(),
  delivered: new Remembered(),
})

/** Sets an entry as the newest; forgets the oldest beyond the bound. */
export function remember<K, V>(map: Remembered<K, V>, key: K, value: V): void {
  if (key === map.newest) {
    map.set(key, value)
    return
  }
  map.delete(key)
  map.set(key, value)
  if (map.size > MAX_ENTRIES_PER_KEY) map.delete(map.keys().next().value as K)
}

export const refOf = (o: Observation): Seen => ({
  method: o.method,
  path: o.path,
  request_id: o.requestId,
  atMs: o.atMs,
})

const isError = (o: Observation) => o.status >= 400
const accepted = (o: Observation) => o.status >= 200 && o.status < 300
const unanswered = (o: Observation) => o.status === 0

/**
 * Judges one observation of a key against what the key did before, updates the record and returns the
 * violations (usually none). Order of rules is the order of the list above.
 */
export function judge(record: KeyRecord, key: string, o: Observation): readonly Found[] {
  // Most observations break no rule: the list is made for the first finding.
  let found: Found[] | undefined
  const ref = refOf(o)
  const violation = (rule: RuleName, earlier: Seen[]): void => {
    ;(found ??= []).push({ rule, key, requests: [...earlier, ref] })
  }

  // RETRY-001, RETRY-002: a resend of a request whose last answer forbade it (yet).
  const identity = record.answers.size > 0 || isError(o) ? o.identity() : undefined
  if (identity !== undefined) {
    const before = record.answers.get(identity)
    if (before && !before.retryable) violation('resend-after-non-retryable', [before.ref])
    else if (before && o.atMs < before.notBeforeMs)
      violation('resend-before-retry-after', [before.ref])
    if (isError(o) && o.retryable !== undefined) {
      remember(record.answers, identity, {
        ref,
        retryable: o.retryable,
        notBeforeMs: o.answeredAtMs + (o.retryAfterMs ?? 0),
      })
    } else if (!unanswered(o)) {
      record.answers.delete(identity)
    }
  }

  // RETRY-017, RETRY-004: Idempotency-Key discipline.
  if (o.idempotencyKey !== undefined) {
    const content = o.content?.()
    if (content !== undefined) {
      const pending = record.unanswered.get(content)
      if (pending && pending.idempotencyKey !== o.idempotencyKey) {
        violation('changed-key-after-unanswered', [pending.ref])
        record.unanswered.delete(content)
      } else if (pending && !unanswered(o)) {
        // A resend with the same key was answered: the unanswered request is settled.
        record.unanswered.delete(content)
      }
      // RET-001: a receipt is kept at least 24 hours; after that a key may be used again for new work.
      const kept = record.keys.get(o.idempotencyKey)
      const used = kept && o.atMs - kept.atMs < KEY_HELD_MS ? kept : undefined
      if (kept && !used) record.keys.delete(o.idempotencyKey)
      if (used && used.content !== content) {
        violation('changed-body-same-key', [used.ref])
      } else if (!used && (accepted(o) || unanswered(o) || o.retryable === true)) {
        // The server may have acted on this key (or the client must resend it unchanged).
        remember(record.keys, o.idempotencyKey, { content, ref, atMs: o.atMs })
      }
      if (unanswered(o) && !pending)
        remember(record.unanswered, content, { idempotencyKey: o.idempotencyKey, ref })
    }
  }

  // RATE-007: polls of one Turn or Run at least 2 virtual seconds apart.
  if (o.poll !== undefined && o.status === 200) {
    const last = record.polls.get(o.poll)
    if (last && o.atMs - last.atMs < POLL_MIN_INTERVAL_MS) violation('polling-too-often', [last])
    remember(record.polls, o.poll, ref)
  }

  // SSE-023 (and SSE-018): reconnect with the last id once an event was delivered.
  if (o.stream) {
    if (o.status === 200 && !o.stream.cursor && o.stream.lastDelivered !== undefined)
      violation('sse-reconnect-without-last-id', [o.stream.lastDelivered])
    // The documented recovery from an expired cursor reopens without one.
    if (o.code === 'EVENT_CURSOR_EXPIRED') record.delivered.delete(o.stream.aggregate)
  }

  // WHN-020: no new work in answer to a webhook.
  if (o.createdDuringWebhook && accepted(o)) violation('work-created-from-webhook', [])

  return found ?? NONE
}

const NONE: readonly Found[] = Object.freeze([])

/** The stream hook: an event of a Session or Run was written to the stream `ref` of this key. */
export function delivered(record: KeyRecord, aggregate: string, eventId: string, ref: Seen): void {
  remember(record.delivered, aggregate, { eventId, ref })
}
