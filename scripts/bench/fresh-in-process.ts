/**
 * In-process probe of POST Session with a fresh Idempotency-Key (the bench world: Project A's waiting cap
 * and budgets lifted): N creations after a reset, wall time per request and the SQL statements one creation
 * runs. Not a test; `--rounds R --requests N` (default 5 x 1000).
 */
import { parseArgs } from 'node:util'
import { createMock } from '../../mock/index.js'
import { JSON_AUTH, DEPLOYMENT, SESSION_BODY, WAITING_CAP, writeBenchWorld } from './world.js'

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: String(WAITING_CAP - 1) },
    rounds: { type: 'string', default: '5' },
    trace: { type: 'boolean', default: false },
    timing: { type: 'boolean', default: false },
  },
})
const N = Number(values.requests)
const mock = await createMock({ rateLimits: false, fixtures: writeBenchWorld() })
const db = mock.deps.db
const stmt = db.stmt.bind(db)
const statements: string[] = []
let tracing = false
;(db as { stmt: typeof db.stmt }).stmt = (sql: string) => {
  if (tracing) statements.push(sql)
  return values.timing ? timed(sql, stmt(sql)) : stmt(sql)
}
/** --timing: wall time spent in each SQL text's run/get/all (a wrapper per call; approximate). */
const spent = new Map<string, { n: number; ns: bigint }>()
const timed = (sql: string, s: ReturnType<typeof stmt>) =>
  new Proxy(s, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown
      if (typeof v !== 'function' || !['run', 'get', 'all'].includes(prop as string)) return v
      return (...args: unknown[]) => {
        const t0 = process.hrtime.bigint()
        try {
          return (v as (...a: unknown[]) => unknown).apply(target, args)
        } finally {
          const e = spent.get(sql) ?? { n: 0, ns: 0n }
          e.n++
          e.ns += process.hrtime.bigint() - t0
          spent.set(sql, e)
        }
      }
    },
  })
const path = `/v1/deployments/${DEPLOYMENT}/sessions`
let n = 0
const create = async () => {
  const res = await mock.app.request(path, {
    method: 'POST',
    headers: { ...JSON_AUTH, 'Idempotency-Key': `k-${n++}` },
    body: SESSION_BODY,
  })
  if (res.status !== 202) throw new Error(`${res.status} ${await res.text()}`)
  await res.arrayBuffer()
}
for (let round = 0; round < Number(values.rounds); round++) {
  await mock.reset()
  const start = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  for (let i = 0; i < N; i++) await create()
  const us = Number(process.hrtime.bigint() - start) / 1e3 / N
  const used = process.cpuUsage(cpu)
  // CPU time varies less than wall time on a shared machine (it is not counted while another process runs).
  const cpuUs = (used.user + used.system) / N
  console.log(
    `round ${round}: ${N} creations, ${us.toFixed(0)} µs each, ${cpuUs.toFixed(0)} µs CPU`,
  )
}
// A creation that waits (the Project's 2 slots are taken), as nearly every one of a bench round does.
await mock.reset()
for (let i = 0; i < 3; i++) await create()
tracing = true
await create()
console.log(`statements per waiting creation: ${statements.length}`)
if (values.trace)
  for (const s of statements) console.log(`  ${s.replace(/\s+/g, ' ').slice(0, 160)}`)
if (values.timing) {
  const rows = [...spent].sort((a, b) => Number(b[1].ns - a[1].ns)).slice(0, 25)
  for (const [sql, { n, ns }] of rows)
    console.log(
      `${(Number(ns) / 1e6).toFixed(0).padStart(6)} ms ${String(n).padStart(6)}x ${(Number(ns) / 1e3 / n).toFixed(1).padStart(6)} µs  ${sql.replace(/\s+/g, ' ').slice(0, 110)}`,
    )
}
mock.close()
