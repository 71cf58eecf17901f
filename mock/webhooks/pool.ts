/**
 * The instance's webhook sends in flight. A `webhook.attempt` firing commits its attempt record and hands the
 * POST to this pool; the send runs outside the timer loop, so an advance never waits on a receiver it does not
 * have to, and a slow receiver holds one slot (at most the 20-second send limit), never the clock.
 *
 * Bounds: at most `limit` sends at once (default 64, few enough sockets for one process). Each group, the
 * Project, has a share of `perGroup` of them (default 10, one event's fan-out to a Project's 10 endpoints)
 * that it may always use when slots are free. Beyond its share a Project borrows free slots, but only while
 * `perGroup` slots stay free after the start: a Project with a backlog (a clock advance through a day of
 * retries) sends up to 54 at once instead of 10, and a Project whose receivers never answer still holds at
 * most `limit - perGroup` slots (54), leaving the rest to the other Projects, each up to its share at once.
 * Sends beyond the bounds wait in arrival order; a slot freed by an answer is filled once the event loop's
 * current turn is over, together with every other slot freed in it (one burst of requests: one wake-up of a
 * receiver, not one per request). Sends are keyed by delivery id: the scheduler waits for a delivery's send
 * before firing that delivery's next timer (retry or outcome safety timer), since what that timer does
 * depends on the outcome. One pool per mock instance (deps.deliveries, mock/wiring.ts).
 */
import { setMaxListeners } from 'node:events'
import { setImmediate } from 'node:timers'
import type { Log } from '../util/log.js'
import { WebhookConnections } from './connections.js'

/** Sends in flight at once, per mock instance. */
export const DEFAULT_SEND_CONCURRENCY = 64
/**
 * A Project's share of the sends in flight: the endpoint limit, so one event's fan-out never waits on itself.
 * A Project may borrow beyond it while that many slots stay free (see above).
 */
export const DEFAULT_SENDS_PER_PROJECT = 10
/** The most sends one Project has in flight at once with the default bounds: every slot but another's share. */
export const DEFAULT_MOST_SENDS_OF_ONE_PROJECT =
  DEFAULT_SEND_CONCURRENCY - DEFAULT_SENDS_PER_PROJECT

/**
 * One send: performs the POST and records its outcome; `signal` aborts it (reset, close). Never throws. The
 * signal is shared by every send started since the last abortAll() (one AbortController per generation, not
 * one per send): a task that listens to it removes its listener when it ends.
 */
export type SendTask = (signal: AbortSignal) => Promise<void>

type Job = { seq: number; group: string; task: SendTask; finish: () => void }

/**
 * The controller of one generation of sends. Every running send listens to its signal (up to `limit` at once,
 * plus sends draining an answer after their slot was freed), so Node's leak warning at 11 listeners would be
 * a false alarm; each send removes its listener when it ends (sender.ts, tested in connections.test.ts).
 */
function newGeneration(): AbortController {
  const controller = new AbortController()
  setMaxListeners(0, controller.signal)
  return controller
}

export class DeliveryPool {
  /** Waiting sends per group, each queue in arrival order (a group at its bound is passed over whole). */
  private readonly waiting = new Map<string, Job[]>()
  private waitingCount = 0
  private nextSeq = 0
  /** Sends running now. */
  private running = 0
  /** Aborted (and replaced) by abortAll(): the signal of every send started since the last one. */
  private generation = newGeneration()
  private readonly runningPerGroup = new Map<string, number>()
  private readonly byKey = new Map<string, Promise<void>>()
  private idleWaiters: (() => void)[] = []
  /** A pump is queued for after this turn of the event loop (pumpSoon). */
  private pumpQueued = false
  readonly limit: number
  readonly perGroup: number
  /** The kept-alive connections the sends use (connections.ts); a reset or close destroys them. */
  readonly connections = new WebhookConnections()
  /** Told when a send has finished, its outcome recorded (the inspector's change feed); set by the composition root. */
  onSettled: ((key: string, group: string) => void) | undefined

  constructor(
    private readonly log: Log,
    bounds: { limit?: number; perGroup?: number } = {},
  ) {
    this.limit = bounds.limit ?? DEFAULT_SEND_CONCURRENCY
    this.perGroup = bounds.perGroup ?? DEFAULT_SENDS_PER_PROJECT
    if (!(this.limit >= 1) || !(this.perGroup >= 1))
      throw new RangeError(`send bounds must be at least 1, got ${this.limit}, ${this.perGroup}`)
  }

  /** Queues a send under a key (the delivery id) in a group (its Project); it starts once a slot is free. */
  submit(key: string, group: string, task: SendTask): void {
    let resolve!: () => void
    const done = new Promise<void>((r) => (resolve = r))
    const previous = this.byKey.get(key)
    const entry = previous ? Promise.all([previous, done]).then(() => undefined) : done
    this.byKey.set(key, entry)
    const queue = this.waiting.get(group) ?? []
    if (queue.length === 0) this.waiting.set(group, queue)
    queue.push({
      seq: this.nextSeq++,
      group,
      task,
      finish: () => {
        if (this.byKey.get(key) === entry) this.byKey.delete(key)
        resolve()
        this.onSettled?.(key, group)
      },
    })
    this.waitingCount += 1
    this.pump()
  }

  /** Settles once every send queued under key has finished; undefined when none is queued or running. */
  pending(key: string): Promise<void> | undefined {
    return this.byKey.get(key)
  }

  /** Sends running now. */
  get active(): number {
    return this.running
  }

  /**
   * The groups (Projects) with a send running now (the client referee, WHN-020): a copy, which later sends
   * do not change (one shared empty set while none runs: every creation asks).
   */
  busyGroups(): ReadonlySet<string> {
    return this.runningPerGroup.size === 0 ? this.noGroups : new Set(this.runningPerGroup.keys())
  }

  private readonly noGroups: ReadonlySet<string> = new Set<string>()

  /** Sends waiting for a slot. */
  get queued(): number {
    return this.waitingCount
  }

  /** Resolves once no send is running or waiting (each ends within the send limit). */
  idle(): Promise<void> {
    if (this.running === 0 && this.waitingCount === 0) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * World reset and close: aborts the running sends and drops the waiting ones, and closes every kept-alive
   * connection. Their outcomes are not recorded (the deliveries are gone, or the store is closing; a reopened
   * --db store settles them by timer).
   */
  abortAll(): void {
    const dropped = [...this.waiting.values()].flat().sort((a, b) => a.seq - b.seq)
    this.waiting.clear()
    this.waitingCount = 0
    for (const job of dropped) job.finish()
    this.generation.abort()
    this.generation = newGeneration()
    this.connections.destroy()
    this.checkIdle()
  }

  /**
   * Starts waiting sends, oldest first, while slots are free; a group that may not start one now is skipped,
   * not blocking. Only the head of each group's queue is looked at, so a start costs the number of groups
   * (Projects), not the number of sends waiting.
   */
  private pump(): void {
    while (this.running < this.limit) {
      const job = this.oldestStartable()
      if (!job) return
      this.start(job)
    }
  }

  /** The oldest waiting send whose group may start one now (mayStart). */
  private oldestStartable(): Job | undefined {
    let oldest: Job | undefined
    for (const [group, queue] of this.waiting) {
      const head = queue[0]
      if (!head || !this.mayStart(group)) continue
      if (!oldest || head.seq < oldest.seq) oldest = head
    }
    return oldest
  }

  /**
   * Whether a group may start a send in a free slot: always within its share (perGroup); beyond it, only when
   * perGroup slots stay free once this one has started (borrowed slots, never the last perGroup).
   */
  private mayStart(group: string): boolean {
    if ((this.runningPerGroup.get(group) ?? 0) < this.perGroup) return true
    return this.limit - this.running - 1 >= this.perGroup
  }

  private start(job: Job): void {
    const queue = this.waiting.get(job.group)!
    queue.shift()
    if (queue.length === 0) this.waiting.delete(job.group)
    this.waitingCount -= 1
    this.runningPerGroup.set(job.group, (this.runningPerGroup.get(job.group) ?? 0) + 1)
    this.running += 1
    void job.task(this.generation.signal).then(
      () => this.ended(job),
      (error: unknown) => {
        this.log.error('webhook send failed', {
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
        })
        this.ended(job)
      },
    )
  }

  /** A send has ended (its outcome recorded, or it failed): its slot is free. */
  private ended(job: Job): void {
    this.running -= 1
    const left = (this.runningPerGroup.get(job.group) ?? 1) - 1
    if (left > 0) this.runningPerGroup.set(job.group, left)
    else this.runningPerGroup.delete(job.group)
    job.finish()
    this.pumpSoon()
    this.checkIdle()
  }

  /**
   * Starts waiting sends once the answers that arrived with this one are all handled (setImmediate: after the
   * event loop's I/O phase), so the requests they free slots for go out together: one wake-up of a receiver
   * for a burst of requests, instead of one per request.
   */
  private pumpSoon(): void {
    if (this.pumpQueued || this.waitingCount === 0) return
    this.pumpQueued = true
    setImmediate(() => {
      this.pumpQueued = false
      this.pump()
    })
  }

  private checkIdle(): void {
    if (this.running > 0 || this.waitingCount > 0) return
    const waiters = this.idleWaiters
    this.idleWaiters = []
    for (const w of waiters) w()
  }
}
