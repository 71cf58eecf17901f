/**
 * The scale benches, in process (the mock's own createMock): 30 virtual days of a busy Project, test-suite
 * cost (createMock + close, reset), and the store-size server (store-server.ts) measured over HTTP. Wall time
 * is read here, in a script: the mock itself never reads it outside mock/clock/.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createMock, type Mock } from '../../mock/index.js'
import { ROOT } from './targets.js'
import { DEPLOYMENT, JSON_AUTH, SESSION_BODY } from './world.js'

const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6

/** Creates `n` Sessions through the app (every one a Turn), advancing the clock before the waiting cap. */
export async function fillSessions(
  mock: Pick<Mock, 'fetch' | 'clock'>,
  n: number,
  opts: { tag: string; drainEvery?: number; drainSeconds?: number },
): Promise<{ accepted: number; refused: Record<number, number> }> {
  let accepted = 0
  const refused: Record<number, number> = {}
  for (let i = 0; i < n; i++) {
    const res = await mock.fetch(
      new Request(`http://mock/v1/deployments/${DEPLOYMENT}/sessions`, {
        method: 'POST',
        headers: { ...JSON_AUTH, 'Idempotency-Key': `${opts.tag}-${i}` },
        body: SESSION_BODY,
      }),
    )
    await res.arrayBuffer()
    if (res.status === 202) accepted++
    else refused[res.status] = (refused[res.status] ?? 0) + 1
    // Drain the waiting queue (2 run at a time, about 5 virtual seconds each) before it reaches its cap.
    if (opts.drainEvery && i % opts.drainEvery === opts.drainEvery - 1)
      await mock.clock.advance(opts.drainSeconds ?? opts.drainEvery * 3)
    // In process, every request of this loop runs in one task: V8 keeps each Request's weakly held abort
    // signal alive until the task ends, so the whole fill would be held. Over HTTP every request is a task
    // of its own; a turn of the event loop every 100 requests does the same here.
    if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve))
  }
  return { accepted, refused }
}

export type VirtualTimeResult = {
  executions: number
  accepted: number
  virtualDays: number
  wallMs: number
  timersFired: number
  timersPerS: number
  webhookAttempts: number
  /** The wall time of every run, in run order, when the scenario ran more than once (virtualTimeRuns). */
  wallRunsMs?: number[]
  /** The wall times of the unrecorded warm-up runs before them (virtualTimeRuns). */
  warmUpsMs?: number[]
}

/** The next message of a child process (fork's IPC channel). */
const message = <T>(child: ChildProcess): Promise<T> =>
  new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T))
    child.once('exit', (code) => reject(new Error(`receiver exited (${code})`)))
  })

/**
 * 30 virtual days of a busy Project: `executions` Turns accepted at once (outputs, events), a webhook endpoint
 * that answers 500 to everything so every delivery runs its 7 attempts, then one advance of 30 days. The
 * receiver runs in a process of its own (failing-receiver.mjs), as an integrator's does: the wall time is the
 * mock's work and the round trips, not the receiver's request handling on the mock's thread.
 */
export async function virtualTime(world: string, executions: number): Promise<VirtualTimeResult> {
  const receiver = fork(join(ROOT, 'scripts/bench/failing-receiver.mjs'), [], { stdio: 'inherit' })
  const mock = await createMock({ fixtures: world, allowInsecureWebhooks: true, rateLimits: false })
  try {
    const { port } = await message<{ port: number }>(receiver)
    const project = mock.fixtures().projects[0]!
    const hook = await mock.app.request(`/api/runtime/projects/${project.id}/webhooks`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${project.owner_token}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/hook` }),
    })
    if (hook.status !== 201)
      throw new Error(`webhook endpoint: ${hook.status} ${await hook.text()}`)
    const { accepted } = await fillSessions(mock, executions, { tag: 'busy' })
    const start = process.hrtime.bigint()
    const days = 30
    const { fired } = await mock.deps.scheduler.advanceBy(days * 86_400_000)
    await mock.webhooks.idle()
    const wallMs = ms(start)
    receiver.send('count')
    const { attempts } = await message<{ attempts: number }>(receiver)
    return {
      executions,
      accepted,
      virtualDays: days,
      wallMs,
      timersFired: fired,
      timersPerS: (fired / wallMs) * 1000,
      webhookAttempts: attempts,
    }
  } finally {
    mock.close()
    receiver.disconnect()
  }
}

/** Unrecorded runs of the 30-day scenario before the recorded ones (see virtualTimeRuns). */
const VIRTUAL_TIME_WARM_UPS = 2

/**
 * The scenario of virtualTime `runs` times, each with a mock and a receiver of its own, after
 * VIRTUAL_TIME_WARM_UPS unrecorded warm-up runs (as the HTTP rounds are warmed up): the run of median wall
 * time, with every run's wall time and the warm-ups'. The first advances in a process also pay for V8
 * compiling the code an advance runs (timers, webhook sends, events): its optimising compiler's threads took
 * about 0.9 s of CPU during a cold run, competing with the run and the receiver for this machine's 2 cores,
 * and in fresh processes the first two runs took 1.3 to 1.9 s where the next ones took 1.2 to 1.3 s. One run
 * is a few seconds, so a moment of load on a shared machine can move it by a third; the median of a few is
 * the figure to judge.
 */
export async function virtualTimeRuns(
  world: string,
  executions: number,
  runs: number,
): Promise<VirtualTimeResult> {
  const warmUps: number[] = []
  for (let i = 0; i < VIRTUAL_TIME_WARM_UPS; i++)
    warmUps.push((await virtualTime(world, executions)).wallMs)
  const results: VirtualTimeResult[] = []
  for (let i = 0; i < runs; i++) results.push(await virtualTime(world, executions))
  const sorted = [...results].sort((a, b) => a.wallMs - b.wallMs)
  return Object.assign({}, sorted[(sorted.length - 1) >> 1]!, {
    wallRunsMs: results.map((r) => r.wallMs),
    warmUpsMs: warmUps,
  })
}

/**
 * Times of a series of calls: the first and last single calls, the median, the maximum, and the medians of
 * the first and the last `EDGE` calls (a single call can meet a garbage collection or a busy machine: the
 * series is flat when its last calls cost what its first did).
 */
export type SeriesMs = {
  first: number
  median: number
  last: number
  max: number
  firstMedian: number
  lastMedian: number
}

export type InstancesResult = {
  count: number
  createCloseMs: SeriesMs
  resetMs: SeriesMs
  heapMiB: { before: number; after: number }
}

const EDGE = 20
const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const stats = (xs: number[]): SeriesMs => ({
  first: xs[0]!,
  median: medianOf(xs),
  last: xs[xs.length - 1]!,
  max: Math.max(...xs),
  firstMedian: medianOf(xs.slice(0, EDGE)),
  lastMedian: medianOf(xs.slice(-EDGE)),
})

/** Heap in use after a full garbage collection (the bench process is not started with --expose-gc). */
const heapMiB = () => {
  setFlagsFromString('--expose-gc')
  ;(runInNewContext('gc') as () => void)()
  return process.memoryUsage().heapUsed / 2 ** 20
}

/**
 * createMock() + close() `count` times in one process, then one instance's reset() `count` times: the
 * package's own entry point as an SDK author's suite imports it (dist/mock/public.js, built JavaScript), not
 * the TypeScript sources through tsx (whose transform adds allocations of its own to every instance).
 */
export async function instances(count: number): Promise<InstancesResult> {
  const { createMock } = (await import(
    pathToFileURL(join(ROOT, 'dist/mock/public.js')).href
  )) as typeof import('../../mock/public.js')
  const warm = await createMock()
  warm.close()
  const before = heapMiB()
  const createClose: number[] = []
  for (let i = 0; i < count; i++) {
    const t = process.hrtime.bigint()
    const m = await createMock()
    m.close()
    createClose.push(ms(t))
  }
  const after = heapMiB()
  const mock = await createMock()
  const resets: number[] = []
  try {
    for (let i = 0; i < count; i++) {
      // Each reset undoes a little work, as between two tests of a suite.
      await fillSessions(mock, 3, { tag: `reset-${i}` })
      const t = process.hrtime.bigint()
      await mock.reset()
      resets.push(ms(t))
    }
  } finally {
    mock.close()
  }
  return {
    count,
    createCloseMs: stats(createClose),
    resetMs: stats(resets),
    heapMiB: { before, after },
  }
}

/** A scale bench that runs in a process of its own (own-process.ts). */
export type OwnProcessJob =
  | { kind: 'virtual-time'; world: string; executions: number; runs: number }
  | { kind: 'instances'; count: number }

/**
 * Runs `job` in a fresh node process (own-process.ts) and returns its result. The in-process benches measure
 * the mock in its user's process, not in the bench's own: after the HTTP rounds the bench's process holds
 * autocannon's results (68 MiB of heap in use against 39 MiB in a fresh one), and the 30-day scenario run
 * there took 2.0 to 2.1 s (median of 5) against 1.4 s in a fresh process on the same machine minutes apart.
 */
export function inOwnProcess(
  job: Extract<OwnProcessJob, { kind: 'virtual-time' }>,
): Promise<VirtualTimeResult>
export function inOwnProcess(
  job: Extract<OwnProcessJob, { kind: 'instances' }>,
): Promise<InstancesResult>
export function inOwnProcess(job: OwnProcessJob): Promise<VirtualTimeResult | InstancesResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'scripts/bench/own-process.ts'), JSON.stringify(job)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    )
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.once('error', reject)
    child.once('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('result '))
      if (code === 0 && line) resolve(JSON.parse(line.slice('result '.length)))
      else reject(new Error(`${job.kind} bench exited (${code}):\n${out}`))
    })
  })
}
