/**
 * Fault rules (MOCK-CONTRACT "Fault rules and the client referee"): one instance's list of rules that make
 * /v1 and management requests misbehave, so a client can rehearse failures. `/_mock` is never faulted.
 *
 * Control body (POST /_mock/faults; in process the same object for `mock.faults.add(body)`, i.e.
 * `deps.faults.addChecked(body)`, which validates it and throws a RangeError naming the problems):
 *
 *   { match: { method?, path?, operation?, key?, event_type? },   every field given must match; {} matches
 *                                                                  every request (event_type: webhook rules)
 *     action: { error: CODE, status?, retry_after_s?, message?, details? }  the catalog envelope of CODE
 *           | { proxy: 502 | 503 | 504 }                a proxy's answer: text, no envelope
 *           | { delay_ms: n }                            a real (wall) delay, then the request is served
 *           | { drop: 'before' | 'after' }              close the connection unprocessed / after commit
 *           | { stream: 'close' | 'error' | 'repeat' | 'stall', after_events?, code? }   SSE streams only:
 *               after `after_events` events (default 0) close the stream, send an `event: error` frame of
 *               `code` (default INTERNAL_ERROR: retryable false; a retryable code such as STORAGE_UNAVAILABLE
 *               gives retryable true) and close, or stall (nothing more, no keep-alive, connection open);
 *               `repeat` sends every event after the first `after_events` twice (same id)
 *           | { webhook: 'duplicate' | 'late', delay_s? }   webhook notifications (match on event_type only):
 *               the notice is delivered twice (two deliveries, one event_id and body), or its delivery starts
 *               delay_s (default 60) later, e.g. a turn.progress notice arriving after turn.completed
 *     times?: n,          the rule fires for the next n matching requests, then stays listed with remaining 0
 *     probability?: p,    0 < p <= 1: each matching request fires with probability p, drawn from `seed`
 *     seed?: string }     (default the rule id): the same seed gives the same fire/skip sequence
 *
 * Matching: method is the HTTP method; path a `/v1/...` or `/api/runtime/...` template where `*` matches
 * exactly one segment; operation an operationId of spec/openapi.yaml (the middleware resolves the request's
 * operation only when some rule asks for it); key the bearer token of the request. Rules are tried in creation
 * order and the first one that matches and fires is applied (one fault per request); a rule that matches but
 * loses its probability draw lets the next rule try. `fired` counts applications, `matched` matching requests.
 *
 * Applying (mock/middleware/faults.ts, mock/events/sse.ts): error and proxy answer at once, before
 * authentication, so nothing changes; a delay waits on the wall clock (mock/clock/wall-timeout.ts) and then
 * serves the request; drop 'before' closes the connection unprocessed; drop 'after' serves the request, lets
 * it commit, then closes the connection with no answer. Over HTTP (mock/server.ts) a drop destroys the socket;
 * in process (`app.request()`, `mock.fetch()`) the call rejects with ConnectionDropped (mock/errors.ts), as
 * fetch rejects on a network failure. Stream rules apply to SSE streams (operations streamSessionEvents and
 * streamRunEvents) when the stream opens.
 *
 * Webhook rules are taken when an event becomes deliveries (mock/webhooks/delivery.ts), one rule per event.
 *
 * The hot path costs one property read when no rule is active (`faults.active === 0`).
 */
import { createHash } from 'node:crypto'
import { ERROR_CATALOG, loadOpenApi, type HttpErrorCode } from '../../spec/index.js'
import { ApiError } from '../errors.js'
import { controlBodyAjv } from '../util/ajv.js'
import { lazy } from '../util/memo.js'

export type FaultMatch = {
  method?: string
  path?: string
  operation?: string
  key?: string
  /** Webhook rules only: the notification's event type (e.g. turn.progress). */
  event_type?: string
}

export type ErrorAction = {
  error: HttpErrorCode
  status?: number
  retry_after_s?: number
  message?: string
  details?: Record<string, unknown>
}
export type StreamAction = {
  stream: 'close' | 'error' | 'repeat' | 'stall'
  /** Events sent before the fault (default 0); for `repeat`, events sent once before the repeats start. */
  after_events?: number
  /** For `error`: the code of the error frame (default INTERNAL_ERROR, retryable false). */
  code?: HttpErrorCode
}
export type WebhookAction = {
  /** duplicate: the notice is delivered twice; late: its delivery starts `delay_s` later (default 60). */
  webhook: 'duplicate' | 'late'
  delay_s?: number
}
export type FaultAction =
  | ErrorAction
  | WebhookAction
  | { proxy: 502 | 503 | 504 }
  | { delay_ms: number }
  | { drop: 'before' | 'after' }
  | StreamAction

/** What POST /_mock/faults takes. */
export type FaultRuleInput = {
  match: FaultMatch
  action: FaultAction
  times?: number
  probability?: number
  seed?: string
}

/** A rule as GET /_mock/faults lists it. */
export type FaultRule = {
  id: string
  match: FaultMatch
  action: FaultAction
  /** null: until deleted. */
  times: number | null
  /** Firings left (null: unlimited). */
  remaining: number | null
  probability: number
  seed: string
  matched: number
  fired: number
}

/** What a request looks like to the matcher. */
export type FaultRequest = {
  method: string
  path: string
  /** Resolved lazily: only when a rule matches on operation. */
  operation: () => string | undefined
  key: string | undefined
  /** A webhook notification's event type. */
  event_type?: string
}

export type FaultKind = 'http' | 'stream' | 'webhook'

/** The longest delay a rule may ask for (two minutes of wall time). */
export const MAX_DELAY_MS = 120_000
/** The HTTP error codes of the catalog, in catalog order. */
export const HTTP_ERROR_CODES = Object.entries(ERROR_CATALOG)
  .filter(([, e]) => 'http' in e)
  .map(([code]) => code as HttpErrorCode)

const operationIds = lazy(() => {
  const ids: string[] = []
  for (const item of Object.values(loadOpenApi().paths)) {
    for (const op of Object.values(item as Record<string, { operationId?: unknown }>)) {
      if (typeof op?.operationId === 'string') ids.push(op.operationId)
    }
  }
  return ids.sort()
})

const validateInput = lazy(() =>
  controlBodyAjv.compile<FaultRuleInput>({
    type: 'object',
    additionalProperties: false,
    required: ['match', 'action'],
    properties: {
      match: {
        type: 'object',
        additionalProperties: false,
        properties: {
          method: { enum: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] },
          path: { type: 'string', maxLength: 1024, pattern: '^/(v1|api/runtime)(/[^/?#]*)*$' },
          operation: { enum: operationIds() },
          key: { type: 'string', minLength: 1, maxLength: 1024 },
          event_type: { type: 'string', minLength: 1, maxLength: 200 },
        },
      },
      action: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['error'],
            properties: {
              error: { enum: HTTP_ERROR_CODES },
              status: { type: 'integer', minimum: 400, maximum: 599 },
              retry_after_s: { type: 'integer', minimum: 0, maximum: 86_400 },
              message: { type: 'string', minLength: 1, maxLength: 1000 },
              details: { type: 'object' },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['proxy'],
            properties: { proxy: { enum: [502, 503, 504] } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['delay_ms'],
            properties: { delay_ms: { type: 'integer', minimum: 0, maximum: MAX_DELAY_MS } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['drop'],
            properties: { drop: { enum: ['before', 'after'] } },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['webhook'],
            properties: {
              webhook: { enum: ['duplicate', 'late'] },
              delay_s: { type: 'integer', minimum: 1, maximum: 30 * 86_400 },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['stream'],
            properties: {
              stream: { enum: ['close', 'error', 'repeat', 'stall'] },
              after_events: { type: 'integer', minimum: 0, maximum: 10_000 },
              code: { enum: HTTP_ERROR_CODES },
            },
          },
        ],
      },
      times: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      probability: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
      seed: { type: 'string', minLength: 1, maxLength: 200 },
    },
  }),
)

export type Invalid = { path: string; message: string }

/** The key naming each action kind, in the order of the schema's oneOf branches. */
const ACTION_KINDS = ['error', 'proxy', 'delay_ms', 'drop', 'webhook', 'stream'] as const

/** Validates a control body: the schema, then what the catalog says of the code (status, Retry-After). */
export function validateFaultRule(
  data: unknown,
): { ok: true; rule: FaultRuleInput } | { ok: false; errors: Invalid[] } {
  const validate = validateInput()
  if (!validate(data)) {
    // oneOf reports every branch: keep the problems of the branch the action names by its kind key.
    const action = (data as { action?: unknown } | null)?.action
    const kinds = ACTION_KINDS.filter(
      (k) => typeof action === 'object' && action !== null && k in action,
    )
    const branch =
      kinds.length === 1
        ? `#/properties/action/oneOf/${ACTION_KINDS.indexOf(kinds[0]!)}/`
        : undefined
    const errors = (validate.errors ?? [])
      .filter((e) => e.keyword !== 'oneOf')
      .filter(
        (e) =>
          !e.schemaPath.startsWith('#/properties/action/oneOf/') ||
          (branch !== undefined && e.schemaPath.startsWith(branch)),
      )
      .map((e) => ({
        path: e.instancePath || '/',
        message:
          e.keyword === 'additionalProperties'
            ? `unknown field "${(e.params as { additionalProperty: string }).additionalProperty}"`
            : e.keyword === 'enum'
              ? `must be one of the document's values (${e.instancePath.split('/').pop()})`
              : (e.message ?? 'invalid'),
      }))
    if (typeof action === 'object' && action !== null && kinds.length !== 1) {
      errors.push({
        path: '/action',
        message: `must have exactly one of ${ACTION_KINDS.join(', ')}`,
      })
    }
    return { ok: false, errors: errors.length > 0 ? errors : [{ path: '/', message: 'invalid' }] }
  }
  const action = data.action
  const errors: Invalid[] = []
  if ('error' in action) {
    const http = httpOf(action.error)
    if (action.status !== undefined && !http.status.includes(action.status)) {
      errors.push({
        path: '/action/status',
        message: `${action.error} is answered with ${http.status.join(' or ')}, not ${action.status}`,
      })
    }
    if (action.retry_after_s !== undefined && http.retry_after === undefined) {
      errors.push({
        path: '/action/retry_after_s',
        message: `${action.error} carries no Retry-After in the catalog`,
      })
    }
  }
  const webhook = 'webhook' in action
  const match = data.match
  if (webhook && (match.method ?? match.path ?? match.operation ?? match.key) !== undefined) {
    errors.push({ path: '/match', message: 'a webhook rule matches on event_type only' })
  }
  if (!webhook && match.event_type !== undefined) {
    errors.push({ path: '/match/event_type', message: 'event_type is for webhook rules only' })
  }
  if (webhook && action.delay_s !== undefined && action.webhook !== 'late') {
    errors.push({ path: '/action/delay_s', message: 'delay_s is for webhook "late" only' })
  }
  if ('stream' in action && action.code !== undefined && action.stream !== 'error') {
    errors.push({ path: '/action/code', message: 'code is for stream "error" only' })
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, rule: data }
}

type HttpEntry = { status: readonly number[]; retryable: boolean; retry_after?: boolean | 'maybe' }
/** The catalog's HTTP entry of a code. */
export const httpOf = (code: HttpErrorCode): HttpEntry =>
  (ERROR_CATALOG[code] as { http: HttpEntry }).http

/**
 * The ApiError an error action stands for: the catalog's status (the first listed unless the action names
 * one), retryable and Retry-After. RATE_LIMITED gets details.reset_at (ERR-083): now plus the Retry-After.
 */
export function faultError(action: ErrorAction, nowMs: number): ApiError {
  const details = { ...action.details }
  if (action.error === 'RATE_LIMITED' && details.reset_at === undefined)
    details.reset_at = new Date(nowMs + (action.retry_after_s ?? 1) * 1000).toISOString()
  const status = action.status ?? httpOf(action.error).status[0]
  return new ApiError(action.error as 'INVALID_INPUT', {
    status: status as 400,
    message: action.message ?? `${action.error} (mock fault rule)`,
    details,
    retryAfterS: action.retry_after_s,
  })
}

/** Which requests an action applies to: stream actions to SSE streams only, the rest to any request. */
export const kindOf = (action: FaultAction): FaultKind =>
  'stream' in action ? 'stream' : 'webhook' in action ? 'webhook' : 'http'

/** Whether a `/v1/...` template (`*` = one segment) matches a path. */
export function pathMatches(template: string, path: string): boolean {
  const t = template.split('/')
  const p = path.split('/')
  if (t.length !== p.length) return false
  return t.every((seg, i) => seg === '*' || seg === p[i])
}

/** The nth draw (n from 0) of a seeded sequence, uniform in [0, 1). */
function draw(seed: string, n: number): number {
  return createHash('sha256').update(`${seed}:${n}`).digest().readUInt32BE(0) / 2 ** 32
}

/** One instance's fault rules. Made by mock/wiring.ts; cleared by /_mock/reset. */
export class FaultRules {
  private rules: FaultRule[] = []
  private next = 1
  /** Active rules (remaining firings) of each kind: the hot path reads `active` and stops at 0. */
  active = 0
  private activeStream = 0

  /** Adds a validated rule; ids are `fault_<n>` in creation order. */
  add(input: FaultRuleInput): FaultRule {
    const id = `fault_${this.next++}`
    const rule: FaultRule = {
      id,
      match: { ...input.match },
      action: { ...input.action },
      times: input.times ?? null,
      remaining: input.times ?? null,
      probability: input.probability ?? 1,
      seed: input.seed ?? id,
      matched: 0,
      fired: 0,
    }
    this.rules.push(rule)
    this.recount()
    return rule
  }

  /** Validates and adds (the programmatic door): throws a RangeError naming the problems. */
  addChecked(input: unknown): FaultRule {
    const checked = validateFaultRule(input)
    if (!checked.ok) {
      throw new RangeError(
        `invalid fault rule: ${checked.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
      )
    }
    return this.add(checked.rule)
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r, match: { ...r.match }, action: { ...r.action } }))
  }

  get(id: string): FaultRule | undefined {
    return this.rules.find((r) => r.id === id)
  }

  remove(id: string): boolean {
    const before = this.rules.length
    this.rules = this.rules.filter((r) => r.id !== id)
    this.recount()
    return this.rules.length < before
  }

  /** Removes every rule (DELETE /_mock/faults, /_mock/reset). Ids keep counting up. */
  clear(): void {
    this.rules = []
    this.recount()
  }

  /** Whether a stream rule is active (SSE streams check this before anything else). */
  get hasStreamRules(): boolean {
    return this.activeStream > 0
  }

  /**
   * The first active rule of that kind that matches the request and fires (its probability draw passes);
   * counts it. Undefined when none does.
   */
  take(kind: FaultKind, req: FaultRequest): FaultRule | undefined {
    if (this.active === 0) return undefined
    for (const rule of this.rules) {
      if (rule.remaining === 0 || kindOf(rule.action) !== kind) continue
      if (!matches(rule.match, req)) continue
      const n = rule.matched++
      if (rule.probability < 1 && draw(rule.seed, n) >= rule.probability) continue
      rule.fired++
      if (rule.remaining !== null) {
        rule.remaining--
        if (rule.remaining === 0) this.recount()
      }
      return rule
    }
    return undefined
  }

  private recount(): void {
    const live = this.rules.filter((r) => r.remaining !== 0)
    this.active = live.length
    this.activeStream = live.filter((r) => kindOf(r.action) === 'stream').length
  }
}

function matches(m: FaultMatch, req: FaultRequest): boolean {
  if (m.method !== undefined && m.method !== req.method) return false
  if (m.path !== undefined && !pathMatches(m.path, req.path)) return false
  if (m.key !== undefined && m.key !== req.key) return false
  if (m.event_type !== undefined && m.event_type !== req.event_type) return false
  if (m.operation !== undefined && m.operation !== req.operation()) return false
  return true
}
