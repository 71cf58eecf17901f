/**
 * The processes a benchmark measures: the mock started as `npm start` starts it (node dist/mock/main.js), a
 * bare Hono app serving the same JSON bodies (bare-hono.mjs), and `prism mock spec/openapi.yaml`. Each listens
 * on 127.0.0.1 on a free port; its CPU time is read from /proc (Linux) so that a round can report the server's
 * CPU per request.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLOCK_TICKS = 100 // USER_HZ on Linux

export type Target = {
  name: string
  url: string
  pid: number
  /** Milliseconds from spawn to "listening" (the first line the process prints when it accepts requests). */
  startedMs: number
  /** User + system CPU time of the process so far, in ms (undefined where /proc is absent). */
  cpuMs(): number | undefined
  /** Resident memory in bytes. */
  rssBytes(): number | undefined
  /** What the process printed so far. */
  output(): string
  stop(): Promise<void>
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

const procStat = (pid: number): string[] | undefined => {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

export function cpuMsOf(pid: number): number | undefined {
  const f = procStat(pid)
  if (!f) return undefined
  // Fields 14 and 15 of stat (utime, stime); the slice above starts at field 3.
  return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS
}

export function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** Spawns a server process and resolves once its output matches `ready` (bounded by `timeoutMs`). */
export async function spawnTarget(
  name: string,
  command: string,
  args: string[],
  opts: { ready: RegExp; url: string; timeoutMs?: number; env?: NodeJS.ProcessEnv },
): Promise<Target> {
  const started = process.hrtime.bigint()
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${name} did not start within ${opts.timeoutMs ?? 30_000} ms:\n${output}`))
    }, opts.timeoutMs ?? 30_000)
    const onData = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString()
      if (opts.ready.test(output)) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${name} exited (${code}) before it listened:\n${output}`))
    })
  })
  const startedMs = Number(process.hrtime.bigint() - started) / 1e6
  // The listeners above keep draining its output (kept up to 100 kB), so a chatty server never blocks.
  const pid = child.pid!
  return {
    name,
    url: opts.url,
    pid,
    startedMs,
    cpuMs: () => cpuMsOf(pid),
    rssBytes: () => rssOf(pid),
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
        setTimeout(() => child.kill('SIGKILL'), 5000).unref()
      }),
  }
}

/**
 * How a target's node process is started: node itself, or node under a wrapper (`command` with `args`, then
 * node and its arguments), e.g. valgrind (scripts/bench/instructions.ts), with its own start-up bound.
 */
export type Launcher = { command: string; args: string[]; timeoutMs?: number }
const NODE: Launcher = { command: process.execPath, args: [] }

/**
 * The mock as `npm start` runs it: the built dist/mock/main.js under node. `profileDir`: node --cpu-prof
 * writes the mock's CPU profile there when it stops.
 */
export async function startMock(
  args: string[] = [],
  profileDir?: string,
  baseline?: { name: string; root: string },
  launcher: Launcher = NODE,
): Promise<Target> {
  const port = await freePort()
  return spawnTarget(
    baseline?.name ?? 'mock',
    launcher.command,
    [
      ...launcher.args,
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
      baseline ? resolve(baseline.root, 'dist/mock/main.js') : 'dist/mock/main.js',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--quiet',
      '--no-rate-limits',
      ...args,
    ],
    { ready: /listening on http/, url: `http://127.0.0.1:${port}`, timeoutMs: launcher.timeoutMs },
  )
}

/** Bare Hono on @hono/node-server answering the given method+path -> {status, body} table. */
export async function startBareHono(
  routesFile: string,
  launcher: Launcher = NODE,
): Promise<Target> {
  const port = await freePort()
  return spawnTarget(
    'bare Hono',
    launcher.command,
    [...launcher.args, 'scripts/bench/bare-hono.mjs', String(port), routesFile],
    { ready: /listening on http/, url: `http://127.0.0.1:${port}`, timeoutMs: launcher.timeoutMs },
  )
}

/** Prism's stateless mock of the same document (the pinned devDependency). */
export async function startPrism(): Promise<Target> {
  const port = await freePort()
  const bin = fileURLToPath(new URL('../../node_modules/.bin/prism', import.meta.url))
  return spawnTarget(
    'Prism',
    bin,
    ['mock', 'spec/openapi.yaml', '-h', '127.0.0.1', '-p', String(port), '--errors', 'false'],
    { ready: /Prism is listening/, url: `http://127.0.0.1:${port}`, timeoutMs: 60_000 },
  )
}
