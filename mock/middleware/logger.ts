/**
 * One structured JSON line per request: method, route pattern (never the raw URL: a query string may carry
 * a download token), status (null and `dropped` for a fault rule's dropped connection), request_id and
 * duration_ms. Never keys, tokens or bodies.
 */
import type { Context, MiddlewareHandler } from 'hono'
import { matchedRoutes } from 'hono/route'
import { monotonicMs } from '../clock/clock.js'
import type { Env } from '../deps.js'
import { ConnectionDropped } from '../errors.js'

/** The route pattern of the handler that answered, or null when no route matched. */
function routePattern(c: Context<Env>): string | null {
  const routes = matchedRoutes(c)
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i]!
    if (r.method !== 'ALL') return r.path
  }
  return null
}

export function logger(): MiddlewareHandler<Env> {
  return async function loggerMiddleware(c, next) {
    const start = monotonicMs()
    // A fault rule's drop (ConnectionDropped) sends no answer: the line says so instead of a status.
    let dropped: 'before' | 'after' | undefined
    try {
      await next()
    } catch (error) {
      if (error instanceof ConnectionDropped) dropped = error.when
      throw error
    } finally {
      c.var.deps.log.info('request', {
        method: c.req.method,
        route: routePattern(c),
        status: dropped ? null : c.res.status,
        ...(dropped ? { dropped } : {}),
        request_id: c.var.requestId,
        duration_ms: Math.round((monotonicMs() - start) * 100) / 100,
      })
    }
  }
}
