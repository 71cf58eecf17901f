/**
 * The dependency set every route, middleware and timer handler receives (db, clock, scheduler, ids, config,
 * log), the Hono Env type that carries it on the context, and createDeps() that wires them together.
 */
import { Clock, type ClockMode, type ClockState, type WallClock } from './clock/clock.js'
import { Scheduler } from './clock/scheduler.js'
import { createTimerKinds, type TimerKinds } from './clock/timer-kinds.js'
import { isWorldLoaded, loadWorld, worldStartMs } from './fixtures/load.js'
import type { FixtureWorld } from './fixtures/world.js'
import { openDb, type Db } from './store/db.js'
import { getMetaJson, setMetaJson } from './store/meta.js'
import { Ids, type IdsState } from './util/ids.js'
import type { Log } from './util/log.js'
import type { OperationSpec } from './http/operations.js'

/** Process-wide settings from the CLI flags or createMock options. */
export type MockConfig = {
  /** The validated fixture world loaded at first start and on reset. */
  world: FixtureWorld
  /** Where the world came from (a path or "inline"), for messages. */
  worldSource: string
  /** ":memory:" or the --db file. */
  dbPath: string
  /** Seed of the id generator. */
  seed: string
  /** --allow-insecure-webhooks: http:// and loopback webhook endpoints allowed (local rehearsal only). */
  allowInsecureWebhooks: boolean
  /** false with --no-rate-limits: call-rate limits are not applied. */
  rateLimits: boolean
}

export type Deps = {
  db: Db
  clock: Clock
  scheduler: Scheduler
  ids: Ids
  config: MockConfig
  log: Log
}

/** What the api-key middleware (a later feature) puts on the context for /v1 requests. */
export type AuthInfo = {
  projectId: string
  key: string
  scopes: readonly string[]
  deploymentIds: readonly string[]
}

/** The parsed and validated request of a documented operation (mock/http/route.ts). */
export type RequestInput = {
  /** The JSON body, or {} for an absent EmptyInput body. */
  body: unknown
  /** Query parameters, coerced to their documented types. */
  query: Record<string, unknown>
  /** The one `file` part of a multipart upload. */
  upload?: { filename: string; mimeType: string; bytes: Uint8Array }
  /** The Idempotency-Key header of an idempotent operation. */
  idempotencyKey?: string
  /** When a new receipt stops answering (ISO 8601): handlers put it in idempotency_expires_at. */
  idempotencyExpiresAt?: string
}

export type Variables = {
  deps: Deps
  requestId: string
  auth?: AuthInfo
  /** The documented operation being served (set by route()). */
  op?: OperationSpec
  input?: RequestInput
  /** The project of an owner-token (management) request. */
  ownerProjectId?: string
}

/** The Hono Env of every app and sub-app of the mock. */
export type Env = { Variables: Variables }

export type CreateDepsOptions = {
  /** Mode at start; a reopened --db store keeps its time and switches to this mode continuously. */
  clockMode: ClockMode
  log: Log
  timerKinds?: TimerKinds
  loopLimit?: number
  /** Wall clock override for unit tests of realtime mode. */
  wall?: WallClock
}

const CLOCK_KEY = 'clock'
const IDS_KEY = 'ids'

/** Opens the store, loads the world if the store is new, and wires clock, ids and scheduler. */
export function createDeps(config: MockConfig, opts: CreateDepsOptions): Deps {
  const db = openDb(config.dbPath)
  try {
    const ids = new Ids(
      { load: () => getMetaJson<IdsState>(db, IDS_KEY), save: (s) => setMetaJson(db, IDS_KEY, s) },
      config.seed,
    )
    const clock = new Clock(
      {
        load: () => getMetaJson<ClockState>(db, CLOCK_KEY),
        save: (s) => setMetaJson(db, CLOCK_KEY, s),
      },
      { startMs: worldStartMs(config.world), mode: opts.clockMode },
      opts.wall,
    )
    if (!isWorldLoaded(db)) {
      db.tx(() => loadWorld(db, config.world))
    }
    const deps = { db, clock, ids, config, log: opts.log } as Omit<Deps, 'scheduler'> & {
      scheduler: Scheduler
    }
    deps.scheduler = new Scheduler({
      db,
      clock,
      ids,
      log: opts.log,
      kinds: opts.timerKinds ?? createTimerKinds(),
      context: () => deps,
      loopLimit: opts.loopLimit,
    })
    clock.setMode(opts.clockMode)
    deps.scheduler.rearm()
    return deps
  } catch (error) {
    db.close()
    throw error
  }
}
