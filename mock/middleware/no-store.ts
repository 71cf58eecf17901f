/**
 * Cache-Control: no-store on every response, errors included (the document's Errors > Envelope rule); set
 * before the handler (middleware/response-headers.ts).
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'
import { withHeaders } from './response-headers.js'

const NO_STORE = [['Cache-Control', 'no-store']] as const

export function noStore(): MiddlewareHandler<Env> {
  return async function noStoreMiddleware(c, next) {
    await withHeaders(c, next, NO_STORE)
  }
}
