/**
 * Records each request on the service's paths (/v1, /api/runtime) in the instance's request journal
 * (mock/util/journal.ts) once it is answered (the service edge, middleware/edge.ts, calls these). Control-API
 * requests (/_mock) are not recorded.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'
import { headerOf, queryOf } from './node-request.js'

/** When a request arrived, on the virtual clock and the wall clock. */
export type Arrival = { atMs: number; wallMs: number }

export function arrival(c: Context<Env>): Arrival {
  const { clock } = c.var.deps
  return { atMs: clock.nowMs(), wallMs: clock.wallMs() }
}

/** Records the request as answered with `status` (c.res's). */
export function recordRequest(c: Context<Env>, arrived: Arrival, status: number): void {
  c.var.deps.journal.record({
    method: c.req.method,
    path: c.req.path,
    operation: c.var.op?.operationId ?? null,
    status,
    idempotency_key: headerOf(c, 'idempotency-key') ?? null,
    last_event_id: headerOf(c, 'last-event-id') ?? queryOf(c, 'after') ?? null,
    request_id: c.var.requestId,
    atMs: arrived.atMs,
    wallMs: arrived.wallMs,
  })
}
