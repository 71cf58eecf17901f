/**
 * The hot path's shape, in counts that do not depend on the machine: the headers every response carries are
 * in the record answer() builds an interface answer with (route()'s render, errorResponse), so that response
 * is the one sent (no middleware copies it after: @hono/node-server then writes its lightweight response in
 * one go), over the app and over HTTP; a response a handler builds otherwise gets them added; and the
 * statements a hot request runs.
 */
import { Hono } from 'hono'
import { afterEach, beforeEach, expect, it } from 'vitest'
import type { Env } from '../deps.js'
import { createMock, type Mock } from '../index.js'
import { serviceEdge } from '../middleware/edge.js'
import { listen, type Listening } from '../server.js'
import { answer } from './answer.js'

let mock: Mock
/** An app of probe routes served through the mock's service edge, as every interface operation is. */
let probes: Hono<Env>
let served: Listening | undefined
let built: Response[]
const H = { Authorization: 'Bearer sk_test_a_full', 'Content-Type': 'application/json' }
const D = 'aaaaaaaa-d000-4000-8000-000000000001'

beforeEach(async () => {
  mock = await createMock({ rateLimits: false })
  built = []
  // A probe route behind the service edge (request id, no-store, versions, journal, referee,
  // forward-compat, fault rules): it keeps the response it builds.
  const edge = serviceEdge(mock.deps)
  probes = new Hono<Env>()
  probes.get('/v1/probe', (c) =>
    edge(c, () => {
      const res = answer(c, JSON.stringify({ ok: true }), 200, {
        'Content-Type': 'application/json',
      })
      built.push(res)
      return res
    }),
  )
})
afterEach(async () => {
  await served?.close()
  served = undefined
  mock.close()
})

it('[ERR-005][ERR-007] builds an answer with X-Request-Id, Cache-Control and the version headers: the response built is the one answered', async () => {
  // Answered at once, not in a promise: @hono/node-server writes such an answer directly.
  const res = probes.fetch(new Request('http://mock/v1/probe', { headers: H }))
  expect(res).toBeInstanceOf(Response)
  expect(built).toHaveLength(1)
  expect(res).toBe(built[0])
  if (!(res instanceof Response)) return
  expect(res.headers.get('X-Request-Id')).toMatch(/^req_[0-9a-f]{24}$/)
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  expect(res.headers.get('X-Mock-Version')).toBeTruthy()
  expect(res.headers.get('X-Mock-Interface-Version')).toBeTruthy()
})

it('[ERR-005][ERR-007] adds the headers to a response a handler builds itself (streams, bytes, c.json), and over HTTP', async () => {
  const edge = serviceEdge(mock.deps)
  probes.get('/v1/own-response', (c) => edge(c, () => new Response('bytes', { status: 200 })))
  probes.get('/v1/own-json', (c) => edge(c, () => c.json({ ok: true })))
  served = await listen({ fetch: probes.fetch, deps: mock.deps })
  for (const path of ['/v1/probe', '/v1/own-response', '/v1/own-json']) {
    const res = await fetch(`${served.url}${path}`, { headers: H })
    await res.arrayBuffer()
    expect(res.headers.get('X-Request-Id'), path).toMatch(/^req_[0-9a-f]{24}$/)
    expect(res.headers.get('Cache-Control'), path).toBe('no-store')
    expect(res.headers.get('X-Mock-Interface-Version'), path).toBeTruthy()
  }
})

it("serves an interface request by its operation's handler alone: no Hono middleware matches it, so Hono calls the handler directly", () => {
  const session = `/v1/sessions/${D}/turns/${D}`
  for (const [method, path] of [
    ['GET', session],
    ['GET', '/v1/deployments'],
    ['POST', `/v1/deployments/${D}/sessions`],
    ['GET', '/api/runtime/projects/p/webhooks'],
  ] as const) {
    const [handlers] = mock.app.router.match(method, path)
    expect(handlers, `${method} ${path}`).toHaveLength(1)
  }
  // The control API keeps its middleware (frame, control token, change notes) before its handler.
  expect(mock.app.router.match('GET', '/_mock/clock')[0].length).toBeGreaterThan(1)
})

/** The SQL statements one request runs. */
async function statementsOf(path: string): Promise<string[]> {
  const db = mock.deps.db
  const stmt = db.stmt.bind(db)
  const seen: string[] = []
  ;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
    seen.push(sql)
    return stmt(sql)
  }
  try {
    const res = await mock.app.request(path, { headers: H })
    await res.arrayBuffer()
    expect(res.status).toBe(200)
  } finally {
    ;(db as { stmt: typeof db.stmt }).stmt = stmt
  }
  return seen
}

it('reads a key and its Project in one statement; a Turn read runs 3 statements (its Session was kept by the timers that read it), the same read twice more: 3 then none (kept from its second read), then a Deployment list 1 (the key is kept), 1 and none', async () => {
  const created = await mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, 'Idempotency-Key': 'k' },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'x' }] }),
  })
  const { status_url } = (await created.json()) as { status_url: string }
  await mock.clock.advance(5)
  const turn = await statementsOf(status_url)
  expect(turn.filter((s) => /\bFROM api_keys\b/.test(s))).toHaveLength(1)
  expect(turn.filter((s) => /\bFROM projects\b/.test(s))).toHaveLength(0)
  // The Session is not read: the Turn's timers read it (twice, in the advance's transactions, which wrote
  // no Session), so it is kept.
  expect(turn.filter((s) => /\bFROM sessions\b/.test(s))).toHaveLength(0)
  expect(turn).toHaveLength(3)
  // Nothing was written since: the second read keeps the key, the Turn and its outputs, and the third is
  // served from memory.
  expect(await statementsOf(status_url)).toHaveLength(3)
  expect(await statementsOf(status_url)).toEqual([])
  const list = ['SELECT * FROM deployments WHERE project_id = ? ORDER BY position']
  expect(await statementsOf('/v1/deployments')).toEqual(list)
  expect(await statementsOf('/v1/deployments')).toEqual(list)
  expect(await statementsOf('/v1/deployments')).toEqual([])
})
