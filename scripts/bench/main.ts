/**
 * `npm run bench`: the mock over real HTTP against bare Hono and Prism (interleaved rounds, medians), then the
 * scale benches; prints one summary line and writes BENCHMARKS.md. Not a test: nothing here asserts a timing.
 * `--profile <dir>`: the mock runs under node --cpu-prof (its profile lands in dir). `--quick`: a short run (fewer, shorter rounds; smaller scale steps). `--only http,sse,...` picks sections.
 * Needs dist/ (`npm run build`): the mock is started as `npm start` starts it.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { ENDPOINTS, httpRounds, medianOf, writeBareRoutes, type Row } from './http.js'
import { ROOT, startBareHono, startMock, startPrism, type Target } from './targets.js'
import { prepareWorld, writeBenchWorld } from './world.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    endpoint: { type: 'string' },
    'no-hono': { type: 'boolean', default: false },
    profile: { type: 'string' },
    'no-prism': { type: 'boolean', default: false },
  },
})
const quick = values.quick
const rounds = Number(values.rounds ?? (quick ? 1 : 3))
const durationS = Number(values.duration ?? (quick ? 2 : 5))
const connections = Number(values.connections)
const log = (line: string) => process.stdout.write(`${line}\n`)

if (!existsSync(join(ROOT, 'dist/mock/main.js'))) {
  process.stderr.write('bench: dist/ is missing; run `npm run build` first\n')
  process.exit(1)
}

const targets: Target[] = []
try {
  const world = writeBenchWorld()
  const mock = await startMock(['--clock', 'manual', '--fixtures', world], values.profile)
  targets.push(mock)
  const prepared = await prepareWorld(mock.url)
  if (!values['no-hono']) targets.push(await startBareHono(writeBareRoutes(prepared)))
  if (!values['no-prism']) targets.push(await startPrism())
  log(`targets: ${targets.map((t) => `${t.name} (${t.url}, pid ${t.pid})`).join(', ')}`)
  const endpoints = ENDPOINTS.filter(
    (e) => !values.endpoint || e.name.toLowerCase().includes(values.endpoint.toLowerCase()),
  )
  const rows = await httpRounds(
    targets,
    mock,
    prepared,
    { rounds, durationS, connections, endpoints },
    log,
  )
  printTable(rows)
} finally {
  await Promise.all(targets.map((t) => t.stop()))
}

function printTable(rows: Row[]) {
  const endpoints = [...new Set(rows.map((r) => r.endpoint))]
  for (const e of endpoints) {
    const of = (t: string) => rows.find((r) => r.endpoint === e && r.target === t)
    const m = medianOf(of('mock')!.samples)
    const h = of('bare Hono') && medianOf(of('bare Hono')!.samples)
    const p = of('Prism') && medianOf(of('Prism')!.samples)
    log(
      `${e.padEnd(26)} mock ${m.reqPerS.toFixed(0)} req/s (${h ? (m.reqPerS / h.reqPerS).toFixed(2) : '?'}x Hono, ${p ? (m.reqPerS / p.reqPerS).toFixed(2) : '?'}x Prism) cpu ${m.cpuUsPerReq?.toFixed(0)} µs; Hono ${h?.reqPerS.toFixed(0)} cpu ${h?.cpuUsPerReq?.toFixed(0)}; Prism ${p?.reqPerS.toFixed(0)} cpu ${p?.cpuUsPerReq?.toFixed(0)}`,
    )
  }
}
