/**
 * The first middleware of every request: the instance's deps on the context (with the read-through `c.var`
 * view, mock/http/context-vars.ts), a new request id (from deps.ids, never taken from the client), and the
 * headers every answer carries, errors included: X-Request-Id, Cache-Control: no-store (the document's Errors >
 * Envelope rule) and the mock's version headers (middleware/version.ts). One middleware instead of one per
 * header: every layer Hono composes costs each request a closure and a promise.
 */
import type { MiddlewareHandler } from 'hono'
import type { Deps, Env } from '../deps.js'
import { readVars } from '../http/context-vars.js'
import { withAnswerHeaders } from '../util/answer.js'
import { versionHeaders } from './version.js'

export function frame(deps: Deps): MiddlewareHandler<Env> {
  const fixed = Object.fromEntries([['Cache-Control', 'no-store'], ...versionHeaders()])
  return async function frame(c, next) {
    c.set('deps', deps)
    readVars(c)
    const id = deps.ids.requestId()
    c.set('requestId', id)
    await withAnswerHeaders(c, next, { 'X-Request-Id': id, ...fixed })
  }
}
