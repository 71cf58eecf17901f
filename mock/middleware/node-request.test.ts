/**
 * headerOf() reads a request header from the raw headers Node parsed, for the hot path's checks (the key, the
 * Idempotency-Key, Last-Event-ID, X-Correlation-Id, the body's framing). Over HTTP, for any set of header
 * lines (names in any case, a name repeated, values with surrounding whitespace), it gives exactly what
 * Hono's `c.req.header()` gives; in process it is Hono's answer. queryOf() gives exactly what
 * `c.req.query()` gives for any request target, with or without a query string.
 */
import fc from 'fast-check'
import { Hono } from 'hono'
import { request } from 'node:http'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Env } from '../deps.js'
import { createMock, type Mock } from '../index.js'
import { listen, type Listening } from '../server.js'
import { headerOf, queryOf } from './node-request.js'

const NAMES = [
  'authorization',
  'idempotency-key',
  'last-event-id',
  'x-correlation-id',
  'content-type',
]

const app = new Hono<Env>()
app.get('/headers', (c) =>
  c.json(
    NAMES.map((n) => ({ name: n, ours: headerOf(c, n) ?? null, hono: c.req.header(n) ?? null })),
  ),
)

const QUERY_NAMES = ['after', 'limit', 'acting_as', 'on_behalf_of', 'token']
app.get('/query/*', (c) =>
  c.json(
    QUERY_NAMES.map((n) => ({
      name: n,
      ours: queryOf(c, n) ?? null,
      hono: c.req.query(n) ?? null,
    })),
  ),
)

let mock: Mock
let served: Listening
beforeAll(async () => {
  mock = await createMock()
  served = await listen({ fetch: app.fetch, deps: mock.deps })
})
afterAll(async () => {
  await served.close()
  mock.close()
})

type Seen = { name: string; ours: string | null; hono: string | null }[]

/** GET `target` (default /headers) with exactly these header lines, in this order. */
function send(lines: [string, string][], target = '/headers'): Promise<Seen> {
  const url = new URL(served.url)
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: target, headers: lines.flat() },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () => resolve(JSON.parse(text) as Seen))
      },
    )
    req.on('error', reject)
    req.end()
  })
}

const spelled = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((ch, i) => (upper[i] ? ch.toUpperCase() : ch)).join(''))
const value = fc
  .tuple(
    fc.constantFrom('', ' ', '\t', '  '),
    fc.stringMatching(/^[A-Za-z0-9_.:;,=/+ -]{0,24}$/),
    fc.constantFrom('', ' ', '\t '),
  )
  .map(([before, text, after]) => before + text + after)
const line = fc.constantFrom(...NAMES).chain((n) => fc.tuple(spelled(n), value))

it('reads every header as Hono does, whatever the case, repeats and surrounding whitespace [AUTH-001] [RETRY-017]', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(line, { maxLength: 8 }), async (lines) => {
      for (const seen of await send(lines)) expect(seen.ours, seen.name).toBe(seen.hono)
    }),
    { numRuns: 150 },
  )
})

it('answers in process as Hono does [AUTH-001] [RETRY-017]', async () => {
  const res = await app.request('/headers', {
    headers: { Authorization: 'Bearer x', 'Idempotency-Key': ' k ' },
  })
  const seen = (await res.json()) as Seen
  expect(seen.find((s) => s.name === 'authorization')!.ours).toBe('Bearer x')
  for (const s of seen) expect(s.ours).toBe(s.hono)
})

const queryPart = fc.oneof(
  fc.constantFrom(...QUERY_NAMES, 'other', 'AFTER', 'after%20', 'lim%69t'),
  fc.stringMatching(/^[A-Za-z0-9_.%+-]{0,8}$/),
)
const target = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9_-]{0,12}$/),
    fc.option(
      fc.array(fc.tuple(queryPart, fc.option(fc.stringMatching(/^[A-Za-z0-9_.%+=-]{0,10}$/))), {
        maxLength: 5,
      }),
    ),
  )
  .map(
    ([path, query]) =>
      `/query/${path}${query === null ? '' : `?${query.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&')}`}`,
  )

it('reads every query parameter as Hono does, with or without a query string [AUTH-008] [SSE-013]', async () => {
  await fc.assert(
    fc.asyncProperty(target, async (t) => {
      for (const seen of await send([], t)) expect(seen.ours, `${t} ${seen.name}`).toBe(seen.hono)
    }),
    { numRuns: 150 },
  )
  const res = await app.request('/query/x?after=c1&limit=5')
  for (const s of (await res.json()) as Seen) expect(s.ours).toBe(s.hono)
})
