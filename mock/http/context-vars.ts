/**
 * `c.var` without a copy per read. Hono's `c.var` getter builds a new object from the context's variables on
 * every read (Object.fromEntries); the pipeline and handlers read it dozens of times per request. readVars()
 * gives one context a plain object as its variables: `c.set` writes it, `c.get` and `c.var` read it, so
 * `c.var.deps` is one property read and no Map is made per request. Call it before the first `c.set`.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'

export function readVars(c: Context<Env>): void {
  const vars: Record<string, unknown> = {}
  const own = c as unknown as {
    set: (key: string, value: unknown) => void
    get: (key: string) => unknown
  }
  own.set = (key, value) => {
    vars[key] = value
  }
  own.get = (key) => vars[key]
  Object.defineProperty(c, 'var', { value: vars, configurable: true })
}
