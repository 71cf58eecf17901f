/**
 * Issues a new request id per request from deps.ids (never taken from the client) and sends it as
 * X-Request-Id on every response, errors included.
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'

export function requestId(): MiddlewareHandler<Env> {
  return async function requestIdMiddleware(c, next) {
    const id = c.var.deps.ids.requestId()
    c.set('requestId', id)
    await next()
    c.header('X-Request-Id', id)
  }
}
