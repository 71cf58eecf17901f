/**
 * The headers every answer carries (X-Request-Id, Cache-Control: no-store, the mock's version headers) and
 * the ones a request adds on its way (Idempotent-Replayed, X-Mock-Fault, Allow, ...) are kept in
 * c.var.answerHeaders, a plain record. On the interface's paths (/v1, /api/runtime) the answers the mock builds
 * itself (route()'s render, errorResponse) write the record into the Response they create, as a plain object:
 * @hono/node-server then writes its lightweight response without building a Headers object or copying it
 * (the Headers Hono makes for headers set with c.header cost about a fifth of a bare answer). Any other
 * answer on those paths (a stream, file bytes, a proxy page) gets the missing ones added afterwards. On other
 * paths (/_mock) the headers are set with c.header before the handler, so c.json includes them.
 */
import type { Context, Next } from 'hono'
import type { Env } from '../deps.js'

/** The interface's paths, whose answers are built with the record (see above). */
export const buildsOwnAnswers = (path: string): boolean =>
  path.startsWith('/v1/') || path.startsWith('/api/runtime/')

/** The answer's header record (made on first use for a context the frame did not see). */
function headersOf(c: Context<Env>): Record<string, string> {
  let headers = c.get('answerHeaders')
  if (!headers) {
    headers = {}
    c.set('answerHeaders', headers)
  }
  return headers
}

/** Adds a header to the request's answer (also to an answer already built, e.g. by a fault rule). */
export function answerHeader(c: Context<Env>, name: string, value: string): void {
  headersOf(c)[name] = value
  if (!buildsOwnAnswers(c.req.path)) c.header(name, value)
}

/** A Response of `body` with the answer's headers (and `extra`), marked as carrying all of them. */
export function answer(
  c: Context<Env>,
  body: string | null,
  status: number,
  extra: Record<string, string>,
): Response {
  // Object.assign, not { ...extra, ...headers }: Node 20's V8 copies spreads after the first on a slow path.
  const res = new Response(body, { status, headers: Object.assign({}, extra, headersOf(c)) })
  c.set('builtAnswer', res)
  return res
}

/** Runs the rest with the answer's headers in c.var.answerHeaders, and makes sure the answer carries them. */
export async function withAnswerHeaders(
  c: Context<Env>,
  next: Next,
  headers: Record<string, string>,
): Promise<void> {
  c.set('answerHeaders', headers)
  const own = buildsOwnAnswers(c.req.path)
  if (!own) for (const name in headers) c.header(name, headers[name])
  await next()
  if (own && c.res === c.var.builtAnswer) return
  completeAnswer(c)
}

/** Adds to the answer (c.res) each of the request's answer headers it lacks: one answer() did not build. */
export function completeAnswer(c: Context<Env>): void {
  const headers = headersOf(c)
  // c.res.headers of a lightweight response is read without building the full Response.
  const has = c.res.headers
  for (const name in headers) if (!has.has(name)) c.header(name, headers[name])
}
