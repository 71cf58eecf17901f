/**
 * `npm run bench`: the mock over real HTTP against bare Hono and Prism (interleaved rounds, medians), its SSE
 * and webhook fan-out, then the scale benches (virtual time, store size, createMock/reset, start-up); prints
 * one summary line and writes BENCHMARKS.md. Not a test: nothing here asserts a timing. Needs dist/ (`npm run
 * build`): the mock is started as `npm start` starts it. Options: see the Re-run section of BENCHMARKS.md
 * (scripts/bench/report.ts); `--quick` is a short run (one short round, smaller scale steps).
 */
import { existsSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ENDPOINTS, httpRounds, writeBareRoutes } from './http.js'
import { benchmarksMarkdown, summaryLine, type Results } from './report.js'
import { inOwnProcess } from './scale.js'
import { startup, storeSizes } from './startup.js'
import { sseFanOut, webhookDeliveries } from './streams.js'
import { ROOT, startBareHono, startMock, startPrism, type Target } from './targets.js'
import { prepareWorld, writeBenchWorld } from './world.js'

const SECTIONS = ['http', 'sse', 'webhooks', 'virtual-time', 'store', 'instances', 'startup']

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    endpoint: { type: 'string' },
    'no-hono': { type: 'boolean', default: false },
    'no-prism': { type: 'boolean', default: false },
    profile: { type: 'string' },
    baseline: { type: 'string' },
    out: { type: 'string' },
  },
})
const quick = values.quick
/**
 * A run that leaves something out or measures the mock otherwise (a short run, some sections or endpoints,
 * without a comparison target, under the profiler, beside a baseline) writes BENCHMARKS.partial.md unless
 * --out says where: BENCHMARKS.md always holds a whole run.
 */
const partial =
  quick ||
  values.only !== undefined ||
  values.endpoint !== undefined ||
  values['no-hono'] ||
  values['no-prism'] ||
  values.profile !== undefined ||
  values.baseline !== undefined
const out = values.out ?? (partial ? 'BENCHMARKS.partial.md' : 'BENCHMARKS.md')
/** Full runs: the 30-day scenario at least this many times (one run moves by a third with a moment of load). */
const VIRTUAL_TIME_RUNS = 5
/** Full runs: interleaved rounds of the store sizes, after unrecorded ones (10 s of reads per size). */
const STORE_ROUNDS = 7
const STORE_WARM_UP_ROUNDS = 5
const sections = new Set(values.only ? values.only.split(',') : SECTIONS)
for (const s of sections)
  if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s} (${SECTIONS.join(', ')})`)
const results: Results = {
  startedAt: new Date().toISOString(),
  options: process.argv.slice(2).join(' '),
  rounds: Number(values.rounds ?? (quick ? 1 : 3)),
  durationS: Number(values.duration ?? (quick ? 2 : 5)),
  connections: Number(values.connections),
  baseline: values.baseline,
}
const log = (line: string) => process.stdout.write(`${line}\n`)

if (!existsSync(join(ROOT, 'dist/mock/main.js'))) {
  process.stderr.write('bench: dist/ is missing; run `npm run build` first\n')
  process.exit(1)
}
const world = writeBenchWorld()

if (sections.has('http') || sections.has('sse') || sections.has('webhooks')) {
  const targets: Target[] = []
  try {
    const mock = await startMock(
      ['--clock', 'manual', '--fixtures', world, '--allow-insecure-webhooks'],
      values.profile,
    )
    targets.push(mock)
    const prepared = await prepareWorld(mock.url)
    const mocks = [mock]
    if (sections.has('http')) {
      // --baseline <dir>: another build of the mock (e.g. an earlier commit), measured in the same rounds.
      if (values.baseline) {
        const before = await startMock(['--clock', 'manual', '--fixtures', world], undefined, {
          name: 'mock (baseline)',
          root: values.baseline,
        })
        targets.push(before)
        mocks.push(before)
        const again = await prepareWorld(before.url)
        if (again.turnPath !== prepared.turnPath || again.runPath !== prepared.runPath)
          throw new Error('the baseline mock does not give the measured ids')
      }
      if (!values['no-hono']) targets.push(await startBareHono(writeBareRoutes(prepared)))
      if (!values['no-prism']) targets.push(await startPrism())
      log(`targets: ${targets.map((t) => `${t.name} (${t.url}, pid ${t.pid})`).join(', ')}`)
      const endpoints = ENDPOINTS.filter(
        (e) => !values.endpoint || e.name.toLowerCase().includes(values.endpoint.toLowerCase()),
      )
      results.http = await httpRounds(
        targets,
        mocks,
        prepared,
        {
          rounds: results.rounds,
          durationS: results.durationS,
          connections: results.connections,
          endpoints,
        },
        log,
      )
    }
    if (sections.has('sse')) {
      results.sse = await sseFanOut(mock, { streams: 200, sessions: 10, turns: quick ? 2 : 6 })
      log(`sse: ${JSON.stringify(results.sse)}`)
    }
    if (sections.has('webhooks')) {
      results.webhooks = await webhookDeliveries(mock, quick ? 200 : 1000)
      log(`webhooks: ${JSON.stringify(results.webhooks)}`)
    }
  } finally {
    await Promise.all(targets.map((t) => t.stop()))
  }
}
if (sections.has('virtual-time')) {
  results.virtualTime = await inOwnProcess({
    kind: 'virtual-time',
    world,
    executions: quick ? 200 : 1000,
    runs: quick ? results.rounds : Math.max(results.rounds, VIRTUAL_TIME_RUNS),
  })
  log(`virtual time: ${JSON.stringify(results.virtualTime)}`)
}
if (sections.has('store')) {
  results.storeSize = await storeSizes(
    world,
    quick ? [1000, 10_000] : [1000, 10_000, 100_000],
    {
      durationS: 2,
      rounds: quick ? 2 : STORE_ROUNDS,
      warmUpRounds: quick ? 1 : STORE_WARM_UP_ROUNDS,
    },
    log,
  )
  for (const row of results.storeSize) log(`store: ${JSON.stringify(row)}`)
}
if (sections.has('instances')) {
  results.instances = await inOwnProcess({ kind: 'instances', count: 200 })
  log(`instances: ${JSON.stringify(results.instances)}`)
}
if (sections.has('startup')) {
  results.startup = await startup(quick ? 3 : 7)
  log(`startup: ${JSON.stringify(results.startup)}`)
}

writeFileSync(resolve(ROOT, out), benchmarksMarkdown(results))
log(summaryLine(results))
log(`wrote ${out}`)
