/**
 * Start-up: process start to the first 200 answer, for the mock as `npm start` starts it (node
 * dist/mock/main.js) and for the bare Hono app, alternating, over 127.0.0.1. Also the store-size bench, whose
 * servers are child processes too (store-server.ts).
 */
import { spawn } from 'node:child_process'
import autocannon from 'autocannon'
import { freePort, ROOT, rssOf, spawnTarget } from './targets.js'
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
  reqPerS: number
  p50Ms: number
  p99Ms: number
  rssMiB: number | undefined
}

/** GET Turn latency and resident memory of a mock holding `n` Sessions (a child process per size). */
export async function storeSize(
  world: string,
  n: number,
  durationS: number,
): Promise<StoreSizeRow> {
  const start = process.hrtime.bigint()
  const target = await spawnTarget(
    `store ${n}`,
    process.execPath,
    ['--import', 'tsx', 'scripts/bench/store-server.ts', world, String(n)],
    { ready: /listening on \S+ turn=\S+/, url: '', timeoutMs: 600_000 },
  )
  const fillS = ms(start) / 1000
  try {
    const line = /accepted (\d+)[^\n]*\nlistening on (\S+) turn=(\S+)/.exec(target.output())
    if (!line) throw new Error(`store server said: ${target.output()}`)
    const [, accepted, url, turn] = line
    const result = await autocannon({
      url: url!,
      connections: 8,
      duration: durationS,
      requests: [{ method: 'GET', path: turn!, headers: AUTH }],
    })
    return {
      sessions: n,
      accepted: Number(accepted),
      fillS,
      reqPerS: result.requests.total / result.duration,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      rssMiB: (rssOf(target.pid) ?? NaN) / 2 ** 20,
    }
  } finally {
    await target.stop()
  }
}
