/**
 * The types of one mock instance's dependency set (db, clock, scheduler, ids, config, log, bus, streams,
 * deliveries) and
 * the Hono Env that carries it on the context. A leaf module: type imports only; mock/wiring.ts builds it.
 */
import type { Clock } from './clock/clock.js'
import type { Scheduler } from './clock/scheduler.js'
import type { EventRecord } from './events/log.js'
import type { SseLimits, StreamHub } from './events/sse.js'
import type { ExecutionEvent } from './execution/lifecycle.js'
import type { ForwardCompat } from './domain/forward-compat.js'
import type { Settings } from './domain/settings.js'
import type { FaultRules } from './faults/rules.js'
import type { ChangeFeed } from './inspector/change-feed.js'
import type { FixtureWorld } from './fixtures/world.js'
import type { OperationSpec } from './http/operations.js'
import type { Db } from './store/db.js'
import type { Receipts } from './store/idempotency.js'
import type { Channel } from './util/channel.js'
import type { Referee } from './referee/referee.js'
import type { Ids } from './util/ids.js'
import type { RequestJournal } from './util/journal.js'
import type { Log } from './util/log.js'
import type { DeliveryPool } from './webhooks/pool.js'

/** One instance's settings, from the CLI flags or createMock options. */
export type MockConfig = {
  /** The validated fixture world loaded at first start and on reset. */
  world: FixtureWorld
  /** Where the world came from (a path or "inline"), for messages. */
  worldSource: string
  /** ":memory:" or the --db file. */
  dbPath: string
  /** --durable: every commit of a --db store is synced to disk (SQLite synchronous=FULL). */
  durable?: boolean
  /** --control-token: the control API (/_mock) then needs `Authorization: Bearer <token>`. */
  controlToken?: string
  /** Where virtual time starts at the first start and at every reset (default: the world's clock_start). */
  clockStart?: 'now' | number
  /** Seed of the record-id sequence (uuids); secret tokens and request ids are random, not seeded. */
  seed: string
  /** --allow-insecure-webhooks: http:// and loopback webhook endpoints allowed (local rehearsal only). */
  allowInsecureWebhooks: boolean
  /** --webhook-ca: PEM certificates webhook sends trust beside the default roots (a local HTTPS receiver). */
  webhookCa?: string
  /** false with --no-rate-limits: call-rate limits are not applied. */
  rateLimits: boolean
  /** SSE stream limits (unit tests lower them); default the document's. */
  sse?: Partial<SseLimits>
  /** --forward-compat at start (mock/domain/forward-compat.ts); the control call switches deps.forwardCompat. */
  forwardCompat?: boolean
}

/**
 * The instance's publish/subscribe channels; the composition root subscribes every listener. Listeners run
 * inside the transaction that makes the change: they record work and defer I/O.
 */
export type MockBus = {
  /** Something happened to an execution (status, output, Run step): public events, action cancels. */
  execution: Channel<[Deps, ExecutionEvent]>
  /** A public event was appended: SSE fan-out, webhook deliveries. */
  eventAppended: Channel<[Deps, EventRecord]>
}

export type Deps = {
  db: Db
  /** The instance's idempotency receipts (mock/store/idempotency.ts). */
  receipts: Receipts
  clock: Clock
  scheduler: Scheduler
  ids: Ids
  config: MockConfig
  log: Log
  bus: MockBus
  /** The instance's open SSE streams. */
  streams: StreamHub
  /** The requests the instance received on the service's paths (GET /_mock/requests), bounded. */
  journal: RequestJournal
  /** The instance's webhook sends in flight (outside the timer loop, bounded). */
  deliveries: DeliveryPool
  /** The instance's client referee (/_mock/referee; mock/referee/referee.ts). */
  referee: Referee
  /** The instance's fault rules (/_mock/faults; mock/faults/rules.ts). */
  faults: FaultRules
  /** Forward-compatibility rehearsal switch (/_mock/forward-compat; mock/domain/forward-compat.ts). */
  forwardCompat: ForwardCompat
  /** The start flags a test may switch for a while (/_mock/settings); a reset brings back config's values. */
  settings: Settings
  /** What changed, for the inspector's stream (GET /_mock/stream; mock/inspector/change-feed.ts). */
  changes: ChangeFeed
}

/** What the api-key middleware puts on the context for /v1 requests. */
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
  /** The JSON body's text as it came (the body is a function of it). */
  text?: string
  /** Query parameters, coerced to their documented types. */
  query: Record<string, unknown>
  /** The one `file` part of a multipart upload. */
  upload?: { filename: string; mimeType: string; bytes: Uint8Array }
  /** The upload's content check (file-type, asynchronous), made before the synchronous handler runs. */
  uploadTypeProblem?: 'UNSUPPORTED_FILE_TYPE'
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
  /** The error envelope's code and retryable, once errorResponse answered with it (read by the referee). */
  answeredError?: { code: string; retryable: boolean }
  /** The headers the answer carries (util/answer.ts). */
  answerHeaders?: Record<string, string>
  /** The answer built with every answer header (util/answer.ts). */
  builtAnswer?: Response
}

/** The Hono Env of every app and sub-app of the mock. */
export type Env = { Variables: Variables }
