/**
 * The frame of every request: the instance's deps on the context (with the plain `c.var` view,
 * mock/http/context-vars.ts), a new request id (from deps.ids, never taken from the client), and the headers
 * every answer carries, errors included: X-Request-Id, Cache-Control: no-store (the document's Errors >
 * Envelope rule) and the mock's version headers (middleware/version.ts). The service edge (edge.ts) frames
 * the interface's requests; `frame()` is the same as middleware for the control API (/_mock).
 */
import type { Context, MiddlewareHandler } from 'hono'
import type { Deps, Env } from '../deps.js'
import { readVars } from '../http/context-vars.js'
import { withAnswerHeaders } from '../util/answer.js'
import { versionHeaders } from './version.js'

/** Frames one request: returns the answer's header record (c.var.answerHeaders). */
export type Framer = (c: Context<Env>) => Record<string, string>

export function framer(deps: Deps): Framer {
  const fixed = Object.fromEntries([['Cache-Control', 'no-store'], ...versionHeaders()])
  return (c) => {
    readVars(c)
    c.set('deps', deps)
    const id = deps.ids.requestId()
    c.set('requestId', id)
    return Object.assign({ 'X-Request-Id': id }, fixed)
  }
}

export function frame(deps: Deps): MiddlewareHandler<Env> {
  const frameOf = framer(deps)
  return async function frame(c, next) {
    await withAnswerHeaders(c, next, frameOf(c))
  }
}
