/**
 * Durable timer queue on the virtual clock. Timers fire in the total order (due_at, seq): earlier due time
 * first, and for equal due times the one scheduled first (seq is an insertion counter), as in fake-timers.
 * Each firing moves the clock to the timer's due time and runs its handler in one transaction.
 */
import type { Deps } from '../deps.js'
import type { Db } from '../store/db.js'
import {
  countTimers,
  deleteTimer,
  deleteTimersOf,
  firstDueTimer,
  firstTimer,
  insertReservedTimer,
  insertTimer,
  lastTimerSeq,
  saveTimerSeq,
  timerIdOf,
  type TimerRow,
} from '../store/timers.js'
import type { Log } from '../util/log.js'
import type { Clock } from './clock.js'
import type { SideEffect, TimerKind, TimerKinds } from './timer-kinds.js'

export type TimerId = string
export type AdvanceResult = { now: number; fired: number }

/**
 * The default runaway guard: firings at one virtual instant. A runaway is a timer that keeps scheduling timers
 * at the instant it fires, without end; an honest backlog spreads over many instants (a day of webhook retries
 * for 10 endpoints and 100 Turns puts about 1,000 timers on its busiest instant). Generous on purpose: a false
 * stop is worse than a runaway noticed after a few seconds.
 */
export const DEFAULT_LOOP_LIMIT = 100_000

/** The longest single Node timeout we arm; longer waits re-arm when it expires. */
const MAX_ARM_MS = 60 * 60 * 1000

/**
 * Thrown when more than loopLimit timers fire at one virtual instant (a handler that keeps rescheduling itself
 * at the same time). The advance stops there: every earlier firing has committed, the clock stands at that
 * instant (not at the advance's target), and the timers not yet fired, the runaway's included, stay pending.
 */
export class SchedulerLoopError extends Error {
  constructor(
    readonly limit: number,
    readonly atMs: number,
    readonly lastKinds: string[],
  ) {
    super(
      `scheduler fired ${limit} timers at one virtual instant (${new Date(atMs).toISOString()}) and stopped ` +
        `there (loop limit; the clock stays at that instant); last kinds: ${lastKinds.join(', ')}`,
    )
    this.name = 'SchedulerLoopError'
  }
}

/** Thrown at the end of an advance when handlers or side effects failed (each failed timer was dropped). */
export class TimerFailuresError extends Error {
  constructor(readonly failures: { id: string; kind: string; error: unknown }[]) {
    super(
      `${failures.length} timer(s) failed: ${failures
        .map((f) => `${f.kind} (${f.error instanceof Error ? f.error.message : String(f.error)})`)
        .join('; ')}`,
    )
    this.name = 'TimerFailuresError'
  }
}

export type SchedulerOptions = {
  db: Db
  clock: Clock
  log: Log
  kinds: TimerKinds
  /** The dependency set handed to handlers (the scheduler is part of it, hence a getter). */
  context: () => Deps
  /** Runaway guard: the most firings at one virtual instant (default DEFAULT_LOOP_LIMIT). */
  loopLimit?: number
}

export class Scheduler {
  readonly kinds: TimerKinds
  private readonly loopLimit: number
  private queue: Promise<unknown> = Promise.resolve()
  private advancing = false
  private closed = false
  private handle: ReturnType<typeof setTimeout> | undefined
  private readonly unsubscribe: () => void
  /**
   * The last timer seq handed out (store/timers.ts), held here rather than written per timer: read from the
   * store at the first schedule (and again after a world reset), saved at the end of every advance and at
   * close. It only grows: a seq taken by a transaction that rolled back is skipped, never reused, and every
   * new seq is above every pending timer's. After a crash a reopened store continues above its pending
   * timers and the last saved counter (a timer that fired since may see its seq again: order is kept).
   */
  private lastSeq: number | undefined
  private savedSeq = 0

  constructor(private readonly opts: SchedulerOptions) {
    this.kinds = opts.kinds
    this.loopLimit = opts.loopLimit ?? DEFAULT_LOOP_LIMIT
    this.unsubscribe = opts.clock.onModeChange(() => this.rearm())
  }

  /** Schedules a timer of a registered kind at dueAtMs (virtual ms); subject groups timers for cancelSubject. */
  schedule<P>(
    kind: TimerKind,
    dueAtMs: number,
    payload: P,
    opts: { subject?: string } = {},
  ): TimerId {
    this.checkTimer(kind, dueAtMs)
    const row = timerRow(kind, dueAtMs, this.reserveSeq(), payload, opts.subject)
    insertTimer(this.opts.db, row)
    this.rearm()
    return row.id
  }

  /**
   * Takes the next timer seq without scheduling anything: a timer that may be written later (or never) with
   * the place in the firing order it would have had if scheduled now (scheduleReserved). The caller keeps
   * the seq in the store, where lastTimerSeq finds it after a restart.
   */
  reserveSeq(): number {
    this.lastSeq = (this.lastSeq ?? lastTimerSeq(this.opts.db)) + 1
    return this.lastSeq
  }

  /**
   * Schedules a timer under a seq taken from reserveSeq (its key is then (dueAtMs, seq)); scheduling the
   * same key again is a no-op. False when a timer with that key was pending already.
   */
  scheduleReserved<P>(
    kind: TimerKind,
    dueAtMs: number,
    seq: number,
    payload: P,
    opts: { subject?: string } = {},
  ): boolean {
    this.checkTimer(kind, dueAtMs)
    if (!Number.isSafeInteger(seq) || seq < 1 || (this.lastSeq !== undefined && seq > this.lastSeq))
      throw new Error(`timer seq ${seq} was not reserved`)
    const inserted = insertReservedTimer(
      this.opts.db,
      timerRow(kind, dueAtMs, seq, payload, opts.subject),
    )
    if (inserted) this.rearm()
    return inserted
  }

  /** A timer's kind is registered and its due time a finite number (a programming error otherwise). */
  private checkTimer(kind: TimerKind, dueAtMs: number): void {
    if (!this.kinds.has(kind))
      throw new Error(`unknown timer kind "${kind}": register it in timer-kinds.ts`)
    if (!Number.isFinite(dueAtMs))
      throw new Error(`timer due time must be a finite number, got ${dueAtMs}`)
  }

  /**
   * The world was wiped and reloaded (fixtures/load.ts resetWorld, after its transaction committed): the seq
   * counter starts over from the store, as on a fresh one, so a reset world hands out the same seqs.
   */
  worldReset(): void {
    this.lastSeq = undefined
    this.savedSeq = 0
  }

  /** Saves the seq counter if it moved since it was last saved (end of an advance, close). */
  private saveSeq(): void {
    if (this.lastSeq === undefined || this.lastSeq <= this.savedSeq || !this.opts.db.raw.open)
      return
    const last = this.lastSeq
    this.opts.db.tx(() => saveTimerSeq(this.opts.db, last))
    this.savedSeq = last
  }

  /** Cancels one timer; true when it was still pending. */
  cancel(id: TimerId): boolean {
    const done = deleteTimer(this.opts.db, id)
    if (done) this.rearm()
    return done
  }

  /** Cancels every pending timer of a subject (optionally only one kind); returns how many. */
  cancelSubject(subject: string, kind?: TimerKind): number {
    const n = deleteTimersOf(this.opts.db, subject, kind)
    if (n > 0) this.rearm()
    return n
  }

  /** Number of pending timers. */
  pending(): number {
    return countTimers(this.opts.db)
  }

  /** Due time of the next timer, if any. */
  nextDueMs(): number | undefined {
    return firstTimer(this.opts.db)?.due_at
  }

  /**
   * Fires every timer due at or before targetMs in (due_at, seq) order, timers scheduled meanwhile included,
   * then moves the clock to targetMs. Calls are serialized; resolves once every side effect is done. Work a
   * kind hands to a pool (webhook sends) is not waited for, except where a timer declares it depends on it.
   */
  advanceTo(targetMs: number): Promise<AdvanceResult> {
    return this.exclusive(() => this.run(() => targetMs))
  }

  /** advanceTo(now + ms). */
  advanceBy(ms: number): Promise<AdvanceResult> {
    return this.exclusive(() => this.run(() => this.opts.clock.nowMs() + ms))
  }

  /** Runs fn after every advance queued before it and before any queued after it (world reset). */
  exclusive<T>(fn: () => T | Promise<T>): Promise<T> {
    const result = this.queue.then(fn, fn)
    this.queue = result.catch(() => undefined)
    return result
  }

  /** Realtime mode: arms one Node timeout for the earliest timer. Manual mode: disarms. */
  rearm(): void {
    if (this.handle !== undefined) clearTimeout(this.handle)
    this.handle = undefined
    if (this.closed || this.advancing || this.opts.clock.mode !== 'realtime') return
    const next = firstTimer(this.opts.db)
    if (!next) return
    const delay = Math.min(Math.max(next.due_at - this.opts.clock.nowMs(), 0), MAX_ARM_MS)
    this.handle = setTimeout(() => {
      this.handle = undefined
      this.exclusive(() => this.run(() => this.opts.clock.nowMs())).catch((error: unknown) =>
        this.opts.log.error('realtime timer firing failed', { error: errorText(error) }),
      )
    }, delay)
    this.handle.unref()
  }

  /** Stops the realtime timer for good (mock close). */
  close(): void {
    this.saveSeq()
    this.closed = true
    this.unsubscribe()
    if (this.handle !== undefined) clearTimeout(this.handle)
    this.handle = undefined
  }

  private async run(target: () => number): Promise<AdvanceResult> {
    const { db, clock } = this.opts
    const targetMs = target()
    const failures: { id: string; kind: string; error: unknown }[] = []
    const lastKinds: string[] = []
    let fired = 0
    // The runaway guard counts firings at one virtual instant: the latest due time fired so far (a timer
    // scheduled in the past fires at that same instant, so rescheduling backwards is counted too).
    let instant = -Infinity
    let atInstant = 0
    this.advancing = true
    try {
      for (;;) {
        const timer = firstDueTimer(db, targetMs)
        if (!timer) break
        // The payload is parsed once, for the wait and the handler (a kind without a wait parses it in fire).
        const waitFor = this.kinds.waitOf(timer.kind)
        const parsed = waitFor ? { payload: JSON.parse(timer.payload_json) as unknown } : undefined
        const wait = waitFor && parsed ? waitFor(parsed.payload, this.opts.context()) : undefined
        if (wait) {
          // Work this timer depends on is in flight (a webhook send): wait, then read the queue again, since
          // its outcome may have canceled or replaced the timer.
          await wait
          continue
        }
        if (timer.due_at > instant) {
          instant = timer.due_at
          atInstant = 0
        }
        if (atInstant >= this.loopLimit)
          throw new SchedulerLoopError(this.loopLimit, instant, lastKinds)
        atInstant += 1
        fired += 1
        lastKinds.push(timer.kind)
        if (lastKinds.length > 5) lastKinds.shift()
        let effects: readonly SideEffect[] = []
        try {
          effects = db.tx(() => this.fire(timer, parsed))
        } catch (error) {
          // The failed firing rolled back; drop the timer so it cannot fail again forever (and keep what
          // its kind says must outlive it: TimerKinds, afterFailure).
          db.tx(() => {
            clock.moveTo(timer.due_at)
            clock.persist()
            deleteTimer(db, timer.id)
            this.recover(timer, parsed)
          })
          failures.push({ id: timer.id, kind: timer.kind, error })
          this.opts.log.error('timer handler failed', {
            kind: timer.kind,
            timer_id: timer.id,
            error: errorText(error),
          })
        }
        for (const effect of effects) {
          try {
            await effect()
          } catch (error) {
            failures.push({ id: timer.id, kind: timer.kind, error })
            this.opts.log.error('timer side effect failed', {
              kind: timer.kind,
              timer_id: timer.id,
              error: errorText(error),
            })
          }
        }
      }
      clock.moveTo(targetMs)
    } finally {
      this.advancing = false
      this.saveSeq()
      this.rearm()
    }
    if (failures.length > 0) throw new TimerFailuresError(failures)
    return { now: clock.nowMs(), fired }
  }

  /** A failed timer's recovery (its kind's afterFailure), in a savepoint: a throw is logged, not thrown. */
  private recover(timer: TimerRow, parsed: { payload: unknown } | undefined): void {
    const recovery = this.kinds.recoveryOf(timer.kind)
    if (!recovery) return
    try {
      this.opts.db.tx(() => {
        const ctx = { deps: this.opts.context(), timer, nowMs: this.opts.clock.nowMs() }
        recovery(payloadOf(timer, parsed), ctx)
      })
    } catch (error) {
      this.opts.log.error('timer recovery failed', {
        kind: timer.kind,
        timer_id: timer.id,
        error: errorText(error),
      })
    }
  }

  /** One firing, inside its transaction: clock to the due time, delete the row, run the handler. */
  private fire(timer: TimerRow, parsed: { payload: unknown } | undefined): readonly SideEffect[] {
    const { db, clock } = this.opts
    const nowMs = clock.moveTo(timer.due_at)
    deleteTimer(db, timer.id)
    const handler = this.kinds.get(timer.kind)
    if (!handler) throw new Error(`no handler registered for timer kind "${timer.kind}"`)
    const out = handler(payloadOf(timer, parsed), {
      deps: this.opts.context(),
      timer,
      nowMs,
    })
    if (!out) return []
    return typeof out === 'function' ? [out] : out
  }
}

/** A timer's payload: the one parsed already (a waiting timer's), else its row's JSON parsed now. */
function payloadOf(timer: TimerRow, parsed: { payload: unknown } | undefined): unknown {
  return parsed ? parsed.payload : (JSON.parse(timer.payload_json) as unknown)
}

/** A timer's row: its due time rounded to the ms, its id the key (due_at, seq), its payload as JSON. */
function timerRow<P>(
  kind: TimerKind,
  dueAtMs: number,
  seq: number,
  payload: P,
  subject: string | undefined,
): TimerRow {
  const dueAt = Math.round(dueAtMs)
  return {
    id: timerIdOf(dueAt, seq),
    due_at: dueAt,
    seq,
    kind,
    payload_json: JSON.stringify(payload ?? null),
    subject: subject ?? null,
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}
