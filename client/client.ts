/**
 * The reference client: a small typed client of the /v1 interface that follows the document's client rules.
 * Retries only retryable answers and network failures, waiting Retry-After or capped exponential backoff with
 * jitter (retry.ts); a create, input, cancel or upload resend keeps its Idempotency-Key and body; polls a Turn
 * or Run every 2 to 5 seconds; follows SSE streams with resume by Last-Event-ID and dedup by event_id
 * (sse.ts); downloads result files through one-use addresses and checks their sha256; says the next step for
 * a failed execution (next-step.ts). Time is injectable (`sleep`, `now`), so tests run it on a mock's virtual
 * clock. It talks to the service over HTTP only.
 */
import { createHash, randomUUID } from 'node:crypto'
import type { components } from '../spec/generated/openapi.js'
import { IntegrityError, NetworkError, ServiceError, type ErrorEnvelope } from './errors.js'
import { nextStep, type NextStep } from './next-step.js'
import {
  DEFAULT_RETRY_POLICY,
  isRetryable,
  mayRetry,
  retryAfterMs,
  retryDelayMs,
  type RetryPolicy,
} from './retry.js'
import { followEvents, type FollowOptions } from './sse.js'

type Schemas = components['schemas']
export type SessionCreateInput = Schemas['SessionCreateInput']
export type SessionReceipt = Schemas['SessionReceipt']
export type TurnReceipt = Schemas['TurnReceipt']
export type FileReceipt = Schemas['FileReceipt']
export type Turn = Schemas['Turn']
export type RunCreateInput = Schemas['RunCreateInput']
export type RunReceipt = Schemas['RunReceipt']
export type RunDetail = Schemas['RunDetail']
export type FileOutput = Schemas['FileOutput']
export type DownloadReceipt = Schemas['DownloadReceipt']
export type ServiceEvent = Schemas['Event']

/** Polling interval bounds (Call rates: "Recommended polling interval 2 to 5 seconds"; RATE-007). */
export const MIN_POLL_INTERVAL_MS = 2_000
export const MAX_POLL_INTERVAL_MS = 5_000

/**
 * The wait before the one new execution of "one more later" (the document says "wait", not how long: the
 * client's choice, overridable per call).
 */
export const ONE_MORE_LATER_WAIT_MS = 60_000

/** The outcome of runTurn(): the last Turn, the next step when it failed, every Turn id tried. */
export type TurnOutcome = {
  turn: Turn
  /** The next-step row for a failed, canceled or expired Turn; undefined when it succeeded. */
  nextStep: NextStep | undefined
  /** The Turns created, oldest first (two at most: one more later, once). */
  turnIds: string[]
}

/** Statuses after which a Turn or Run read is not repeated (terminal; REQUIRES_ACTION is a stop point). */
const STOP_STATUSES = new Set([
  'SUCCEEDED',
  'PARTIALLY_SUCCEEDED',
  'FAILED',
  'CANCELED',
  'EXPIRED',
  'REQUIRES_ACTION',
])

export type ClientOptions = {
  /** The service base address, e.g. https://api.example.com (no trailing /v1). */
  baseUrl: string
  /** The API key, from the caller's secret storage (AUTH-002). */
  apiKey: string
  retry?: Partial<RetryPolicy>
  /** Between polls of one Turn or Run; clamped to 2 to 5 seconds. Default 2 seconds. */
  pollIntervalMs?: number
  /** Waits (injectable: a test can move a mock's virtual clock instead). Default a real timer. */
  sleep?: (ms: number) => Promise<void>
  /** Current time in ms, for Retry-After dates. Default Date.now. */
  now?: () => number
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number
  /** New Idempotency-Keys. Default crypto.randomUUID. */
  newKey?: () => string
  /** fetch implementation. Default the global fetch. */
  fetch?: typeof fetch
}

export type RequestOptions = {
  /** A JSON body. */
  body?: unknown
  /** A multipart upload, rebuilt for every resend from the same file (the same content). */
  file?: { bytes: Uint8Array; filename: string; mimeType: string }
  /** For create, input, cancel, delete and upload requests: kept for every resend (RETRY-004, RETRY-017). */
  idempotencyKey?: string
  headers?: Record<string, string>
  /** Send without the API key (a download address carries its own token). */
  anonymous?: boolean
}

export type Answer<T> = { status: number; body: T; headers: Headers }

export class ReferenceClient {
  readonly baseUrl: string
  private readonly apiKey: string
  readonly policy: RetryPolicy
  readonly pollIntervalMs: number
  readonly sleep: (ms: number) => Promise<void>
  private readonly now: () => number
  readonly random: () => number
  private readonly newKey: () => string
  private readonly fetchImpl: typeof fetch

  constructor(opts: ClientOptions) {
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '')
    this.apiKey = opts.apiKey
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry }
    this.pollIntervalMs = Math.min(
      MAX_POLL_INTERVAL_MS,
      Math.max(MIN_POLL_INTERVAL_MS, opts.pollIntervalMs ?? MIN_POLL_INTERVAL_MS),
    )
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)))
    this.now = opts.now ?? Date.now
    this.random = opts.random ?? Math.random
    this.newKey = opts.newKey ?? randomUUID
    this.fetchImpl = opts.fetch ?? fetch
  }

  /**
   * One request with the retry rules: a network failure or a retryable answer is resent, the same key and
   * body, after Retry-After or backoff, within the caps; anything else is returned (2xx) or thrown.
   */
  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<Answer<T>> {
    const res = await this.send(method, path, opts)
    const text = await res.text()
    return {
      status: res.status,
      body: (text === '' ? undefined : JSON.parse(text)) as T,
      headers: res.headers,
    }
  }

  /** As request(), returning the raw successful Response (for streams and file bytes). */
  async send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`
    const headers: Record<string, string> = { ...opts.headers }
    if (!opts.anonymous) headers.Authorization = `Bearer ${this.apiKey}`
    if (opts.idempotencyKey !== undefined) headers['Idempotency-Key'] = opts.idempotencyKey
    const json = opts.body === undefined ? undefined : JSON.stringify(opts.body)
    if (json !== undefined) headers['Content-Type'] = 'application/json'
    const file = opts.file
    const body = (): string | FormData | undefined => {
      if (!file) return json
      const form = new FormData()
      form.append('file', new Blob([file.bytes], { type: file.mimeType }), file.filename)
      return form
    }
    let attempts = 0
    let waited = 0
    for (;;) {
      attempts += 1
      let res: Response
      try {
        res = await this.fetchImpl(url, { method, headers, body: body() })
      } catch (error) {
        // RETRY-001, RETRY-017: a dropped connection or timeout is resent unchanged (same key and body).
        const delay = retryDelayMs(this.policy, attempts, undefined, this.random)
        if (!mayRetry(this.policy, attempts, waited, delay)) throw new NetworkError(error, attempts)
        await this.wait(delay)
        waited += delay
        continue
      }
      if (res.ok) return res
      const envelope = await readEnvelope(res)
      const retryable = isRetryable(res.status, envelope?.error)
      const code = envelope?.error.code
      if (!retryable) throw new ServiceError(res.status, code, false, envelope, attempts)
      // RETRY-002: Retry-After when given, else backoff with jitter; RETRY-003: both capped.
      const delay = retryDelayMs(
        this.policy,
        attempts,
        retryAfterMs(res.headers.get('Retry-After'), this.now()),
        this.random,
      )
      if (!mayRetry(this.policy, attempts, waited, delay))
        throw new ServiceError(res.status, code, true, envelope, attempts)
      await this.wait(delay)
      waited += delay
    }
  }

  /** Creates a Session with its first Turn; resends keep the key (a new one per call unless given). */
  async createSession(
    deploymentId: string,
    input: SessionCreateInput,
    opts: { idempotencyKey?: string } = {},
  ): Promise<SessionReceipt> {
    const res = await this.request<SessionReceipt>(
      'POST',
      `/v1/deployments/${encodeURIComponent(deploymentId)}/sessions`,
      { body: input, idempotencyKey: opts.idempotencyKey ?? this.newKey() },
    )
    return res.body
  }

  /** Adds input to a Session: a new Turn (the mock's assumed path; the document does not show it). */
  async addTurn(
    sessionId: string,
    input: SessionCreateInput,
    opts: { idempotencyKey?: string } = {},
  ): Promise<TurnReceipt> {
    const res = await this.request<TurnReceipt>(
      'POST',
      `/v1/sessions/${encodeURIComponent(sessionId)}/turns`,
      { body: input, idempotencyKey: opts.idempotencyKey ?? this.newKey() },
    )
    return res.body
  }

  /** Uploads an input file (POST /v1/files); resends keep the key and the same file. */
  async uploadFile(
    file: { bytes: Uint8Array; filename: string; mimeType: string },
    opts: { idempotencyKey?: string } = {},
  ): Promise<FileReceipt> {
    const res = await this.request<FileReceipt>('POST', '/v1/files', {
      file,
      idempotencyKey: opts.idempotencyKey ?? this.newKey(),
    })
    return res.body
  }

  /** Asks to cancel a Run: 202 for a new cancel, 200 when it already ended. */
  async cancelRun(runId: string, opts: { idempotencyKey?: string } = {}): Promise<number> {
    const res = await this.request<unknown>(
      'POST',
      `/v1/runs/${encodeURIComponent(runId)}/cancel`,
      {
        body: {},
        idempotencyKey: opts.idempotencyKey ?? this.newKey(),
      },
    )
    return res.status
  }

  /** Starts a Run of a published workflow version. */
  async createRun(
    workflowId: string,
    input: RunCreateInput,
    opts: { idempotencyKey?: string } = {},
  ): Promise<RunReceipt> {
    const res = await this.request<RunReceipt>(
      'POST',
      `/v1/workflows/${encodeURIComponent(workflowId)}/runs`,
      { body: input, idempotencyKey: opts.idempotencyKey ?? this.newKey() },
    )
    return res.body
  }

  /** Reads a Turn by its status_url (relative path). */
  async getTurn(statusUrl: string): Promise<Turn> {
    return (await this.request<Turn>('GET', statusUrl)).body
  }

  /** Reads a Run ({run, outputs, next_cursor}) by its status_url. */
  async getRun(statusUrl: string): Promise<RunDetail> {
    return (await this.request<RunDetail>('GET', statusUrl)).body
  }

  /** Polls a Turn every pollIntervalMs until it ends or needs action (STATE-004, RATE-007). */
  async waitForTurn(statusUrl: string): Promise<Turn> {
    for (;;) {
      const turn = await this.getTurn(statusUrl)
      if (STOP_STATUSES.has(turn.status)) return turn
      await this.wait(this.pollIntervalMs)
    }
  }

  /** Polls a Run until run.status ends or needs action (STATE-027: never a step's end). */
  async waitForRun(statusUrl: string): Promise<RunDetail> {
    for (;;) {
      const detail = await this.getRun(statusUrl)
      if (STOP_STATUSES.has(detail.run.status)) return detail
      await this.wait(this.pollIntervalMs)
    }
  }

  /**
   * Follows an event stream (events_url) from its start or after `lastEventId`, handing each event once to
   * `onEvent` until it returns true: reconnects with the last id after a cut or a retryable error frame.
   */
  async followEvents(
    eventsUrl: string,
    onEvent: (event: ServiceEvent) => boolean | void,
    opts: FollowOptions = {},
  ): Promise<{ lastEventId: string | undefined }> {
    return followEvents(this, eventsUrl, onEvent, opts)
  }

  /**
   * Downloads a result file and checks its bytes against sha256 (ART-010). Each try asks for a new one-use
   * address (a used or expired one is 404: issue a new one); the address, which carries a token, is never
   * logged or returned (ART-009).
   */
  async download(artifactId: string, sha256: string): Promise<Uint8Array> {
    let mismatch: IntegrityError | undefined
    for (let i = 0; i < 2; i++) {
      const receipt = await this.request<DownloadReceipt>(
        'POST',
        `/v1/artifacts/${encodeURIComponent(artifactId)}/download`,
      )
      let bytes: Uint8Array
      try {
        bytes = await this.fetchOnce(receipt.body.url)
      } catch (error) {
        if (error instanceof ServiceError && error.status === 404) continue
        if (error instanceof NetworkError || isTransient(error)) continue
        throw error
      }
      const actual = createHash('sha256').update(bytes).digest('hex')
      if (actual === sha256) return bytes
      mismatch = new IntegrityError(sha256, actual)
    }
    throw mismatch ?? new Error(`artifact ${artifactId}: no download address could be used`)
  }

  /**
   * Runs input in a new Session to its end, applying the next-step table once: after a code of "one more
   * later" it waits and creates one new execution with the same input (a new key: new work, costing SU
   * again); if the same code repeats it stops (RETRY-008). Every other failure is returned with its next step
   * for the caller (a person) to act on; nothing else is rerun.
   */
  async runTurn(
    deploymentId: string,
    input: SessionCreateInput,
    opts: { waitBeforeRetryMs?: number } = {},
  ): Promise<TurnOutcome> {
    const turnIds: string[] = []
    let previousCode: string | undefined
    for (;;) {
      const receipt = await this.createSession(deploymentId, input)
      turnIds.push(receipt.turn_id)
      const turn = await this.waitForTurn(receipt.status_url)
      const code = turn.error?.code
      if (turn.status === 'SUCCEEDED' || turn.status === 'REQUIRES_ACTION' || code === undefined)
        return { turn, nextStep: undefined, turnIds }
      const step = nextStep(code)
      if (step !== 'one-more-later' || previousCode !== undefined)
        return { turn, nextStep: step, turnIds }
      previousCode = code
      await this.wait(opts.waitBeforeRetryMs ?? ONE_MORE_LATER_WAIT_MS)
    }
  }

  /** What to do about a failed execution's error code (the document's next-step table). */
  nextStep(code: string): NextStep {
    return nextStep(code)
  }

  /** A wait on the injected clock. */
  async wait(ms: number): Promise<void> {
    if (ms > 0) await this.sleep(ms)
  }

  /** One GET of a one-use address: never resent (the token may be spent), errors thrown. */
  private async fetchOnce(url: string): Promise<Uint8Array> {
    let res: Response
    try {
      res = await this.fetchImpl(url.startsWith('http') ? url : `${this.baseUrl}${url}`)
    } catch (error) {
      throw new NetworkError(error, 1)
    }
    if (!res.ok) {
      const envelope = await readEnvelope(res)
      throw new ServiceError(
        res.status,
        envelope?.error.code,
        isRetryable(res.status, envelope?.error),
        envelope,
        1,
      )
    }
    return new Uint8Array(await res.arrayBuffer())
  }
}

const isTransient = (error: unknown) => error instanceof ServiceError && error.retryable

/** The error envelope of an answer, or undefined (a proxy's bare page, an unreadable body). */
async function readEnvelope(res: Response): Promise<ErrorEnvelope | undefined> {
  try {
    const body = (await res.json()) as Partial<ErrorEnvelope>
    return typeof body?.error?.code === 'string' ? (body as ErrorEnvelope) : undefined
  } catch {
    return undefined
  }
}
