/**
 * Registry of timer kinds: a kind is a dotted lowercase name ("execution.step") naming the handler that runs
 * when a timer of that kind fires. Timers are rows, handlers are code: a restart re-registers the code. The
 * clock knows no feature: the composition root (mock/wiring.ts) registers every feature's kinds.
 */
import type { Deps } from '../deps.js'
import type { TimerRow } from '../store/timers.js'

/** A dotted lowercase name: at least two segments of [a-z0-9_-], starting with a letter. */
export type TimerKind = string
export const TIMER_KIND_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/

/**
 * Work done after the firing's transaction commits; awaited before the next timer fires. I/O that may be slow
 * (a webhook POST) does not belong here: hand it to a pool (mock/webhooks/pool.ts) and declare a wait.
 */
export type SideEffect = () => Promise<void>

/** What a handler sees: the whole dependency set, the timer row and the virtual time it fires at. */
export type TimerContext = { deps: Deps; timer: TimerRow; nowMs: number }

/**
 * Runs inside the firing's transaction, synchronously: store writes and new timers only.
 * Returns the side effects to perform once the transaction has committed.
 */
export type TimerHandler<P = unknown> = (
  payload: P,
  ctx: TimerContext,
) => void | SideEffect | readonly SideEffect[]

/**
 * Asked before a due timer of the kind fires, outside any transaction: a promise means "not yet, work this
 * timer depends on is still in flight" (a webhook send whose outcome decides the retry). The scheduler awaits
 * it, then looks at the queue again. It must settle on its own (the send limit bounds it); undefined: fire now.
 */
export type TimerWait<P = unknown> = (payload: P, deps: Deps) => Promise<void> | undefined

/**
 * Runs when a timer of the kind failed (its handler threw: the firing rolled back and the timer is dropped so
 * that it cannot fail again forever), in the transaction that drops it, in a savepoint of its own: what must
 * not be lost with the timer (a chain of timers that the handler would have carried on). Its side effects are
 * not run; a throw is logged and rolls back this work only.
 */
export type TimerRecovery<P = unknown> = (payload: P, ctx: TimerContext) => void

export class TimerKinds {
  private readonly handlers = new Map<TimerKind, TimerHandler>()
  private readonly waits = new Map<TimerKind, TimerWait>()
  private readonly recoveries = new Map<TimerKind, TimerRecovery>()

  /**
   * Registers the handler of a kind (and what its timers wait for, and what follows a failed firing, if
   * anything); a kind is registered once.
   */
  register<P>(
    kind: TimerKind,
    handler: TimerHandler<P>,
    opts: { waitFor?: TimerWait<P>; afterFailure?: TimerRecovery<P> } = {},
  ): this {
    if (!TIMER_KIND_PATTERN.test(kind)) {
      throw new Error(
        `timer kind "${kind}" is not a dotted lowercase name such as "execution.step"`,
      )
    }
    if (this.handlers.has(kind)) throw new Error(`timer kind "${kind}" is already registered`)
    this.handlers.set(kind, handler as TimerHandler)
    if (opts.waitFor) this.waits.set(kind, opts.waitFor as TimerWait)
    if (opts.afterFailure) this.recoveries.set(kind, opts.afterFailure as TimerRecovery)
    return this
  }

  recoveryOf(kind: TimerKind): TimerRecovery | undefined {
    return this.recoveries.get(kind)
  }

  get(kind: TimerKind): TimerHandler | undefined {
    return this.handlers.get(kind)
  }

  waitOf(kind: TimerKind): TimerWait | undefined {
    return this.waits.get(kind)
  }

  has(kind: TimerKind): boolean {
    return this.handlers.has(kind)
  }

  kinds(): TimerKind[] {
    return [...this.handlers.keys()]
  }
}
