/**
 * The HTTP hot-path rounds: each endpoint is measured on the mock, bare Hono and Prism in interleaved rounds
 * (A B C A B C …) with autocannon as a library, over 127.0.0.1; per round req/s, p50 and p99 latency and the
 * server's CPU per request; the medians of the rounds are reported.
 */
import autocannon, { type Request } from 'autocannon'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Target } from './targets.js'
import {
  AUTH,
  DEPLOYMENT,
  JSON_AUTH,
  SESSION_BODY,
  WAITING_CAP,
  FRESH_TARGETS,
  prepareWorld,
  type Prepared,
} from './world.js'

export type Endpoint = {
  name: string
  /** The requests, given the world the mock prepared (the same paths are served by every target). */
  requests(
    p: Prepared,
    round: number,
  ): {
    method: string
    path: string
    headers: Record<string, string>
    body?: string
    /** A new Idempotency-Key on every request, rotating over these paths and keys. */
    fresh?: { path: string; authorization: string }[]
  }
  /** A bounded count instead of a duration (fresh keys: the waiting cap). */
  amount?: number
  /** The mock is reset and prepared again before each of its rounds. */
  resetBefore?: boolean
}

export const ENDPOINTS: Endpoint[] = [
  {
    name: 'GET Turn',
    requests: (p) => ({ method: 'GET', path: p.turnPath, headers: AUTH }),
  },
  {
    name: 'GET Deployments',
    requests: () => ({ method: 'GET', path: '/v1/deployments', headers: AUTH }),
  },
  {
    name: 'POST Session (fresh key)',
    requests: () => ({
      method: 'POST',
      path: `/v1/deployments/${DEPLOYMENT}/sessions`,
      headers: JSON_AUTH,
      body: SESSION_BODY,
      fresh: FRESH_TARGETS,
    }),
    amount: WAITING_CAP * FRESH_TARGETS.length,
    resetBefore: true,
  },
  {
    name: 'POST Session (replay)',
    requests: () => ({
      method: 'POST',
      path: `/v1/deployments/${DEPLOYMENT}/sessions`,
      headers: { ...JSON_AUTH, 'Idempotency-Key': 'bench-replay' },
      body: SESSION_BODY,
    }),
  },
  {
    name: 'GET Run (100 outputs)',
    requests: (p) => ({ method: 'GET', path: p.runPath, headers: AUTH }),
  },
]

export type Sample = {
  reqPerS: number
  /**
   * Mean latency in µs, from the closed loop: each connection has one request out at a time, so a request
   * takes connections / (req/s) on average (Little's law). autocannon records latencies in whole
   * milliseconds, so its own mean counts only the requests that took 1 ms or more.
   */
  meanUs: number
  p50Ms: number
  p99Ms: number
  cpuUsPerReq: number | undefined
  non2xx: number
  errors: number
  /** The requests answered and the seconds they took (the median of rounds: the sums over them). */
  requests: number
  seconds: number
}

export type Row = { endpoint: string; target: string; samples: Sample[] }

/** The median (the mean of the two middle values for an even count). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

export function medianOf(samples: Sample[]): Sample {
  const cpu = samples.map((s) => s.cpuUsPerReq).filter((x): x is number => x !== undefined)
  return {
    reqPerS: median(samples.map((s) => s.reqPerS)),
    meanUs: median(samples.map((s) => s.meanUs)),
    p50Ms: median(samples.map((s) => s.p50Ms)),
    p99Ms: median(samples.map((s) => s.p99Ms)),
    cpuUsPerReq: cpu.length ? median(cpu) : undefined,
    non2xx: samples.reduce((n, s) => n + s.non2xx, 0),
    errors: samples.reduce((n, s) => n + s.errors, 0),
    requests: samples.reduce((n, s) => n + s.requests, 0),
    seconds: samples.reduce((n, s) => n + s.seconds, 0),
  }
}

/** One autocannon run against one target. */
export async function measure(
  target: Target,
  spec: ReturnType<Endpoint['requests']>,
  opts: { connections: number; durationS: number; amount?: number; tag: string },
): Promise<Sample> {
  let n = 0
  const request: Request = {
    method: spec.method,
    path: spec.path,
    headers: spec.headers,
    body: spec.body,
  }
  // Fresh keys: a new Idempotency-Key on every request, the Projects in turn.
  const fresh = spec.fresh
  if (fresh)
    request.setupRequest = (req) => {
      const to = fresh[n % fresh.length]!
      return {
        ...req,
        path: to.path,
        headers: {
          ...req.headers,
          Authorization: to.authorization,
          'Idempotency-Key': `${opts.tag}-${n++}`,
        },
      }
    }
  // A bounded (amount) run ends on autocannon's next one-second tick: it is timed to its last response.
  const started = process.hrtime.bigint()
  let lastAnswer = started
  request.onResponse = () => {
    lastAnswer = process.hrtime.bigint()
  }
  const cpuBefore = target.cpuMs()
  const result = await autocannon({
    url: target.url,
    connections: opts.connections,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.durationS }),
    requests: [request],
    timeout: 30,
  })
  const cpuAfter = target.cpuMs()
  const total = result.requests.total
  const seconds = opts.amount
    ? Number(lastAnswer - started) / 1e9
    : (result.finish.getTime() - result.start.getTime()) / 1000
  return {
    reqPerS: total / seconds,
    meanUs: (opts.connections * 1e6 * seconds) / total,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    cpuUsPerReq:
      cpuBefore !== undefined && cpuAfter !== undefined && total > 0
        ? ((cpuAfter - cpuBefore) * 1000) / total
        : undefined,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    requests: total,
    seconds,
  }
}

/**
 * A round of an endpoint bounded by the mock's waiting cap (fresh keys): batches of `amount` requests, the
 * world reset and prepared again before each (not timed), until the batches add up to the round's duration.
 * A batch is under a second; a round of one batch against the other targets' 5 s would let a moment of the
 * shared host's load decide it. req/s: every batch's requests over their summed time; CPU: the batches' CPU
 * over their requests; p50 and p99: the median of the batches'.
 */
export async function measureBatches(
  target: Target,
  spec: ReturnType<Endpoint['requests']>,
  opts: { connections: number; durationS: number; amount: number; tag: string },
  reset: () => Promise<void>,
): Promise<Sample & { batches: number }> {
  const batches: Sample[] = []
  let seconds = 0
  let requests = 0
  let cpuUs: number | undefined = 0
  // At least one batch; at most 50, however slow the host (a round stays bounded in time).
  while (batches.length === 0 || (seconds < opts.durationS && batches.length < 50)) {
    await reset()
    const b = await measure(target, spec, { ...opts, tag: `${opts.tag}b${batches.length}` })
    batches.push(b)
    seconds += b.seconds
    requests += b.requests
    cpuUs =
      cpuUs === undefined || b.cpuUsPerReq === undefined
        ? undefined
        : cpuUs + b.cpuUsPerReq * b.requests
  }
  return {
    reqPerS: requests / seconds,
    meanUs: (opts.connections * 1e6 * seconds) / requests,
    p50Ms: median(batches.map((b) => b.p50Ms)),
    p99Ms: median(batches.map((b) => b.p99Ms)),
    cpuUsPerReq: cpuUs === undefined || requests === 0 ? undefined : cpuUs / requests,
    non2xx: batches.reduce((n, b) => n + b.non2xx, 0),
    errors: batches.reduce((n, b) => n + b.errors, 0),
    requests,
    seconds,
    batches: batches.length,
  }
}

/** Writes the bare app's route table (the mock's own answers) and returns its path. */
export function writeBareRoutes(p: Prepared): string {
  const file = join(tmpdir(), `bench-bare-routes-${process.pid}.json`)
  writeFileSync(file, JSON.stringify(p.bodies))
  return file
}

/**
 * Interleaved rounds: for each round, for each endpoint, each target in turn. `mock` is the target whose
 * world is reset before a resetBefore endpoint; its Prepared paths are the same after every reset.
 */
/** Unrecorded rounds that warm the mock up on an endpoint whose rounds its waiting cap bounds. */
const WARM_BOUNDED_ROUNDS = 4

export async function httpRounds(
  targets: Target[],
  mocks: Target[],
  prepared: Prepared,
  opts: { rounds: number; durationS: number; connections: number; endpoints?: Endpoint[] },
  progress: (line: string) => void,
): Promise<Row[]> {
  const endpoints = opts.endpoints ?? ENDPOINTS
  // Warm-up (not recorded): every target's JIT sees every endpoint before the first measured round. A
  // round bounded by the mock's waiting cap is short, and creating work runs much more code than a read (its
  // CPU per request still falls by half over the first few thousand creations): the mock is warmed with
  // WARM_BOUNDED_ROUNDS such rounds first.
  for (const e of endpoints)
    for (const t of targets) {
      const bounded = mocks.includes(t) && e.amount !== undefined
      for (let w = 0; w < (bounded ? WARM_BOUNDED_ROUNDS : 1); w++) {
        if (mocks.includes(t) && e.resetBefore) await prepareWorld(t.url)
        await measure(t, e.requests(prepared, -1 - w), {
          connections: opts.connections,
          durationS: 1,
          amount: bounded ? e.amount : undefined,
          tag: `warm${w}-${t.name}`,
        })
      }
    }
  progress('warm-up done')
  const rows: Row[] = endpoints.flatMap((e) =>
    targets.map((t) => ({ endpoint: e.name, target: t.name, samples: [] as Sample[] })),
  )
  for (let round = 0; round < opts.rounds; round++) {
    for (const e of endpoints) {
      for (const t of targets) {
        const reset = async () => {
          if (!mocks.includes(t) || !e.resetBefore) return
          const again = await prepareWorld(t.url)
          if (again.turnPath !== prepared.turnPath || again.runPath !== prepared.runPath)
            throw new Error('the reset world no longer has the measured ids')
        }
        const measured = {
          connections: opts.connections,
          durationS: opts.durationS,
          tag: `r${round}-${t.name}`,
        }
        // The mock's fresh-key round is batches bounded by its waiting cap, as long as the stateless
        // targets' round.
        const amount = mocks.includes(t) ? e.amount : undefined
        const sample =
          amount === undefined
            ? (await reset(), await measure(t, e.requests(prepared, round), measured))
            : await measureBatches(t, e.requests(prepared, round), { ...measured, amount }, reset)
        rows.find((r) => r.endpoint === e.name && r.target === t.name)!.samples.push(sample)
        progress(
          `round ${round + 1}/${opts.rounds} ${e.name.padEnd(26)} ${t.name.padEnd(10)} ${sample.reqPerS.toFixed(0).padStart(7)} req/s  p50 ${sample.p50Ms} ms  p99 ${sample.p99Ms} ms  cpu ${sample.cpuUsPerReq?.toFixed(0) ?? '?'} µs/req${sample.non2xx ? `  non-2xx ${sample.non2xx}` : ''}${'batches' in sample ? `  (${sample.batches} batches)` : ''}`,
        )
      }
    }
  }
  return rows
}
