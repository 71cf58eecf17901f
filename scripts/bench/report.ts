/**
 * The bench's summary line and BENCHMARKS.md: machine, versions, the HTTP table with ratios to bare Hono and
 * Prism, the fan-out and scale results, each target and whether this run met it, and how to re-run.
 */
import { readFileSync } from 'node:fs'
import { arch, cpus, loadavg, platform, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { median as medianOfAll, medianOf, type Row, type Sample } from './http.js'
import type { InstancesResult, VirtualTimeResult } from './scale.js'
import type { StartupResult, StoreSizeRow } from './startup.js'
import type { FanOutResult, WebhookResult } from './streams.js'
import { ROOT } from './targets.js'
import {
  DEFAULT_MOST_SENDS_OF_ONE_PROJECT,
  DEFAULT_SENDS_PER_PROJECT,
} from '../../mock/webhooks/pool.js'

export type Results = {
  startedAt: string
  options: string
  rounds: number
  durationS: number
  connections: number
  /** --baseline: the root of another build measured beside the mock. */
  baseline?: string
  http?: Row[]
  sse?: FanOutResult
  webhooks?: WebhookResult
  virtualTime?: VirtualTimeResult
  storeSize?: StoreSizeRow[]
  instances?: InstancesResult
  startup?: StartupResult
}

const version = (pkg: string): string => {
  try {
    return (
      JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
        version: string
      }
    ).version
  } catch {
    return '?'
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const f0 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '?' : x.toFixed(0))
const f1 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '?' : x.toFixed(1))
const f2 = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '?' : x.toFixed(2))

type Ratios = {
  endpoint: string
  mock: Sample
  hono?: Sample
  prism?: Sample
  baseline?: Sample
  /** The median over rounds of each round's req/s ratio (see paired). */
  vsHono?: number
  /** Each round's ratio to bare Hono, in round order (the spread the median hides). */
  vsHonoRounds: number[]
  vsPrism?: number
  baselineVsHono?: number
}

/**
 * The median over rounds of the ratio of `a`'s req/s to `b`'s in the same round. Rounds are interleaved (A B C
 * A B C …): the two runs of one round are seconds apart, while the rounds of a run are minutes apart, and a
 * shared machine's load drifts over minutes; pairing each round cancels the drift that a ratio of two
 * medians, taken from different rounds, would keep.
 */
function paired(a: Row | undefined, b: Row | undefined): number | undefined {
  const each = pairedRounds(a, b)
  return each.length === 0 ? undefined : medianOfAll(each)
}

/** The ratio of `a`'s req/s to `b`'s in each round both ran, in round order. */
function pairedRounds(a: Row | undefined, b: Row | undefined): number[] {
  if (!a || !b) return []
  const n = Math.min(a.samples.length, b.samples.length)
  return Array.from({ length: n }, (_, i) => a.samples[i]!.reqPerS / b.samples[i]!.reqPerS)
}

export function ratios(rows: Row[]): Ratios[] {
  const endpoints = [...new Set(rows.map((r) => r.endpoint))]
  const row = (e: string, t: string) => rows.find((r) => r.endpoint === e && r.target === t)
  const of = (e: string, t: string) => {
    const found = row(e, t)
    return found && found.samples.length > 0 ? medianOf(found.samples) : undefined
  }
  return endpoints.map((e) => ({
    endpoint: e,
    mock: of(e, 'mock')!,
    hono: of(e, 'bare Hono'),
    prism: of(e, 'Prism'),
    baseline: of(e, 'mock (baseline)'),
    vsHono: paired(row(e, 'mock'), row(e, 'bare Hono')),
    vsHonoRounds: pairedRounds(row(e, 'mock'), row(e, 'bare Hono')),
    vsPrism: paired(row(e, 'mock'), row(e, 'Prism')),
    baselineVsHono: paired(row(e, 'mock (baseline)'), row(e, 'bare Hono')),
  }))
}

/** The targets of issue #13 and whether this run met them (undefined: not measured in this run). */
export function targets(r: Results): { target: string; measured: string; met?: boolean }[] {
  const out: { target: string; measured: string; met?: boolean }[] = []
  const rat = r.http ? ratios(r.http) : []
  const vsHono = (name: string, goal: number) => {
    const x = rat.find((q) => q.endpoint === name)
    const v = x?.vsHono
    if (v === undefined) return
    out.push({
      target: `${name} ≥ ${goal}× bare Hono req/s`,
      measured: `${f2(v)}×`,
      met: v >= goal,
    })
  }
  vsHono('GET Turn', 0.6)
  vsHono('POST Session (fresh key)', 0.3)
  vsHono('POST Session (replay)', 0.5)
  if (r.virtualTime) {
    // The target is about 1,000 executions: a smaller run (--quick) is reported, not judged.
    const full = r.virtualTime.executions >= 1000
    out.push({
      target:
        '30 virtual days of the busy Project (1,000 executions) < 2 s wall (median of the runs)',
      measured: `${f2(r.virtualTime.wallMs / 1000)} s${full ? '' : ` (${r.virtualTime.executions} executions only)`}`,
      met: full ? r.virtualTime.wallMs < 2000 : undefined,
    })
  }
  const small = r.storeSize?.find((s) => s.sessions === 1000)
  const big = r.storeSize?.find((s) => s.sessions === 100_000)
  if (small && big) {
    out.push({
      target:
        'GET Turn latency at 100k Sessions ≤ 1.2× at 1k (mean over 8 connections, the median of each round’s ratio)',
      measured: `${f2(big.latencyVsFirst / small.latencyVsFirst)}× (medians ${f0(big.meanUs)} µs vs ${f0(small.meanUs)} µs)`,
      met: big.latencyVsFirst / small.latencyVsFirst <= 1.2,
    })
    out.push({
      target: 'memory at 100k Sessions < 1 GiB',
      measured: `${f0(big.rssMiB)} MiB`,
      met: (big.rssMiB ?? Infinity) < 1024,
    })
  }
  if (r.instances) {
    const c = r.instances.createCloseMs
    out.push({
      target: 'createMock() + close() < 50 ms each, flat over 200',
      measured: `median ${f1(c.median)} ms, max ${f1(c.max)}; median of the first 20 ${f1(c.firstMedian)}, of the last 20 ${f1(c.lastMedian)}`,
      // Flat: the last 20 calls cost what the first 20 did (a single call may meet a GC or a busy machine).
      met: c.max < 50 && c.lastMedian <= 1.5 * c.firstMedian,
    })
  }
  if (r.startup) {
    const m = median(r.startup.mockMs)
    const h = median(r.startup.honoMs)
    out.push({
      target: 'start-up ≤ 2× bare Hono',
      measured: `${f0(m)} ms vs ${f0(h)} ms (${f2(m / h)}×)`,
      met: m <= 2 * h,
    })
  }
  return out
}

export function summaryLine(r: Results): string {
  const parts = targets(r).map(
    (t) => `${t.target.split(' ')[0]}…: ${t.measured}${t.met === false ? ' (missed)' : ''}`,
  )
  const rat = r.http ? ratios(r.http) : []
  const http = rat
    .map((x) => `${x.endpoint} ${f2(x.vsHono ?? NaN)}×Hono ${f1(x.vsPrism ?? NaN)}×Prism`)
    .join('; ')
  return `bench: ${http}${parts.length ? ` | ${parts.join('; ')}` : ''}`
}

export function benchmarksMarkdown(r: Results): string {
  const cpu = cpus()[0]?.model ?? '?'
  const lines: string[] = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (scripts/bench/). Numbers are from one run on the machine below, which was shared',
    'with other work: absolute numbers are noisy; the ratios of one interleaved run are what count. Benchmarks',
    'are not tests: `npm test` asserts no timing.',
    '',
    `- run: ${r.startedAt}, \`npm run bench ${r.options}\`: ${r.rounds} interleaved round(s) of ${r.durationS} s per endpoint and target, ${r.connections} connections, medians`,
    `- machine: ${cpus().length} × ${cpu}, ${f1(totalmem() / 2 ** 30)} GiB, ${platform()} ${release()} ${arch()}, load average at the end ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
    `- versions: node ${process.version}, hono ${version('hono')}, @hono/node-server ${version('@hono/node-server')}, better-sqlite3 ${version('better-sqlite3')}, @stoplight/prism-cli ${version('@stoplight/prism-cli')}, autocannon ${version('autocannon')}`,
    "- targets: the mock as `npm start` starts it (`node dist/mock/main.js --quiet --no-rate-limits --clock manual`, the bench world: the default world with Project A's waiting cap and budgets at their maxima, and 4 clones of Project A that fresh-key creations rotate over); bare Hono on @hono/node-server answering the mock's own JSON bodies with the same two headers (scripts/bench/bare-hono.mjs); `prism mock spec/openapi.yaml`. All on 127.0.0.1.",
    '',
    '## Targets',
    '',
    '| target | this run | met |',
    '|---|---|---|',
    ...targets(r).map(
      (t) =>
        `| ${t.target} | ${t.measured} | ${t.met === undefined ? '?' : t.met ? 'yes' : '**no**'} |`,
    ),
    '',
  ]
  if (r.http) {
    lines.push(
      '## HTTP hot path',
      '',
      'req/s, latency p50 / p99 (ms) and server CPU per request (µs, from /proc) of each target: medians of the',
      "rounds. The ratios are the median over rounds of the mock's req/s over the other target's in the same",
      "round (the two are seconds apart; a shared machine's load drifts over minutes, between rounds), so they",
      'may differ from the ratio of the two medians. POST Session (fresh key): every request a new Idempotency-Key and a',
      'new Session, in turn on 5 Projects (Project A and 4 clones, each its own key and Deployment). The mock',
      "takes at most their waiting caps' 5,000 such requests at a time, under a second: its round is batches of",
      "5,000, the mock reset before each (not timed), until they add up to the other targets' round (their",
      'requests over their summed time; p50 and p99: the median of the batches). Replay:',
      'one key and body, the stored receipt. GET Run: a Run holding 100 outputs (its detail shows the first 50).',
      '',
      '| endpoint | mock req/s | p50 / p99 | CPU µs | bare Hono req/s | CPU µs | Prism req/s | CPU µs | × Hono | × Hono by round | × Prism |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...ratios(r.http).map(
        (x) =>
          `| ${x.endpoint} | ${f0(x.mock.reqPerS)} | ${x.mock.p50Ms} / ${x.mock.p99Ms} | ${f0(x.mock.cpuUsPerReq)} | ${f0(x.hono?.reqPerS)} | ${f0(x.hono?.cpuUsPerReq)} | ${f0(x.prism?.reqPerS)} | ${f0(x.prism?.cpuUsPerReq)} | ${f2(x.vsHono)} | ${x.vsHonoRounds.map((v) => f2(v)).join(', ') || '–'} | ${f2(x.vsPrism)} |`,
      ),
      '',
    )
    if (ratios(r.http).some((x) => x.baseline))
      lines.push(
        `The baseline (\`--baseline ${r.baseline ?? ''}\`, another build of the mock) in the same rounds:`,
        '',
        '| endpoint | baseline req/s | CPU µs | × Hono | mock req/s | CPU µs | × Hono |',
        '|---|---:|---:|---:|---:|---:|---:|',
        ...ratios(r.http).map(
          (x) =>
            `| ${x.endpoint} | ${f0(x.baseline?.reqPerS)} | ${f0(x.baseline?.cpuUsPerReq)} | ${f2(x.baselineVsHono)} | ${f0(x.mock.reqPerS)} | ${f0(x.mock.cpuUsPerReq)} | ${f2(x.vsHono)} |`,
        ),
        '',
      )
    const bad = ratios(r.http).filter((x) => x.mock.non2xx + x.mock.errors > 0)
    if (bad.length)
      lines.push(
        `Non-2xx answers or errors of the mock: ${bad.map((x) => `${x.endpoint} ${x.mock.non2xx} non-2xx, ${x.mock.errors} errors`).join('; ')}.`,
        '',
      )
  }
  if (r.sse || r.webhooks) {
    lines.push(
      '## Fan-out (mock only: bare Hono and Prism have no streams or webhooks to compare)',
      '',
    )
    if (r.sse)
      lines.push(
        `- SSE: ${r.sse.streams} open streams received ${r.sse.events} events in ${f0(r.sse.wallMs)} ms while the clock advanced: ${f0(r.sse.eventsPerS)} events/s, ${f0(r.sse.cpuUsPerEvent)} µs server CPU per delivered event.`,
      )
    if (r.webhooks)
      lines.push(
        `- Webhooks: ${r.webhooks.executions} Turns, ${r.webhooks.deliveries} deliveries to a local receiver in ${f0(r.webhooks.wallMs)} ms: ${f0(r.webhooks.deliveriesPerS)} deliveries/s, ${f0(r.webhooks.cpuUsPerDelivery)} µs server CPU per delivery (the pool sends at most ${DEFAULT_MOST_SENDS_OF_ONE_PROJECT} at a time for one Project, leaving ${DEFAULT_SENDS_PER_PROJECT} slots free for the others).`,
      )
    lines.push('')
  }
  if (r.virtualTime) {
    const v = r.virtualTime
    lines.push(
      '## Virtual time at scale',
      '',
      `${v.executions} Turns accepted (${v.accepted} with 202), each with outputs and events, and a webhook endpoint answering 500 to everything (every delivery runs its 7 attempts), served by a receiver in a process of its own on 127.0.0.1 (scripts/bench/failing-receiver.mjs, as an integrator's receiver is another process; earlier runs of this bench had it in the mock's process, where its request handling counted in the mock's time, so their figures are not comparable); then one advance of ${v.virtualDays} virtual days, the mock in process (createMock, in a node process of its own: scripts/bench/own-process.ts): ${f0(v.wallMs)} ms of wall time${v.wallRunsMs && v.wallRunsMs.length > 1 ? ` (the median of ${v.wallRunsMs.length} runs, each with a mock and a receiver of its own: ${v.wallRunsMs.map(f0).join(', ')} ms)` : ''}${v.warmUpsMs?.length ? ` after ${v.warmUpsMs.length} unrecorded warm-up runs of the same scenario in the same process (${v.warmUpsMs.map(f0).join(', ')} ms: the first advances in a process also wait for V8 to compile the code an advance runs)` : ''}, ${v.timersFired} timers fired (${f0(v.timersPerS)} per second), ${v.webhookAttempts} webhook attempts received.`,
      '',
    )
  }
  if (r.storeSize) {
    lines.push(
      '## Store at scale',
      '',
      "GET Turn over HTTP (8 connections) against a mock holding n Sessions, each a Turn that ran to its end (filled through the app in process, then served by a process of its own); all sizes are filled first, then measured in interleaved rounds (1k, 10k, 100k, 1k, …) after unrecorded ones (a freshly filled server's reads cost up to three times more over its first 10 to 15 s of load), medians. Mean latency in µs from the closed loop (8 connections, one request out on each: 8 / req/s; autocannon records latencies in whole ms, so its p50 and p99 are coarse and its own mean counts only requests of 1 ms or more), server CPU per request, resident memory of that process; × first: the median over rounds of the mean latency over the first size's in the same round (the figure the target judges).",
      '',
      '| Sessions | accepted | fill s | req/s | mean µs | × first | p50 / p99 ms | CPU µs | RSS MiB |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...r.storeSize.map(
        (s) =>
          `| ${s.sessions} | ${s.accepted} | ${f0(s.fillS)} | ${f0(s.reqPerS)} | ${f0(s.meanUs)} | ${f2(s.latencyVsFirst)} | ${s.p50Ms} / ${s.p99Ms} | ${f0(s.cpuUsPerReq)} | ${f0(s.rssMiB)} |`,
      ),
      '',
    )
  }
  if (r.instances) {
    const i = r.instances
    lines.push(
      '## Test-suite cost',
      '',
      `- \`createMock()\` + \`close()\` of the built package (dist/mock/public.js) ${i.count} times in one process: 1st ${f1(i.createCloseMs.first)} ms, median ${f1(i.createCloseMs.median)} ms, ${i.count}th ${f1(i.createCloseMs.last)} ms, max ${f1(i.createCloseMs.max)} ms; median of the first 20 ${f1(i.createCloseMs.firstMedian)} ms, of the last 20 ${f1(i.createCloseMs.lastMedian)} ms; heap ${f1(i.heapMiB.before)} MiB before, ${f1(i.heapMiB.after)} MiB after.`,
      `- \`reset()\` ${i.count} times (3 Sessions created between two): 1st ${f1(i.resetMs.first)} ms, median ${f1(i.resetMs.median)} ms, ${i.count}th ${f1(i.resetMs.last)} ms, max ${f1(i.resetMs.max)} ms; median of the first 20 ${f1(i.resetMs.firstMedian)} ms, of the last 20 ${f1(i.resetMs.lastMedian)} ms.`,
      '',
    )
  }
  if (r.startup) {
    lines.push(
      '## Start-up',
      '',
      `Process start to the first 200 (\`GET /_mock/health\`, \`node dist/mock/main.js\`) against bare Hono (\`node scripts/bench/bare-hono.mjs\`), ${r.startup.runs} runs each, alternating: mock median ${f0(median(r.startup.mockMs))} ms (${r.startup.mockMs.map(f0).join(', ')}), bare Hono median ${f0(median(r.startup.honoMs))} ms (${r.startup.honoMs.map(f0).join(', ')}).`,
      '',
    )
  }
  lines.push(
    '## What the profiles show',
    '',
    "`npm run bench -- --only http --endpoint <name> --profile <dir>` writes the mock's CPU profile. At the time of",
    "writing (issue #13), after the fixes listed in the README's Speed section:",
    '',
    '- GET Turn and the other /v1 reads: an interface request is one Hono handler (the service edge around the',
    "  operation's checks and handler), answered without a promise when nothing must wait. What is left is",
    "  spread: Node's HTTP parser and response writing, @hono/node-server's request and response objects, Hono's",
    '  context and router, the checks (key, headers, scopes, validation), three or four kept reads (copied per',
    '  caller), the Turn detail and its JSON, the journal and the referee. The largest single item found was',
    "  V8's slow path (Node 20) for an object literal with a spread followed by more properties (`{ ...a, ...b }`",
    "  about 10 µs, `{ ...a, x }` about 2 µs, against 0.1 µs for Object.assign): the answer's header record and",
    '  the request input were built that way on every request. Next came garbage collection of objects kept',
    "  until 1,000 newer ones pushed them out (the journal, the referee's findings): both are rings of slots now.",
    '- POST Session replay: the body read and its validation, the fingerprint (canonical JSON and SHA-256, now',
    "  kept per body text), the referee's body digest (kept per body text) and the stored answer.",
    '- POST Session with a fresh key: a transaction of 2 statements once its reads are kept (was about 20:',
    '  per-Project load counts kept in memory, per-day settled SU by triggers; the budget check bounded by the',
    '  load and by day sums kept between settlements; no receipt read for a key never used; no timer for a',
    "  creation that waits behind its Project's earlier queue deadline) and the bus listeners. It writes 4",
    "  b-trees: the Session's and the execution's rows (appended; the execution's carries the receipt; ids and",
    '  keys are found through maps in memory, not indexes) and two indexes of executions. About a third of a',
    "  creation's CPU is SQLite, about a quarter Node's HTTP parser and writes. Its CPU per",
    '  request still falls by half over the first few thousand creations (V8 optimising the creation path), so',
    '  the bench warms it with four unrecorded rounds. On this 2-vCPU machine the CPU time of one request',
    '  doubles while another process runs (150 to 200 µs per creation alone, 400 to 450 µs beside a test run),',
    '  so the ratio is only meaningful from a quiet run.',
    '- Waking the client (perf, `cpu-clock` with call graphs; the kernel time the V8 profile puts under the',
    '  wrong frames): a socket write that wakes a client waiting on another CPU costs the writer an interrupt',
    "  through the hypervisor of this virtual machine. Under fresh-key load that was 72% of the mock's writev",
    '  time, about 50 µs per answer, against 32% (4 µs) for bare Hono, whose faster answers find the client',
    '  awake. The mock now writes the answers finished in one turn of the event loop together at its end',
    '  (answerBurst in mock/server.ts), waking the client once per burst: 15 to 20% less CPU per request on',
    '  every endpoint measured.',
    '- 30 virtual days: 7 webhook attempts per delivery are 7 real HTTP sends to the receiver (another process),',
    `  over kept-alive connections (up to ${DEFAULT_MOST_SENDS_OF_ONE_PROJECT} at once for one Project); the sends, their SQLite bookkeeping (about a dozen`,
    '  statements per attempt) and the HMAC signatures take the wall time, not the timers. The socket writes',
    '  alone are about 15% of it (the kernel wakes the receiver on each), SQL about a quarter.',
    '- Counting instructions (`npm run bench:instructions`, valgrind: a measure a busy machine does not move)',
    '  found two costs no profile showed: statements with a bound LIMIT were re-prepared on every run,',
    "  and better-sqlite3 built each row by setting its columns one by one (12% of the 30-day advance's",
    '  instructions) and bound each @name parameter by looking it up. See the README (Speed).',
    '- Memory: about 5 KB per stored Session between 1k and 100k (its Turn carrying its receipt, events, output',
    '  and ledger rows in the in-memory SQLite store, and their indexes; the maps of ids and keys to rows, about',
    '  90 bytes a row; 6 KB while the receipt was a row of its own).',
    "- Start-up: module loading (hono, ajv, better-sqlite3), compiling the fixture world's JSON Schema and the",
    "  control API's body schemas; the OpenAPI document is read from its JSON copy.",
    '',
    '## Re-run',
    '',
    '```sh',
    'npm run build          # the bench starts the built mock, as npm start does',
    'npm run bench          # everything (about 12 minutes); writes this file',
    'npm run bench -- --quick                       # a short run (about 2 minutes), written to BENCHMARKS.partial.md',
    "npm run bench -- --only http --endpoint 'get turn' --profile /tmp/prof   # one endpoint, the mock under --cpu-prof",
    'npm run bench:inprocess                        # the old in-process comparison (app.request, no sockets)',
    "npm run bench:instructions -- --endpoint 'get turn' --baseline ../other   # instructions per request (valgrind)",
    '```',
    '',
    'Sections (`--only`, comma-separated): http, sse, webhooks, virtual-time, store, instances, startup.',
    '`--no-prism`, `--no-hono`, `--rounds n`, `--duration s`, `--connections n`, `--out <file>` (default BENCHMARKS.md;',
    'BENCHMARKS.partial.md for a run with `--quick`, `--only`, `--endpoint`, `--no-hono`, `--no-prism`, `--profile` or `--baseline`),',
    '`--baseline <dir>`: another build of the mock (a checkout with its `dist/`) measured in the same rounds.',
    '',
  )
  return lines.join('\n')
}
