/**
 * Records each request on the service's paths (/v1, /api/runtime) in the instance's request journal
 * (mock/util/journal.ts) once it is answered. Control-API requests (/_mock) are not recorded.
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'

export function journal(): MiddlewareHandler<Env> {
  return async function journalMiddleware(c, next) {
    if (c.req.path.startsWith('/_mock/') || c.req.path === '/_mock') return next()
    const { clock } = c.var.deps
    const at = clock.iso()
    const wallAt = clock.wallIso()
    try {
      await next()
    } finally {
      c.var.deps.journal.record({
        method: c.req.method,
        path: c.req.path,
        operation: c.var.op?.operationId ?? null,
        status: c.res.status,
        idempotency_key: c.req.header('Idempotency-Key') ?? null,
        last_event_id: c.req.header('Last-Event-ID') ?? c.req.query('after') ?? null,
        request_id: c.var.requestId,
        at,
        wall_at: wallAt,
      })
    }
  }
}
