/**
 * Forward-compatibility responses (mock/domain/forward-compat.ts): while the instance's switch is on, every
 * JSON answer of /v1 and the management API carries the unknown field at its top level and one level down.
 * Stored idempotency receipts are untouched: the field is added on the way out.
 */
import type { MiddlewareHandler } from 'hono'
import type { Env } from '../deps.js'
import { withFutureFields } from '../domain/forward-compat.js'

export function forwardCompat(): MiddlewareHandler<Env> {
  return async function forwardCompatFields(c, next) {
    await next()
    if (!c.var.deps.forwardCompat.enabled) return
    if (!(c.res.headers.get('Content-Type') ?? '').startsWith('application/json')) return
    let body: unknown
    try {
      body = await c.res.clone().json()
    } catch {
      return
    }
    const headers = new Headers(c.res.headers)
    headers.delete('Content-Length')
    const status = c.res.status
    c.res = undefined
    c.res = new Response(JSON.stringify(withFutureFields(body)), { status, headers })
  }
}
