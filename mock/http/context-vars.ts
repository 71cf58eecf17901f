/**
 * `c.var` without a copy per read. Hono's `c.var` getter builds a new object from the context's variables on
 * every read (Object.fromEntries); the pipeline and handlers read it dozens of times per request. readVars()
 * shadows it on one context with a read-through view of the same variables (what `c.get` returns), so
 * `c.var.deps` costs one map lookup and allocates nothing. The view is read-only; `c.set` still writes.
 */
import type { Context } from 'hono'
import type { Env } from '../deps.js'

export function readVars(c: Context<Env>): void {
  const get = c.get as (key: string) => unknown
  const view = new Proxy(
    {},
    {
      get: (_target, key) => (typeof key === 'string' ? get(key) : undefined),
      has: (_target, key) => typeof key === 'string' && get(key) !== undefined,
      set: () => false,
    },
  )
  Object.defineProperty(c, 'var', { value: view, configurable: true })
}
