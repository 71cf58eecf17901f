/**
 * Cache-Control: no-store on every response, errors included (the document's Errors > Envelope rule).
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'

export function noStore(): MiddlewareHandler<Env> {
  return async function noStoreMiddleware(c, next) {
    await next()
    c.header('Cache-Control', 'no-store')
  }
}
