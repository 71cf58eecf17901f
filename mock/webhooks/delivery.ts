/**
 * Webhook delivery (Webhook notifications 1, 4, 6, 9; Webhook management): every public event of a Project
 * becomes one delivery per subscribed endpoint, sent by `webhook.attempt` timers on the virtual clock. The
 * timer handler records the attempt and returns the HTTP POST as a side effect performed after its transaction
 * (STYLE 2.5 rule 4); the outcome is recorded in a new transaction. Retries run 1 min, 5 min, 30 min, 2 h, 8 h
 * and 24 h after the first attempt (7 attempts in all), then the delivery is FAILED, the dead-letter list.
 * A delivery never touches the execution it reports on (WHN-023) and never starts work (WHN-019).
 */
import type { components } from '../../spec/index.js'
import type { SideEffect, TimerContext, TimerKinds } from '../clock/timer-kinds.js'
import type { Deps } from '../deps.js'
import type { EventRecord } from '../events/log.js'
import type { WebhookAction } from '../faults/rules.js'
import { isFutureEventType } from '../domain/forward-compat.js'
import { getSession } from '../store/executions.js'
import { MAX_BODY_BYTES, notificationBody, subscribedTypes } from './notification.js'
import { sendNotification, type AttemptOutcome } from './sender.js'
import { iso } from '../util/iso.js'
import { signatureHeader } from './signer.js'
import {
  activeEndpoints,
  attemptsOf,
  endpointForSend,
  getDelivery,
  insertAttempt,
  insertDelivery,
  saveDelivery,
  settleAttempt,
  waitingDeliveries,
  type DeliveryRecord,
} from '../store/webhooks.js'

export const WEBHOOK_ATTEMPT = 'webhook.attempt'

/** WHN-021: retries this many seconds after the FIRST attempt; with the first, 7 attempts in all. */
export const RETRY_OFFSETS_S: readonly number[] = [60, 300, 1800, 7200, 28800, 86400]
export const MAX_ATTEMPTS = RETRY_OFFSETS_S.length + 1

/**
 * After the last attempt, a safety timer this long after it settles a delivery whose outcome was never recorded
 * (the process stopped during the send; a --db store reopens without it). Normally the outcome cancels it.
 */
const OUTCOME_GRACE_MS = 60_000

export type AttemptPayload = { delivery_id: string }

/** Timers of one endpoint share a subject, so a change of the endpoint cancels them together. */
export const endpointSubject = (endpointId: string): string => `webhook-endpoint:${endpointId}`

/**
 * Registers the `webhook.attempt` timer kind. A delivery's timer never fires while its previous send is still in
 * the pool: the retry or the safety timer depends on that outcome. The wait is at most the 20-second send limit
 * (longer only when the send waited for a slot of the pool), and only an advance that reaches that timer waits.
 */
export function registerWebhookTimers(kinds: TimerKinds): void {
  kinds.register<AttemptPayload>(WEBHOOK_ATTEMPT, attemptHandler, {
    waitFor: ({ delivery_id }, deps) => deps.deliveries.pending(delivery_id),
  })
}

/**
 * The event-appended listener, WHN-001: one delivery per endpoint of the event's Project subscribed to its
 * type, first attempt due now.
 */
export function createDeliveries(deps: Deps, event: EventRecord): void {
  const { db, clock } = deps
  // Forward-compatibility rehearsal: an unknown event type goes to every endpoint, as a later version might.
  const future = isFutureEventType(event.type)
  const endpoints = activeEndpoints(db, event.project_id).filter(
    (e) => future || subscribedTypes(e.event_types).includes(event.type),
  )
  if (endpoints.length === 0) return
  // Sessions held by workflow steps are not caller-visible (WORKFLOW_MANAGED_SESSION): their Run reports.
  if (event.session_id && getSession(db, event.session_id)?.workflow_run_id) return
  const body = notificationBody(event)
  const nowMs = clock.nowMs()
  // A webhook fault rule (mock/faults/rules.ts): the notice twice, or its delivery later than the next ones.
  const action = webhookFault(deps, event.type)
  const copies = action?.webhook === 'duplicate' ? 2 : 1
  const dueMs = action?.webhook === 'late' ? nowMs + (action.delay_s ?? 60) * 1000 : nowMs
  for (const endpoint of endpoints) {
    for (let i = 0; i < copies; i++) {
      enqueueDelivery(deps, {
        project_id: event.project_id,
        endpoint_id: endpoint.id,
        event_id: event.event_id,
        event_type: event.type,
        body,
        replay_of: null,
        nowMs,
        dueMs,
      })
    }
  }
}

/** The webhook fault rule that fires for an event of this type, if any. */
function webhookFault(deps: Deps, eventType: string): WebhookAction | undefined {
  if (deps.faults.active === 0) return undefined
  const rule = deps.faults.take('webhook', {
    method: '',
    path: '',
    key: undefined,
    operation: () => undefined,
    event_type: eventType,
  })
  return rule?.action as WebhookAction | undefined
}

/** Stores a PENDING delivery and schedules its first attempt at nowMs (also used by replay). */
export function enqueueDelivery(
  deps: Deps,
  d: Pick<
    DeliveryRecord,
    'project_id' | 'endpoint_id' | 'event_id' | 'event_type' | 'body' | 'replay_of'
  > & {
    nowMs: number
    /** When the first attempt is due (default nowMs; later for a webhook fault rule's late delivery). */
    dueMs?: number
  },
): DeliveryRecord {
  const { nowMs, dueMs = nowMs, ...rest } = d
  const id = deps.ids.uuid()
  const timerId = deps.scheduler.schedule<AttemptPayload>(
    WEBHOOK_ATTEMPT,
    dueMs,
    { delivery_id: id },
    { subject: endpointSubject(d.endpoint_id) },
  )
  return insertDelivery(deps.db, {
    ...rest,
    id,
    status: 'PENDING',
    attempts: 0,
    first_attempt_at: null,
    last_attempt_at: null,
    next_attempt_at: dueMs,
    next_timer_id: timerId,
    last_http_status: null,
    last_error_code: null,
    created_at: nowMs,
  })
}

/**
 * The `webhook.attempt` handler: records attempt n, schedules what follows a failure (the next retry, or after
 * the last attempt the safety timer) so a stopped process still retries, and returns the POST as a side effect.
 */
function attemptHandler(payload: AttemptPayload, ctx: TimerContext): SideEffect | void {
  const { deps, nowMs } = ctx
  const { db, scheduler } = deps
  const d = getDelivery(db, payload.delivery_id)
  if (!d || d.status !== 'PENDING') return
  const endpoint = endpointForSend(db, d.endpoint_id)
  if (!endpoint || endpoint.status !== 'ACTIVE') {
    saveDelivery(db, { ...d, status: 'CANCELED', next_attempt_at: null, next_timer_id: null })
    return
  }
  if (d.attempts >= MAX_ATTEMPTS) {
    // The safety timer: the last attempt's outcome never arrived.
    finish(deps, d, { ok: false, httpStatus: null, errorCode: 'INTERRUPTED' }, d.attempts)
    return
  }
  const attempt = d.attempts + 1
  const firstAt = d.first_attempt_at ?? nowMs
  const nextAt =
    attempt < MAX_ATTEMPTS
      ? firstAt + RETRY_OFFSETS_S[attempt - 1]! * 1000
      : nowMs + OUTCOME_GRACE_MS
  const nextTimer = scheduler.schedule<AttemptPayload>(
    WEBHOOK_ATTEMPT,
    nextAt,
    { delivery_id: d.id },
    { subject: endpointSubject(d.endpoint_id) },
  )
  // Object.assign, not { ...d, attempts }: Node 20 builds a literal that starts with a spread on a slow path.
  const inFlight: DeliveryRecord = Object.assign({}, d, {
    attempts: attempt,
    first_attempt_at: firstAt,
    last_attempt_at: nowMs,
    next_attempt_at: attempt < MAX_ATTEMPTS ? nextAt : null,
    next_timer_id: nextTimer,
  })
  saveDelivery(db, inFlight)
  insertAttempt(db, {
    delivery_id: d.id,
    attempt,
    attempted_at: nowMs,
    http_status: null,
    error_code: null,
  })
  const bytes = Buffer.from(d.body, 'utf8')
  if (bytes.byteLength > MAX_BODY_BYTES) {
    // Rule 1 (never truncated): an oversized notice is not sent at all; the attempt fails with a fixed code.
    finish(deps, inFlight, { ok: false, httpStatus: null, errorCode: 'BODY_TOO_LARGE' }, attempt)
    return
  }
  // WHN-012: a fresh timestamp (virtual clock) and signature on every attempt, with the current secret.
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': 'ai-employee-mock-webhooks/1',
    'Service-Signature': signatureHeader(endpoint.secret, nowMs, bytes),
  }
  const url = endpoint.url
  const allowInsecure = deps.settings.allowInsecureWebhooks
  const trustedCa = deps.config.webhookCa
  // After commit: queue the send and return at once; the advance goes on with the next timer.
  return () => {
    deps.deliveries.submit(d.id, d.project_id, async (signal) => {
      const outcome = await sendNotification({
        url,
        body: bytes,
        headers,
        allowInsecure,
        trustedCa,
        signal,
        connections: deps.deliveries.connections,
      })
      // Aborted by a reset (the delivery is gone) or a close (a reopened store settles it by timer).
      if (signal.aborted || !db.raw.open) return
      db.tx(() => recordOutcome(deps, inFlight, outcome))
    })
    return Promise.resolve()
  }
}

/**
 * Records a sent attempt's outcome (inside a transaction). The usual case in one statement (settleAttempt):
 * the delivery stands where the attempt left it, so what finish() would read is known. Otherwise (a delivery
 * gone or changed meanwhile) it is read and finish() decides, as for any other outcome.
 */
function recordOutcome(deps: Deps, inFlight: DeliveryRecord, outcome: AttemptOutcome): void {
  const { db } = deps
  const attempt = inFlight.attempts
  const timerId = inFlight.next_timer_id
  const final = outcome.ok || attempt >= MAX_ATTEMPTS
  const settled =
    timerId !== null &&
    settleAttempt(db, {
      id: inFlight.id,
      attempt,
      timer_id: timerId,
      http_status: outcome.httpStatus,
      error_code: outcome.errorCode,
      final_status: final ? (outcome.ok ? 'SUCCEEDED' : 'FAILED') : null,
    })
  if (!settled) {
    const current = getDelivery(db, inFlight.id)
    // A newer attempt has already been recorded (not expected: the next timer waits for this send).
    if (!current || current.attempts !== attempt) return
    finish(deps, current, outcome, attempt)
    return
  }
  insertAttempt(db, {
    delivery_id: inFlight.id,
    attempt,
    attempted_at: inFlight.last_attempt_at ?? deps.clock.nowMs(),
    http_status: outcome.httpStatus,
    error_code: outcome.errorCode,
  })
  // The delivery took its final status: its pending retry or safety timer goes, as in finish().
  if (final) deps.scheduler.cancel(timerId)
}

/** Records an attempt's outcome: SUCCEEDED, FAILED after the last attempt, else PENDING with its retry kept. */
function finish(deps: Deps, d: DeliveryRecord, outcome: AttemptOutcome, attempt: number): void {
  const { db, scheduler } = deps
  insertAttempt(db, {
    delivery_id: d.id,
    attempt,
    attempted_at: d.last_attempt_at ?? deps.clock.nowMs(),
    http_status: outcome.httpStatus,
    error_code: outcome.errorCode,
  })
  const next: DeliveryRecord = {
    ...d,
    last_http_status: outcome.httpStatus,
    last_error_code: outcome.errorCode,
  }
  // A delivery canceled while its attempt was in flight keeps CANCELED: no retry goes to a changed endpoint.
  if (d.status === 'PENDING' && (outcome.ok || attempt >= MAX_ATTEMPTS)) {
    if (d.next_timer_id) scheduler.cancel(d.next_timer_id)
    next.status = outcome.ok ? 'SUCCEEDED' : 'FAILED'
    next.next_attempt_at = null
    next.next_timer_id = null
  }
  saveDelivery(db, next)
}

/** WHM-011: cancels the deliveries of an endpoint still waiting to be sent; returns how many. */
export function cancelWaitingDeliveries(deps: Deps, endpointId: string): number {
  const waiting = waitingDeliveries(deps.db, endpointId)
  deps.scheduler.cancelSubject(endpointSubject(endpointId), WEBHOOK_ATTEMPT)
  for (const d of waiting) {
    saveDelivery(deps.db, { ...d, status: 'CANCELED', next_attempt_at: null, next_timer_id: null })
  }
  return waiting.length
}

/** A delivery as the management API shows it: ids, status, counts, times, the fixed code and the number. */
export function deliveryView(
  deps: Deps,
  d: DeliveryRecord,
): components['schemas']['WebhookDelivery'] {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    last_attempt_at: iso(d.last_attempt_at),
    next_attempt_at: iso(d.next_attempt_at),
    last_http_status: d.last_http_status,
    last_error_code: d.last_error_code,
    created_at: new Date(d.created_at).toISOString(),
    replay_of: d.replay_of,
    history: attemptsOf(deps.db, d.id).map((a) => ({
      attempt: a.attempt,
      attempted_at: new Date(a.attempted_at).toISOString(),
      http_status: a.http_status,
      error_code: a.error_code,
    })),
  }
}
