/**
 * Where the change feed (change-feed.ts) hears of changes; the composition root (mock/wiring.ts) connects
 * these once per instance. Each builds its data only when a stream is open (ChangeFeed.note), so with no
 * inspector watching every hook costs one size check. Data: ids, statuses, types, paths; never a key or body.
 */
import type { MiddlewareHandler } from 'hono'
import type { Deps, Env } from '../deps.js'
import type { EventRecord } from '../events/log.js'
import type { ExecutionEvent } from '../execution/lifecycle.js'
import { getDelivery } from '../store/webhooks.js'
import { redactSecret } from './redact.js'

/** bus.execution: a Turn or Run changed status, produced an output or finished a step. */
export function noteExecution(deps: Deps, change: ExecutionEvent): void {
  deps.changes.note('execution', () => {
    const e = change.execution
    return {
      change: change.type,
      execution_id: e.id,
      kind: e.kind,
      status: e.status,
      session_id: e.session_id,
      project_id: e.project_id,
      at: deps.clock.iso(),
    }
  })
}

/** bus.eventAppended: a public event was appended to a Session's or Run's log. */
export function noteEvent(deps: Deps, event: EventRecord): void {
  deps.changes.note('event', () => ({
    event_id: event.event_id,
    type: event.type,
    status: event.status,
    session_id: event.session_id,
    turn_id: event.turn_id,
    run_id: event.run_id,
    project_id: event.project_id,
    at: new Date(event.created_at).toISOString(),
  }))
}

/** The clock, the request journal and the webhook send pool tell the feed of their changes. */
export function connectChangeSources(deps: Deps): void {
  const { changes } = deps
  deps.clock.onChange(() => changes.clockChanged())
  deps.journal.onRecord = (seq) =>
    changes.note('request', () => {
      const entry = deps.journal.entry(seq)!
      return {
        method: entry.method,
        path: entry.path,
        operation: entry.operation,
        status: entry.status,
        request_id: entry.request_id,
        at: entry.at,
      }
    })
  deps.deliveries.onSettled = (deliveryId) =>
    changes.note('webhook', () => {
      const d = deps.db.raw.open ? getDelivery(deps.db, deliveryId) : undefined
      return {
        delivery_id: deliveryId,
        endpoint_id: d?.endpoint_id ?? null,
        event_type: d?.event_type ?? null,
        status: d?.status ?? null,
        attempts: d?.attempts ?? null,
        last_http_status: d?.last_http_status ?? null,
        last_error_code: d?.last_error_code ?? null,
      }
    })
}

/** A control path with the API key of /_mock/keys/{key}/... redacted. */
export const controlPath = (path: string): string =>
  path.replace(/^(\/_mock\/keys\/)([^/]+)/, (_m, prefix: string, key: string) => {
    let decoded = key
    try {
      decoded = decodeURIComponent(key)
    } catch {
      // a malformed escape: redact it as it is
    }
    return `${prefix}${encodeURIComponent(redactSecret(decoded))}`
  })

/**
 * The control API's writes (fault rules, scenarios, reset, balances, keys, ...): after a successful request
 * other than GET or HEAD under /_mock, a `control` change with its method and path.
 */
export const noteControlWrites = (): MiddlewareHandler<Env> =>
  async function noteControlWrites(c, next) {
    await next()
    const { method } = c.req
    if (method === 'GET' || method === 'HEAD' || c.res.status >= 400) return
    c.var.deps.changes.note('control', () => ({
      method,
      path: controlPath(c.req.path),
      status: c.res.status,
      at: c.var.deps.clock.iso(),
    }))
  }
