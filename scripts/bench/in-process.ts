/**
 * `npm run bench`: how much the mock's hot path (auth, rate limit, handler, JSON) adds to bare Hono, measured
 * in one run as a ratio so the machine's speed cancels out. In process (app.request), no sockets. Not a test:
 * timings are never asserted; read the ratio. `--requests N` (default 5000).
 */
import { parseArgs } from 'node:util'
import { Hono } from 'hono'
import { createMock } from '../../mock/index.js'

const { values } = parseArgs({ options: { requests: { type: 'string', default: '5000' } } })
const N = Number(values.requests)
const H = { Authorization: 'Bearer sk_test_a_full' }

const mock = await createMock({ rateLimits: false })
const body = await (await mock.app.request('/v1/deployments', { headers: H })).json()
const bare = new Hono()
bare.get('/v1/deployments', (c) => {
  c.header('X-Request-Id', 'req_0')
  c.header('Cache-Control', 'no-store')
  return c.json(body)
})

async function run(
  label: string,
  app: { request: (p: string, i: RequestInit) => Response | Promise<Response> },
) {
  for (let i = 0; i < 200; i++) await app.request('/v1/deployments', { headers: H }) // warm up
  const start = process.hrtime.bigint()
  for (let i = 0; i < N; i++) {
    const res = await app.request('/v1/deployments', { headers: H })
    await res.arrayBuffer()
  }
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  console.log(
    `${label.padEnd(28)} ${N} requests in ${ms.toFixed(0)} ms: ${((N / ms) * 1000).toFixed(0)} req/s`,
  )
  return ms
}

const bareMs = await run('bare Hono (same JSON)', bare)
const mockMs = await run('mock GET /v1/deployments', mock.app)
console.log(`ratio mock / bare: ${(mockMs / bareMs).toFixed(2)}x per request`)
mock.close()
