/**
 * Start-up: process start to the first 200 answer, for the mock as `npm start` starts it (node
 * dist/mock/main.js) and for the bare Hono app, alternating, over 127.0.0.1. Also the store-size bench, whose
 * servers are child processes too (store-server.ts).
 */
import { spawn } from 'node:child_process'
import { freePort, ROOT, rssOf, spawnTarget, type Target } from './targets.js'
import { measure, median, medianOf, type Sample } from './http.js'
import { AUTH } from './world.js'

const ms = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6

/** Spawns the command and polls `path` until it answers 200; the milliseconds from spawn to that answer. */
async function timeToFirst200(
  args: (port: number) => string[],
  url: (port: number) => string,
): Promise<number> {
  const port = await freePort()
  const start = process.hrtime.bigint()
  const child = spawn(process.execPath, args(port), { cwd: ROOT, stdio: 'ignore' })
  try {
    for (;;) {
      if (ms(start) > 60_000) throw new Error(`no answer within 60 s: ${args(port).join(' ')}`)
      try {
        const res = await fetch(url(port))
        await res.arrayBuffer()
        if (res.status === 200) return ms(start)
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 5))
    }
  } finally {
    child.kill('SIGKILL')
  }
}

export type StartupResult = { runs: number; mockMs: number[]; honoMs: number[] }

export async function startup(runs: number): Promise<StartupResult> {
  const mockMs: number[] = []
  const honoMs: number[] = []
  for (let i = 0; i < runs; i++) {
    mockMs.push(
      await timeToFirst200(
        (port) => ['dist/mock/main.js', '--port', String(port), '--quiet', '--clock', 'manual'],
        (port) => `http://127.0.0.1:${port}/_mock/health`,
      ),
    )
    honoMs.push(
      await timeToFirst200(
        (port) => ['scripts/bench/bare-hono.mjs', String(port)],
        (port) => `http://127.0.0.1:${port}/health`,
      ),
    )
  }
  return { runs, mockMs, honoMs }
}

export type StoreSizeRow = {
  sessions: number
  accepted: number
  fillS: number
  /** Medians over the interleaved rounds. */
  reqPerS: number
  meanUs: number
  p50Ms: number
  p99Ms: number
  cpuUsPerReq: number | undefined
  rssMiB: number | undefined
  /**
   * The median over rounds of this size's mean latency over the first size's in the same round (the two are
   * seconds apart, so a shared machine's load drifting over minutes weighs on both; the ratio of the two
   * medians would mix rounds). 1 for the first size.
   */
  latencyVsFirst: number
}

type StoreServer = {
  target: Target
  n: number
  accepted: number
  fillS: number
  turn: string
}

/** A mock holding `n` Sessions in a child process of its own (store-server.ts), filled and listening. */
async function storeServer(world: string, n: number): Promise<StoreServer> {
  const start = process.hrtime.bigint()
  const target = await spawnTarget(
    `store ${n}`,
    process.execPath,
    ['--import', 'tsx', 'scripts/bench/store-server.ts', world, String(n)],
    { ready: /listening on \S+ turn=\S+/, url: '', timeoutMs: 600_000 },
  )
  const line = /accepted (\d+)[^\n]*\nlistening on (\S+) turn=(\S+)/.exec(target.output())
  if (!line) {
    await target.stop()
    throw new Error(`store server said: ${target.output()}`)
  }
  return {
    // The URL the server printed once filled (unknown when it was spawned).
    target: Object.assign({}, target, { url: line[2]! }),
    n,
    accepted: Number(line[1]),
    fillS: ms(start) / 1000,
    turn: line[3]!,
  }
}

/**
 * GET Turn latency, server CPU per request and resident memory of mocks holding each of `sizes` Sessions: one
 * child process per size, all filled first, then measured in interleaved rounds (1k, 10k, 100k, 1k, …) so that
 * the machine's load at one moment weighs on every size alike, after `warmUpRounds` unrecorded rounds. Latency is compared by its mean in µs
 * (autocannon's percentiles are whole milliseconds, too coarse for a read that takes a fraction of one).
 */
export async function storeSizes(
  world: string,
  sizes: number[],
  opts: { durationS: number; rounds: number; warmUpRounds: number },
  progress: (line: string) => void,
): Promise<StoreSizeRow[]> {
  const servers: StoreServer[] = []
  try {
    for (const n of sizes) {
      servers.push(await storeServer(world, n))
      progress(`store: ${n} Sessions filled`)
    }
    const read = (s: StoreServer, durationS: number) =>
      measure(
        s.target,
        { method: 'GET', path: s.turn, headers: AUTH },
        { connections: 8, durationS, tag: `store-${s.n}` },
      )
    // Warm-up (not recorded), interleaved as the rounds are: a freshly filled server's reads cost up to three
    // times what they cost later over its first 10 to 15 s of load (a 100k server, one measure: 158, 95, 88,
    // 89, 85 then 52, 55, 47 µs of CPU per GET in successive 2 s runs; idle time does not shorten it), and the
    // last size filled is the first measured: one second of warm-up judged it by its unsettled start.
    for (let round = 0; round < opts.warmUpRounds; round++)
      for (const s of servers) await read(s, opts.durationS)
    const samples = new Map<StoreServer, Sample[]>(servers.map((s) => [s, []]))
    for (let round = 0; round < opts.rounds; round++)
      for (const s of servers) {
        const sample = await read(s, opts.durationS)
        samples.get(s)!.push(sample)
        progress(
          `store round ${round + 1}/${opts.rounds} ${s.n} Sessions: ${sample.reqPerS.toFixed(0)} req/s, mean ${sample.meanUs.toFixed(0)} µs, cpu ${sample.cpuUsPerReq?.toFixed(0) ?? '?'} µs/req`,
        )
      }
    const first = samples.get(servers[0]!)!
    return servers.map((s) => {
      const m = medianOf(samples.get(s)!)
      const ratios = samples.get(s)!.map((x, round) => x.meanUs / first[round]!.meanUs)
      return {
        sessions: s.n,
        accepted: s.accepted,
        fillS: s.fillS,
        reqPerS: m.reqPerS,
        meanUs: m.meanUs,
        p50Ms: m.p50Ms,
        p99Ms: m.p99Ms,
        cpuUsPerReq: m.cpuUsPerReq,
        rssMiB: (rssOf(s.target.pid) ?? NaN) / 2 ** 20,
        latencyVsFirst: median(ratios),
      }
    })
  } finally {
    await Promise.all(servers.map((s) => s.target.stop()))
  }
}
