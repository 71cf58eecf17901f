/**
 * The composition root: builds one mock instance's dependency set. It opens the store, loads the world if the
 * store is new, creates the clock, ids, scheduler, bus, stream hub, webhook send pool and change feed, registers every
 * feature's timer kinds and subscribes every feature's listeners on *that* instance. No module keeps state another instance could
 * see, and behaviour never depends on which modules happen to be imported.
 */
import { Clock, type ClockMode, type ClockState, type WallClock } from './clock/clock.js'
import { Scheduler } from './clock/scheduler.js'
import { TimerKinds } from './clock/timer-kinds.js'
import type { Deps, MockBus, MockConfig } from './deps.js'
import { appendFutureEvent } from './events/forward-compat.js'
import { mapExecutionEvent } from './events/mapping.js'
import { createStreamHub, KEEP_ALIVE_KIND, keepAlive, notifyStreams } from './events/sse.js'
import { cancelActionsOnChange } from './execution/actions.js'
import { registerExecutionTimers } from './execution/executor.js'
import { FaultRules } from './faults/rules.js'
import { ChangeFeed } from './inspector/change-feed.js'
import { connectChangeSources, noteEvent, noteExecution } from './inspector/change-sources.js'
import { isWorldLoaded, loadWorld, startMs } from './fixtures/load.js'
import { openDb } from './store/db.js'
import { Receipts } from './store/idempotency.js'
import { getMetaJson, setMetaJson } from './store/meta.js'
import { Referee } from './referee/referee.js'
import { Channel } from './util/channel.js'
import { Ids, type IdsState } from './util/ids.js'
import { RequestJournal } from './util/journal.js'
import type { Log } from './util/log.js'
import { createDeliveries, registerWebhookTimers } from './webhooks/delivery.js'
import { DeliveryPool } from './webhooks/pool.js'
import { startSettings } from './domain/settings.js'

export type CreateDepsOptions = {
  /** Mode at start; a reopened --db store keeps its time and switches to this mode continuously. */
  clockMode: ClockMode
  log: Log
  /** Extra timer kinds (unit tests register their own); added to the mock's own kinds. */
  timerKinds?: (kinds: TimerKinds) => void
  /** Runaway guard: the most timer firings at one virtual instant. */
  loopLimit?: number
  /** Webhook sends in flight at once, in all and per Project (default 32 and 10). */
  sendBounds?: { limit?: number; perGroup?: number }
  /** Wall clock override for unit tests of realtime mode. */
  wall?: WallClock
}

const CLOCK_KEY = 'clock'
const IDS_KEY = 'ids'

/** The mock's own timer kinds: execution steps and limits, actions, result files, SSE keep-alive, webhooks. */
export function mockTimerKinds(): TimerKinds {
  const kinds = new TimerKinds()
  registerExecutionTimers(kinds)
  kinds.register<{ stream: string }>(KEEP_ALIVE_KIND, ({ stream }, { deps }) =>
    keepAlive(deps, stream),
  )
  registerWebhookTimers(kinds)
  return kinds
}

/** A new bus with every feature's listeners subscribed, in the order the features depend on. */
function createBus(): MockBus {
  const bus: MockBus = { execution: new Channel(), eventAppended: new Channel() }
  // Execution changes become public events; an execution leaving REQUIRES_ACTION cancels its actions.
  bus.execution.on(mapExecutionEvent)
  // Forward-compatibility rehearsal: an unknown event type after the public ones (off unless switched on).
  bus.execution.on(appendFutureEvent)
  bus.execution.on(cancelActionsOnChange)
  // Appended events reach open SSE streams (after commit) and become webhook deliveries.
  bus.eventAppended.on(notifyStreams)
  bus.eventAppended.on(createDeliveries)
  // The inspector's change feed (GET /_mock/stream): nothing is built while no stream is open.
  bus.execution.on(noteExecution)
  bus.eventAppended.on(noteEvent)
  return bus
}

/** Opens the store, loads the world if the store is new, and wires one instance. */
export function createDeps(config: MockConfig, opts: CreateDepsOptions): Deps {
  const db = openDb(config.dbPath, { durable: config.durable })
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
      { startMs: startMs(config, opts.wall), mode: opts.clockMode },
      opts.wall,
    )
    if (!isWorldLoaded(db)) {
      db.tx(() => loadWorld(db, config.world))
    }
    const kinds = mockTimerKinds()
    opts.timerKinds?.(kinds)
    const deps = {
      db,
      receipts: new Receipts(db),
      clock,
      ids,
      config,
      log: opts.log,
      bus: createBus(),
      streams: createStreamHub(config.sse),
      deliveries: new DeliveryPool(opts.log, opts.sendBounds),
      referee: new Referee(),
      faults: new FaultRules(),
      forwardCompat: { enabled: config.forwardCompat ?? false },
      settings: startSettings(config),
      journal: new RequestJournal(),
      changes: new ChangeFeed(),
    } as Omit<Deps, 'scheduler'> & { scheduler: Scheduler }
    deps.scheduler = new Scheduler({
      db,
      clock,
      log: opts.log,
      kinds,
      context: () => deps,
      loopLimit: opts.loopLimit,
    })
    clock.setMode(opts.clockMode)
    connectChangeSources(deps)
    deps.scheduler.rearm()
    return deps
  } catch (error) {
    db.close()
    throw error
  }
}
