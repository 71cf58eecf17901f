/**
 * The mock's public in-process API: createMock() builds the app on a fresh (or reopened) store, for unit
 * tests, SDK test suites and the CLI. `mock.app.request('/v1/...')` needs no socket.
 */
import type { Hono } from 'hono'
import { createApp } from './app.js'
import { parseClockStart, type ClockMode } from './clock/clock.js'
import type { TimerKinds } from './clock/timer-kinds.js'
import type { Deps, Env } from './deps.js'
import type { SseLimits } from './events/sse.js'
import type { FaultRule, FaultRuleInput } from './faults/rules.js'
import { fixturesView, resetWorld, type FixturesView } from './fixtures/load.js'
import {
  DEFAULT_WORLD_FILE,
  readWorldFile,
  validateWorld,
  type FixtureWorld,
} from './fixtures/world.js'
import { jsonLog, silentLog, type Log } from './util/log.js'
import { listen, type Listening } from './server.js'
import { createDeps } from './wiring.js'

export type MockOptions = {
  /** A fixture file path or a fixture world object; default fixtures/default-world.json. */
  fixtures?: string | FixtureWorld
  /** SQLite file to keep state in (reopened with its state if it exists); default in memory. */
  db?: string
  /** Clock mode at start; default 'manual' in process (the CLI defaults to 'realtime'). */
  clock?: ClockMode
  /** Allow http:// and loopback webhook endpoints (local rehearsal only). Default false. */
  allowInsecureWebhooks?: boolean
  /**
   * PEM certificates (a CA or a self-signed certificate) webhook sends trust beside the default root CAs, for a
   * local HTTPS receiver; certificates are verified either way (a self-signed one is TLS_ERROR without this).
   */
  webhookCa?: string
  /** Apply call-rate limits. Default true. */
  rateLimits?: boolean
  /** With `db`: sync every commit to disk (SQLite synchronous=FULL), for power-loss durability. */
  durable?: boolean
  /** When set, the control API (/_mock) needs `Authorization: Bearer <token>` (a mock shared on a network). */
  controlToken?: string
  /**
   * Virtual time at start and after every reset: 'now' (the wall clock's time then: webhook signatures a
   * receiver on wall time accepts), an ISO 8601 time with a zone, or a Date; default the world's clock_start.
   */
  clockStart?: 'now' | string | Date
  /**
   * Seed of the record-id sequence (uuids), default "mock"; a reset rewinds it. Tokens and request ids are
   * never seeded.
   */
  seed?: string
  /** true: JSON lines to stdout/stderr; a Log: that sink; default silent. */
  log?: boolean | Log
  /** Registers extra timer kinds beside the mock's own (unit tests of the scheduler). */
  timerKinds?: (kinds: TimerKinds) => void
  /** SSE stream limits (keep-alive interval, slow-consumer send limit, buffer); default the document's. */
  sseLimits?: Partial<SseLimits>
  /** Scheduler runaway guard: the most timer firings at one virtual instant (default 100,000). */
  loopLimit?: number
  /**
   * Forward-compatibility rehearsal from the start (unknown response fields, event types, content kinds and
   * error codes; mock/domain/forward-compat.ts). Default false; POST /_mock/forward-compat switches it.
   */
  forwardCompat?: boolean
}

export type Mock = {
  app: Hono<Env>
  /** The app's fetch handler (for @hono/node-server or a fetch-based client). */
  fetch: (request: Request) => Promise<Response>
  clock: {
    /** Current virtual time. */
    now(): Date
    readonly mode: ClockMode
    /**
     * Moves virtual time forward, firing every due timer in order; resolves with the new time. Webhook sends
     * started on the way may still be in flight (see webhooks.idle).
     */
    advance(seconds: number): Promise<Date>
    setMode(mode: ClockMode): void
  }
  /**
   * The instance's fault rules (mock/faults/rules.ts): `add(body)` takes the POST /_mock/faults body (validated;
   * a RangeError names the problems), `list()`, `remove(id)`, `clear()`.
   */
  faults: {
    add(body: FaultRuleInput): FaultRule
    list(): FaultRule[]
    remove(id: string): boolean
    clear(): void
  }
  webhooks: {
    /**
     * Resolves once no webhook send is in flight or queued and every outcome is recorded. An advance answers
     * without waiting for sends (each ends within the 20-second send limit); await this before reading what
     * a receiver got or a delivery's outcome.
     */
    idle(): Promise<void>
  }
  /** Back to the fixture world and its starting clock; resolves with the new time. */
  reset(): Promise<Date>
  /** The GET /_mock/fixtures view (projects, keys, Deployments, Workflows). */
  fixtures(): FixturesView
  /**
   * Serves this mock over HTTP on host:port (defaults 127.0.0.1 and a free port); what Node refuses before
   * the app runs is answered with the envelope too (mock/server.ts).
   */
  listen(opts?: { port?: number; host?: string }): Promise<Listening>
  /** Stops the realtime timer, aborts webhook sends in flight and closes the store. */
  close(): void
  deps: Deps
}

/** Loads the fixture option into a validated world. */
export function resolveWorld(fixtures: MockOptions['fixtures']): {
  world: FixtureWorld
  source: string
} {
  if (fixtures === undefined)
    return { world: readWorldFile(DEFAULT_WORLD_FILE), source: DEFAULT_WORLD_FILE }
  if (typeof fixtures === 'string') return { world: readWorldFile(fixtures), source: fixtures }
  return { world: validateWorld(fixtures, 'inline fixtures'), source: 'inline fixtures' }
}

/** The clockStart option as the store's config holds it; a RangeError for a value that is no time. */
function toClockStart(start: MockOptions['clockStart']): 'now' | number | undefined {
  if (start === undefined) return undefined
  const ms = start instanceof Date ? start.getTime() : parseClockStart(start)
  if (ms === undefined || (typeof ms === 'number' && !Number.isFinite(ms)))
    throw new RangeError(
      `clockStart must be 'now', an ISO 8601 time with a zone or a Date, not ${String(start)}`,
    )
  return ms
}

/**
 * Creates a mock in this process.
 * @example const mock = await createMock(); await mock.clock.advance(60); await mock.app.request('/_mock/clock')
 */
export async function createMock(options: MockOptions = {}): Promise<Mock> {
  const { world, source } = resolveWorld(options.fixtures)
  const clockStart = toClockStart(options.clockStart)
  const log =
    options.log === true
      ? jsonLog()
      : options.log === false || !options.log
        ? silentLog
        : options.log
  const deps = createDeps(
    {
      world,
      worldSource: source,
      dbPath: options.db ?? ':memory:',
      durable: options.durable ?? false,
      controlToken: options.controlToken,
      seed: options.seed ?? 'mock',
      clockStart,
      allowInsecureWebhooks: options.allowInsecureWebhooks ?? false,
      webhookCa: options.webhookCa,
      rateLimits: options.rateLimits ?? true,
      sse: options.sseLimits,
      forwardCompat: options.forwardCompat ?? false,
    },
    {
      clockMode: options.clock ?? 'manual',
      log,
      timerKinds: options.timerKinds,
      loopLimit: options.loopLimit,
    },
  )
  const app = createApp(deps)
  return {
    app,
    fetch: async (request) => app.fetch(request),
    clock: {
      now: () => deps.clock.now(),
      get mode() {
        return deps.clock.mode
      },
      advance: async (seconds) => {
        if (!(seconds > 0)) throw new RangeError(`advance needs seconds > 0, got ${seconds}`)
        const { now } = await deps.scheduler.advanceBy(Math.round(seconds * 1000))
        return new Date(now)
      },
      setMode: (mode) => deps.clock.setMode(mode),
    },
    faults: {
      add: (body) => deps.faults.addChecked(body),
      list: () => deps.faults.list(),
      remove: (id) => deps.faults.remove(id),
      clear: () => deps.faults.clear(),
    },
    webhooks: { idle: () => deps.deliveries.idle() },
    reset: async () => new Date(await resetWorld(deps)),
    fixtures: () => fixturesView(deps.db),
    listen: (opts) => listen({ fetch: app.fetch, deps }, opts),
    close: () => {
      deps.changes.closeAll()
      deps.scheduler.close()
      deps.deliveries.abortAll()
      deps.db.close()
    },
    deps,
  }
}

export type { ClockMode } from './clock/clock.js'
export type { Deps, Env } from './deps.js'
export type { FixtureWorld } from './fixtures/world.js'
export type { FixturesView } from './fixtures/load.js'
export type { Listening } from './server.js'
export type { FaultRule, FaultRuleInput } from './faults/rules.js'
export { ConnectionDropped } from './errors.js'
// The webhook receiver kit (pure, no mock state): verifySignature, parseSignatureHeader, Deduplicator, ...
export * from './webhooks/kit/index.js'
