/**
 * `npm run bench:instructions`: instructions per request of the mock's main thread, counted by valgrind
 * (callgrind) while the bench sends a fixed number of requests over 127.0.0.1. A count, not a time: it does
 * not move with the machine's load, so a change can be judged on a shared 2-core machine where req/s and CPU
 * time move by half between runs. It does move with where the garbage collector's work falls (up to a
 * quarter for one round of 2,000 requests), hence rounds and their median. It does not see what costs time
 * without costing instructions (cache misses, the kernel's side of a socket write): `npm run bench` stays the
 * measure of the targets. Needs valgrind and dist/ (`npm run build`).
 *
 * Options: --endpoint <substring> (default: every endpoint of the HTTP bench), --amount <n> requests counted
 * per round (default 2000), --rounds <n> (default 3), --warmup <n> unrecorded requests first (default 4000;
 * V8 optimises slowly under valgrind; the fresh-key endpoint resets the mock before the warm-up and before each
 * round, and sends at most its waiting caps' 5,000 at a time), --baseline <dir> (another build of the mock, a checkout with its
 * dist/, counted in the same rounds), --no-hono, --keep <dir> (keeps each target's callgrind dumps in a folder of
 * dir named for it, for callgrind_annotate: which functions the instructions went to).
 */
import { execFile } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { ENDPOINTS, measure, writeBareRoutes } from './http.js'
import { ROOT, startBareHono, startMock, type Launcher, type Target } from './targets.js'
import { FRESH_TARGETS, prepareWorld, writeBenchWorld, type Prepared } from './world.js'

const { values } = parseArgs({
  options: {
    endpoint: { type: 'string' },
    amount: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '4000' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    'no-hono': { type: 'boolean', default: false },
    keep: { type: 'string' },
  },
})
const amount = Number(values.amount)
const warmup = Number(values.warmup)
const rounds = Number(values.rounds)
const log = (line: string) => process.stdout.write(`${line}\n`)

const run = (command: string, args: string[]) =>
  new Promise<void>((done, fail) =>
    execFile(command, args, (error) => (error ? fail(error) : done())),
  )

if (!existsSync(join(ROOT, 'dist/mock/main.js'))) {
  process.stderr.write('bench:instructions: dist/ is missing; run `npm run build` first\n')
  process.exit(1)
}
try {
  await run('valgrind', ['--version'])
} catch {
  process.stderr.write('bench:instructions: needs valgrind (Debian: apt-get install valgrind)\n')
  process.exit(1)
}

/** A server under callgrind, counting nothing until told; each count() is one dump of its main thread. */
type Counted = Target & { count(during: () => Promise<void>): Promise<number> }

async function underCallgrind(start: (launcher: Launcher) => Promise<Target>): Promise<Counted> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-callgrind-'))
  const target = await start({
    command: 'valgrind',
    args: [
      '--tool=callgrind',
      '--instr-atstart=no',
      '--separate-threads=yes',
      '--smc-check=all-non-file',
      `--callgrind-out-file=${dir}/cg.%p`,
      process.execPath,
    ],
    timeoutMs: 180_000,
  })
  const name = target.name
  const pid = String(target.pid)
  const stop = target.stop
  let dumps = 0
  return Object.assign(target, {
    async count(during: () => Promise<void>): Promise<number> {
      await run('callgrind_control', ['--zero', pid])
      await run('callgrind_control', ['--instr=on', pid])
      await during()
      await run('callgrind_control', ['--instr=off', pid])
      await run('callgrind_control', ['--dump', pid])
      dumps += 1
      // Thread 1 is the event loop; the others are V8's compiler and collector helpers and libuv's pool.
      const file = readdirSync(dir).find((f) => f.endsWith(`.${dumps}-01`))
      const totals = file && /^totals: (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'))
      if (!totals) throw new Error(`${name}: no callgrind dump ${dumps} in ${dir}`)
      return Number(totals[1])
    },
    stop: async () => {
      await stop()
      if (values.keep) {
        const kept = join(resolve(values.keep), name.replace(/[^\w-]+/g, '-'))
        cpSync(dir, kept, { recursive: true })
        log(`${name}: callgrind dumps in ${kept} (callgrind_annotate <file>)`)
      }
      rmSync(dir, { recursive: true, force: true })
    },
  })
}

const worldFile = writeBenchWorld()
const mockArgs = ['--clock', 'manual', '--fixtures', worldFile, '--allow-insecure-webhooks']
const endpoints = ENDPOINTS.filter(
  (e) => !values.endpoint || e.name.toLowerCase().includes(values.endpoint.toLowerCase()),
)
if (endpoints.length === 0) throw new Error(`no endpoint matches ${values.endpoint}`)

type Counting = {
  name: string
  target: Counted
  isMock: boolean
  world: Prepared
  counts: number[][]
}
const targets: Counting[] = []
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

try {
  // Every target under its own valgrind, side by side: a count does not depend on the machine's load.
  for (const [name, root] of [
    ['mock', ROOT],
    ...(values.baseline ? [['mock (baseline)', resolve(values.baseline)]] : []),
  ] as const) {
    const target = await underCallgrind((launcher) =>
      startMock(mockArgs, undefined, root === ROOT ? undefined : { name, root }, launcher),
    )
    targets.push({ name, target, isMock: true, world: await prepareWorld(target.url), counts: [] })
  }
  // Bare Hono answers the mock's own bodies at the mock's paths (the seeded world gives the same ids every
  // time); it creates nothing, so it is not counted on a fresh-key endpoint.
  if (!values['no-hono']) {
    const world = targets[0]!.world
    const routes = writeBareRoutes(world)
    const target = await underCallgrind((launcher) => startBareHono(routes, launcher))
    targets.push({ name: 'bare Hono', target, isMock: false, world, counts: [] })
  }
  for (const e of endpoints) {
    const on = targets.filter((t) => t.isMock || e.amount === undefined)
    const prepare = async () => {
      for (const t of on) if (t.isMock && e.resetBefore) t.world = await prepareWorld(t.target.url)
    }
    const send = (t: Counting, n: number, tag: string) =>
      measure(t.target, e.requests(t.world, 0), {
        connections: 4,
        durationS: 0,
        amount: n,
        tag,
      }).then((s) => {
        if (s.non2xx || s.errors) throw new Error(`${t.name} ${e.name}: ${s.non2xx} non-2xx`)
      })
    // A bounded endpoint (fresh keys) has room for its cap only: the mock is reset before the warm-up and
    // before each round (outside the count), and each send is kept inside the cap. Each send starts the
    // rotation over the fresh-key Projects again at Project A: a multiple of their number gives each the
    // same share, so none passes its cap before the others.
    const within = (k: number) => {
      if (e.amount === undefined) return k
      const capped = Math.min(k, e.amount)
      return capped - (capped % FRESH_TARGETS.length)
    }
    const n = within(amount)
    // V8 optimises slowly under valgrind: a long unrecorded warm-up first.
    await prepare()
    await Promise.all(on.map((t) => send(t, within(warmup), 'warm')))
    const counts = new Map(on.map((t) => [t, [] as number[]]))
    // Rounds in turn: a count moves with where the garbage collector's work falls, by up to a quarter for
    // one round of 2,000 requests; the median of the rounds is reported.
    for (let r = 0; r < rounds; r++) {
      await prepare()
      for (const t of on)
        counts.get(t)!.push((await t.target.count(() => send(t, n, `r${r}`))) / n / 1000)
    }
    for (const t of targets) t.counts.push(counts.get(t) ?? [])
    for (const t of on)
      log(
        `${t.name.padEnd(16)} ${e.name.padEnd(26)} ${median(counts.get(t)!).toFixed(1)} k instructions/request (rounds ${counts
          .get(t)!
          .map((c) => c.toFixed(1))
          .join(', ')})`,
      )
  }
} finally {
  for (const t of targets) await t.target.stop()
}

log('')
log(
  `main-thread instructions per request (thousands): median of ${rounds} rounds of ${amount} requests, after ${warmup} unrecorded`,
)
log(`| endpoint | ${targets.map((t) => t.name).join(' | ')} |`)
log(`|---|${targets.map(() => '---:').join('|')}|`)
endpoints.forEach((e, i) =>
  log(
    `| ${e.name} | ${targets.map((t) => (t.counts[i]!.length ? median(t.counts[i]!).toFixed(1) : '–')).join(' | ')} |`,
  ),
)
