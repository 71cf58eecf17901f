/**
 * Headers that every response carries, set before the handler runs: Hono adds headers set before a response
 * exists to the response the handler builds, so @hono/node-server keeps its lightweight response and writes
 * it in one go. A header set after the handler (after `await next()`) makes it build a full `Response` and
 * copy it (about a quarter of bare Hono's throughput). Only a handler that returns its own `Response` (SSE
 * streams, file bytes) does not get the prepared headers: those are added to it afterwards.
 */
import type { Context, Next } from 'hono'
import type { Env } from '../deps.js'

/** Sets the headers now, runs the rest, and adds any of them the final response lacks. */
export async function withHeaders(
  c: Context<Env>,
  next: Next,
  headers: readonly (readonly [string, string])[],
): Promise<void> {
  for (const [name, value] of headers) c.header(name, value)
  await next()
  // c.res.headers of a lightweight response is read without building the full Response.
  const res = c.res.headers
  for (const [name, value] of headers) if (!res.has(name)) c.header(name, value)
}
