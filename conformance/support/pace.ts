/**
 * Pacing and spending of one conformance run.
 *
 * On a mock target (control API present) every test starts from fresh call-rate counters (target.fresh()), and
 * retryRateLimited() below keeps tests that make many Accept-class calls about their own rule: a 429
 * RATE_LIMITED is sent again after Retry-After, by advancing virtual time on the mock or by waiting on a real
 * target.
 *
 * On a real target (no control API) nothing is reset, so every call of the run goes through one RunPacer
 * (installed on the target's ApiClient by target.ts):
 *   - call rates: the document's Accept class (10 per minute: creating a Session, Turn or Run, uploads) and
 *     Read class (60 per minute: every other request) are kept by a sliding window shared by every call of the
 *     run; a 429 with Retry-After pauses that class for every test and the same request (same Idempotency-Key,
 *     same body) is sent again, a bounded number of times. Tests of the call-rate rules themselves (a title
 *     naming a requirement whose codes include RATE_LIMITED or CONCURRENCY_LIMIT) are not held back and see
 *     their 429s; their calls still count.
 *   - a proxy's bare 502, 503 or 504 (no error envelope: retry rule 5, "treat 429, 502, 503, 504 as retryable
 *     then") is sent again, the same request, after Retry-After or an exponential backoff with jitter, a bounded
 *     number of times; the resends are counted (LedgerStats.proxyResent). It is never a verdict: when every
 *     resend met one too, the running test is skipped with the reason.
 *   - spending: requests that start executions (Session, Turn, Run, work creation) or store files (uploads) are
 *     sent only when the run allows spending (`--allow-spend`, TARGET_ALLOW_SPEND=1), within --max-executions
 *     and --max-su (each execution reserves its limits.max_su, or the document's 100 SU cap); otherwise the
 *     current test is skipped with the reason. Every execution accepted (the Run of a 202 Run receipt, the Turn
 *     of a Session or Turn receipt) is told to the ledger (started), so the CLI can cancel the ones still
 *     running at the end of the run or when it is interrupted (conformance/cli/cleanup.ts).
 * The ledger is the conformance CLI's (one per run, over HTTP: CONFORMANCE_COORDINATOR), or one per test file
 * when the suite runs without the CLI.
 */
import { TestRunner } from 'vitest'
import { loadRequirements } from '../../spec/index.js'
import type { ApiResponse } from './client.js'
import type { Target } from './target.js'

export async function retryRateLimited(
  target: Target,
  send: () => Promise<ApiResponse>,
  attempts = 3,
): Promise<ApiResponse> {
  let res = await send()
  for (let i = 1; i < attempts && res.status === 429; i++) {
    const seconds = Math.max(1, Number(res.headers['retry-after'] ?? 1))
    if (target.control) await target.control.advance(seconds)
    else await sleep(seconds * 1000)
    res = await send()
  }
  return res
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Limits > Call rates: the two classes and their limits per minute. */
export type CallClass = 'accept' | 'read'
export const CALL_RATES: Readonly<Record<CallClass, number>> = { accept: 10, read: 60 }
/** The window a call occupies: a minute plus a margin for latency between this process and the target. */
export const RATE_WINDOW_MS = 62_000

/** What a request spends: a new execution (Session, Turn, Run, work) or stored bytes (an upload). */
export type SpendKind = 'execution' | 'upload'

const ACCEPT_PATHS: readonly RegExp[] = [
  /^\/v1\/deployments\/[^/]+\/sessions$/,
  /^\/v1\/sessions\/[^/]+\/turns$/,
  /^\/v1\/workflows\/[^/]+\/runs$/,
  /^\/v1\/files$/,
  /^\/v1\/sessions\/[^/]+\/files$/,
]
const EXECUTION_PATHS: readonly RegExp[] = [
  /^\/v1\/deployments\/[^/]+\/sessions$/,
  /^\/v1\/sessions\/[^/]+\/turns$/,
  /^\/v1\/workflows\/[^/]+\/runs$/,
  /^\/v1\/works$/,
]
const UPLOAD_PATHS: readonly RegExp[] = [/^\/v1\/files$/, /^\/v1\/sessions\/[^/]+\/files$/]

const bare = (path: string) => path.split('?')[0]!

/** The call-rate class of a request (Limits > Call rates). */
export function callClass(method: string, path: string): CallClass {
  return method.toUpperCase() === 'POST' && ACCEPT_PATHS.some((p) => p.test(bare(path)))
    ? 'accept'
    : 'read'
}

/** Whether a request starts an execution or stores a file, if it does. */
export function spendKind(method: string, path: string): SpendKind | undefined {
  if (method.toUpperCase() !== 'POST') return undefined
  if (EXECUTION_PATHS.some((p) => p.test(bare(path)))) return 'execution'
  if (UPLOAD_PATHS.some((p) => p.test(bare(path)))) return 'upload'
  return undefined
}

/** SU budgets: the cap of one Turn or Run unless limits.max_su sets a lower one. */
export const DEFAULT_MAX_SU = 100

/** The SU an execution request may spend at most: its limits.max_su when valid, else the document's cap. */
export function suCap(body: unknown): number {
  let parsed = body
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      parsed = JSON.parse(body.toString())
    } catch {
      return DEFAULT_MAX_SU
    }
  }
  const maxSu = (parsed as { limits?: { max_su?: unknown } } | null)?.limits?.max_su
  return typeof maxSu === 'number' && maxSu > 0 && maxSu <= DEFAULT_MAX_SU ? maxSu : DEFAULT_MAX_SU
}

/**
 * Whether a skip reason is one of the spending refusals above (no --allow-spend, --max-executions or --max-su
 * reached): the test was left out by the run's budget, not by the target or the document.
 */
export const isBudgetReason = (reason: string): boolean =>
  /^(?:needs --allow-spend|--max-executions \d+ reached|--max-su \d+(?:\.\d+)? reached)$/.test(
    reason,
  )

export type SpendPolicy = {
  allow: boolean
  /** Accepted executions at most (default 20). */
  maxExecutions: number
  /** SU reserved by accepted executions at most (default: no bound beyond maxExecutions). */
  maxSu?: number
}

export type SpendRequest = {
  kind: SpendKind
  su: number
  /** method, path and Idempotency-Key */ dedupe?: string
}
export type Reservation = { ok: true; id: number; counted: boolean } | { ok: false; reason: string }

export type LedgerStats = {
  calls: Record<CallClass, number>
  pacedMs: number
  rateLimited: number
  /** Requests sent again after a proxy's bare 502, 503 or 504 (retry rule 5). */
  proxyResent: number
  executions: number
  su: number
  uploads: number
  refused: Record<string, number>
}

/** An execution the run started (accepted), with the key that started it. */
export type Started =
  | { kind: 'run'; runId: string; key?: string }
  | { kind: 'turn'; sessionId: string; turnId: string; key?: string }

/** The run's shared state: call windows and spending. Every method is async so a remote ledger fits. */
export interface Ledger {
  /** Takes a call slot of the class; resolves to the milliseconds to wait before sending (0 with wait false). */
  slot(cls: CallClass, wait: boolean): Promise<number>
  /** The target answered 429 with Retry-After: hold the class back for that long. */
  blocked(cls: CallClass, seconds: number): Promise<void>
  reserve(req: SpendRequest): Promise<Reservation>
  /** The reserved request was answered: accepted (2xx) keeps the reservation, anything else returns it. */
  settle(id: number, accepted: boolean): Promise<void>
  /** A proxy answered a bare 502, 503 or 504 and the request is sent again. */
  proxyResent(status: number): Promise<void>
  /** The target accepted an execution. */
  started(execution: Started): Promise<void>
  stats(): Promise<LedgerStats>
}

/** The ledger itself (in the CLI process, or in a test file's process when the suite runs without the CLI). */
export class RunLedger implements Ledger {
  private readonly windows: Record<CallClass, number[]> = { accept: [], read: [] }
  private readonly blockedUntil: Record<CallClass, number> = { accept: 0, read: 0 }
  private readonly pending = new Map<number, SpendRequest & { counted: boolean }>()
  private readonly acceptedKeys = new Set<string>()
  private readonly executions = new Map<string, Started>()
  private nextId = 1
  private closed: string | undefined
  private readonly counters: LedgerStats = {
    calls: { accept: 0, read: 0 },
    pacedMs: 0,
    rateLimited: 0,
    proxyResent: 0,
    executions: 0,
    su: 0,
    uploads: 0,
    refused: {},
  }

  constructor(
    private readonly policy: SpendPolicy,
    private readonly now: () => number = () => Date.now(),
    private readonly rates: Readonly<Record<CallClass, number>> = CALL_RATES,
    private readonly windowMs = RATE_WINDOW_MS,
  ) {}

  async slot(cls: CallClass, wait: boolean): Promise<number> {
    return this.slotSync(cls, wait)
  }

  /** Reserves the earliest instant at which one more call keeps every window within its limit. */
  slotSync(cls: CallClass, wait: boolean): number {
    const now = this.now()
    const times = this.windows[cls]
    while (times.length > 0 && times[0]! <= now - this.windowMs) times.shift()
    this.counters.calls[cls]++
    if (!wait) {
      // Kept in order: an unpaced call takes its place among the (possibly future) reserved instants.
      const at = times.findIndex((t) => t > now)
      times.splice(at === -1 ? times.length : at, 0, now)
      return 0
    }
    let at = Math.max(now, this.blockedUntil[cls], times[times.length - 1] ?? 0)
    const limit = this.rates[cls]
    if (times.length >= limit) at = Math.max(at, times[times.length - limit]! + this.windowMs)
    times.push(at)
    this.counters.pacedMs += at - now
    return at - now
  }

  async blocked(cls: CallClass, seconds: number): Promise<void> {
    this.counters.rateLimited++
    this.blockedUntil[cls] = Math.max(this.blockedUntil[cls], this.now() + seconds * 1000)
  }

  async reserve(req: SpendRequest): Promise<Reservation> {
    return this.reserveSync(req)
  }

  reserveSync(req: SpendRequest): Reservation {
    const refuse = (reason: string): Reservation => {
      this.counters.refused[reason] = (this.counters.refused[reason] ?? 0) + 1
      return { ok: false, reason }
    }
    if (this.closed) return refuse(this.closed)
    if (!this.policy.allow) return refuse('needs --allow-spend')
    const id = this.nextId++
    // The same request sent again (same Idempotency-Key) starts no new execution.
    if (req.kind === 'upload' || (req.dedupe && this.acceptedKeys.has(req.dedupe))) {
      this.pending.set(id, { ...req, counted: false })
      return { ok: true, id, counted: false }
    }
    if (this.counters.executions >= this.policy.maxExecutions)
      return refuse(`--max-executions ${this.policy.maxExecutions} reached`)
    if (this.policy.maxSu !== undefined && this.counters.su + req.su > this.policy.maxSu)
      return refuse(`--max-su ${this.policy.maxSu} reached`)
    this.counters.executions++
    this.counters.su += req.su
    this.pending.set(id, { ...req, counted: true })
    return { ok: true, id, counted: true }
  }

  async settle(id: number, accepted: boolean): Promise<void> {
    this.settleSync(id, accepted)
  }

  settleSync(id: number, accepted: boolean): void {
    const req = this.pending.get(id)
    if (!req) return
    this.pending.delete(id)
    if (accepted) {
      if (req.kind === 'upload') this.counters.uploads++
      if (req.dedupe && req.kind === 'execution') this.acceptedKeys.add(req.dedupe)
    } else if (req.counted) {
      this.counters.executions--
      this.counters.su -= req.su
    }
  }

  /** No more spending from now on (the run is being stopped): every later reservation is refused with reason. */
  closeSpending(reason: string): void {
    this.closed ??= reason
  }

  async proxyResent(_status: number): Promise<void> {
    this.counters.proxyResent++
  }

  async started(execution: Started): Promise<void> {
    this.startedSync(execution)
  }

  startedSync(execution: Started): void {
    const id = execution.kind === 'run' ? `run ${execution.runId}` : `turn ${execution.turnId}`
    if (!this.executions.has(id)) this.executions.set(id, execution)
  }

  /** The executions the run started, in the order they were accepted (each once). */
  startedExecutions(): Started[] {
    return [...this.executions.values()]
  }

  async stats(): Promise<LedgerStats> {
    return this.statsSync()
  }

  statsSync(): LedgerStats {
    return structuredClone(this.counters)
  }
}

/** The CLI's ledger over HTTP (conformance/cli/coordinator.ts serves it on 127.0.0.1). */
export class RemoteLedger implements Ledger {
  constructor(private readonly url: string) {}

  private async call<T>(op: string, body: unknown): Promise<T> {
    const res = await fetch(`${this.url}/${op}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    if (!res.ok) throw new Error(`conformance coordinator ${op}: ${res.status}`)
    return (await res.json()) as T
  }

  slot = async (cls: CallClass, wait: boolean) =>
    (await this.call<{ waitMs: number }>('slot', { cls, wait })).waitMs
  blocked = async (cls: CallClass, seconds: number) => {
    await this.call('blocked', { cls, seconds })
  }
  reserve = (req: SpendRequest) => this.call<Reservation>('reserve', req)
  settle = async (id: number, accepted: boolean) => {
    await this.call('settle', { id, accepted })
  }
  proxyResent = async (status: number) => {
    await this.call('proxy', { status })
  }
  started = async (execution: Started) => {
    await this.call('started', execution)
  }
  stats = () => this.call<LedgerStats>('stats', {})
}

/** The spending policy named by the environment (the CLI sets it from its flags). */
export function spendPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): SpendPolicy {
  const maxSu = env.TARGET_MAX_SU ? Number(env.TARGET_MAX_SU) : undefined
  return {
    allow: env.TARGET_ALLOW_SPEND === '1',
    maxExecutions: Number(env.TARGET_MAX_EXECUTIONS ?? 20),
    ...(maxSu === undefined ? {} : { maxSu }),
  }
}

/**
 * `accept=N,read=M` (either alone; calls per minute, positive integers): the call rates of a deployment whose
 * limits differ from the document's (the CLI's --call-rates, TARGET_CALL_RATES without the CLI).
 */
export function parseCallRates(text: string, name: string): Partial<Record<CallClass, number>> {
  const rates: Partial<Record<CallClass, number>> = {}
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^(accept|read)=(\d+)$/.exec(part)
    const n = Number(m?.[2])
    if (!m) throw new Error(`${name} takes accept=<n>,read=<m> (calls per minute), got "${text}"`)
    const cls = m[1] as CallClass
    if (rates[cls] !== undefined) throw new Error(`${name}: ${cls} given twice`)
    if (!Number.isSafeInteger(n) || n < 1)
      throw new Error(`${name}: ${cls} needs a positive integer, got "${m[2]}"`)
    rates[cls] = n
  }
  return rates
}

/** The run's ledger: the CLI's when it runs the suite, else a new one for this test file. */
export const ledgerFromEnv = (env: NodeJS.ProcessEnv = process.env): Ledger =>
  env.CONFORMANCE_COORDINATOR
    ? new RemoteLedger(env.CONFORMANCE_COORDINATOR)
    : new RunLedger(spendPolicyFromEnv(env), undefined, {
        ...CALL_RATES,
        ...(env.TARGET_CALL_RATES
          ? parseCallRates(env.TARGET_CALL_RATES, 'TARGET_CALL_RATES')
          : {}),
      })

const TITLE_IDS = /\[([A-Z]+-\d{3})\]/g

/** The requirement ids a test title names (its `[ID]` prefixes). */
export const titleIds = (title: string): string[] =>
  [...title.matchAll(TITLE_IDS)].map((m) => m[1]!)

const RATE_CODES = new Set(['RATE_LIMITED', 'CONCURRENCY_LIMIT'])
/** Requirements about 429 answers: their tests must see the target's 429s, unpaced. */
export const CALL_RATE_REQUIREMENTS: ReadonlySet<string> = new Set(
  loadRequirements()
    .requirements.filter((r) => r.codes.some((c) => RATE_CODES.has(c)))
    .map((r) => r.id),
)

/** The request as the pacer needs to see it (key: the API key it is sent with, to cancel what it starts). */
export type Outbound = { method: string; path: string; idem?: string; body?: unknown; key?: string }

/** A proxy's answer: 502, 503 or 504 without the error envelope (retry rule 5). */
export function isBareProxyError(res: Pick<ApiResponse, 'status' | 'body'>): boolean {
  if (res.status !== 502 && res.status !== 503 && res.status !== 504) return false
  const error = (res.body as { error?: { code?: unknown } } | null | undefined)?.error
  return !(typeof res.body === 'object' && res.body !== null && typeof error?.code === 'string')
}

const RUN_CREATE = /^\/v1\/workflows\/[^/]+\/runs$/
const SESSION_CREATE = /^\/v1\/deployments\/[^/]+\/sessions$/
const TURN_CREATE = /^\/v1\/sessions\/([^/]+)\/turns$/
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0

/** The execution an answer accepted, if any: a 2xx receipt of a Run, Session or Turn creation. */
export function acceptedExecution(req: Outbound, res: ApiResponse): Started | undefined {
  if (req.method.toUpperCase() !== 'POST' || res.status < 200 || res.status >= 300) return undefined
  const body = (typeof res.body === 'object' && res.body !== null ? res.body : {}) as Record<
    string,
    unknown
  >
  const path = bare(req.path)
  const key = req.key === undefined ? {} : { key: req.key }
  if (RUN_CREATE.test(path) && isText(body.run_id))
    return { kind: 'run', runId: body.run_id, ...key }
  if (SESSION_CREATE.test(path) && isText(body.session_id) && isText(body.turn_id))
    return { kind: 'turn', sessionId: body.session_id, turnId: body.turn_id, ...key }
  const turn = TURN_CREATE.exec(path)
  if (turn && isText(body.turn_id))
    return {
      kind: 'turn',
      sessionId: isText(body.session_id) ? body.session_id : turn[1]!,
      turnId: body.turn_id,
      ...key,
    }
  return undefined
}

export type PacerOptions = {
  /** Gate and count spending (real targets). */
  spend: boolean
  /** Resends of one request after 429 + Retry-After (default 4). */
  maxResends?: number
  /** Longest Retry-After honoured, in seconds (default 120): beyond it the 429 is returned as it is. */
  maxRetryAfter?: number
  /** Resends of one request after a proxy's bare 502/503/504 (default 3). */
  maxProxyResends?: number
  /** First backoff after a bare 502/503/504 without Retry-After, in ms (default 1000; doubled each time). */
  proxyBackoffMs?: number
  /** How a request that met only bare 502/503/504 ends (default: the running test is skipped with the reason). */
  unavailable?: (reason: string) => never
  /** How a refused spending ends the request (default: the running test is skipped with the reason). */
  refuse?: (reason: string) => never
}

/** Skips the running test with a reason (or fails a hook, which cannot be skipped). */
export function skipCurrentTest(reason: string): never {
  const test = TestRunner.getCurrentTest()
  if (test) {
    // Kept on the result too: inside a property fast-check wraps the skip error, and its note would be lost.
    if (test.result) (test.result as { note?: string }).note = reason
    test.context.skip(reason)
  }
  throw new Error(`skipped outside a test: ${reason}`)
}

/** Every call of a real target goes through here (see the top of the file). */
export class RunPacer {
  constructor(
    readonly ledger: Ledger,
    private readonly options: PacerOptions,
    private readonly wait: (ms: number) => Promise<void> = sleep,
  ) {}

  async send(req: Outbound, doSend: () => Promise<ApiResponse>): Promise<ApiResponse> {
    const cls = callClass(req.method, req.path)
    const kind = this.options.spend ? spendKind(req.method, req.path) : undefined
    let reservation: Reservation | undefined
    if (kind) {
      reservation = await this.ledger.reserve({
        kind,
        su: kind === 'execution' ? suCap(req.body) : 0,
        ...(req.idem ? { dedupe: `${req.method} ${bare(req.path)} ${req.idem}` } : {}),
      })
      if (!reservation.ok) (this.options.refuse ?? skipCurrentTest)(reservation.reason)
    }
    const title = TestRunner.getCurrentTest()?.name ?? ''
    const paced = !titleIds(title).some((id) => CALL_RATE_REQUIREMENTS.has(id))
    const maxResends = this.options.maxResends ?? 4
    const maxProxyResends = this.options.maxProxyResends ?? 3
    let res: ApiResponse | undefined
    try {
      for (let rateResends = 0, proxyResends = 0; ;) {
        const ms = await this.ledger.slot(cls, paced)
        if (ms > 0) await this.wait(ms)
        res = await doSend()
        const retryAfter = Number(res.headers['retry-after'])
        if (isBareProxyError(res)) {
          if (proxyResends >= maxProxyResends)
            (this.options.unavailable ?? skipCurrentTest)(
              `a proxy answered ${req.method} ${bare(req.path)} with a bare ${res.status} (no error envelope) ` +
                `${proxyResends + 1} times in a row (retry rule 5): no verdict`,
            )
          await this.ledger.proxyResent(res.status)
          const backoff =
            Number.isFinite(retryAfter) &&
            retryAfter >= 0 &&
            retryAfter <= (this.options.maxRetryAfter ?? 120)
              ? retryAfter * 1000
              : (this.options.proxyBackoffMs ?? 1000) * 2 ** proxyResends * (1 + Math.random() / 2)
          proxyResends++
          if (backoff > 0) await this.wait(backoff)
          continue
        }
        if (
          res.status !== 429 ||
          !paced ||
          rateResends >= maxResends ||
          !Number.isFinite(retryAfter) ||
          retryAfter > (this.options.maxRetryAfter ?? 120)
        ) {
          const execution = acceptedExecution(req, res)
          if (execution) await this.ledger.started(execution)
          return res
        }
        rateResends++
        await this.ledger.blocked(cls, Math.max(retryAfter, 1))
      }
    } finally {
      if (reservation?.ok)
        await this.ledger.settle(
          reservation.id,
          res !== undefined && res.status < 300 && !isBareProxyError(res),
        )
    }
  }
}
