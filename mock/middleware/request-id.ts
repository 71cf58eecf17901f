/**
 * Issues a new request id per request from deps.ids (never taken from the client) and sends it as
 * X-Request-Id on every response, errors included (set before the handler: middleware/response-headers.ts).
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'
import { withHeaders } from './response-headers.js'

export function requestId(): MiddlewareHandler<Env> {
  return async function requestIdMiddleware(c, next) {
    const id = c.get('deps').ids.requestId()
    c.set('requestId', id)
    await withHeaders(c, next, [['X-Request-Id', id]])
  }
}
