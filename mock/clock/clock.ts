/**
 * The virtual clock, the only module that reads the wall clock. Manual mode: time moves only when told.
 * Realtime mode: now = wall clock + offset. Switching mode keeps `now` continuous; time never goes back.
 */
import { performance } from 'node:perf_hooks'

export type ClockMode = 'manual' | 'realtime'
export const CLOCK_MODES: readonly ClockMode[] = ['manual', 'realtime']

/** What is persisted: manual mode keeps nowMs, realtime mode keeps offsetMs (from the wall clock). */
export type ClockState = { mode: ClockMode; nowMs: number; offsetMs: number }

/** Where the clock keeps its state (the meta table; in memory for unit tests). */
export interface ClockStore {
  load(): ClockState | undefined
  save(state: ClockState): void
}

/** A wall-clock duration measure for logs (performance.now); never used for virtual time. */
export const monotonicMs = (): number => performance.now()

/** Wall clock in ms; injectable so tests of realtime mode need not sleep. */
export type WallClock = () => number
const systemWall: WallClock = () => Date.now()

/**
 * Where virtual time starts (at the first start of a store and at every reset): undefined for the fixture
 * world's clock_start, an instant in ms, or 'now' for the wall clock's time at that moment (so webhook
 * signatures can be checked by a receiver on wall time).
 */
export type ClockStart = 'now' | number | undefined

/** The start instant in ms for a ClockStart, given the fixture world's own start. */
export function clockStartMs(
  start: ClockStart,
  worldStartMs: number,
  wall: WallClock = systemWall,
): number {
  if (start === 'now') return wall()
  return start ?? worldStartMs
}

/** Parses a --clock-start value: 'now' or an ISO 8601 instant with a time zone; undefined when it is neither. */
export function parseClockStart(text: string): 'now' | number | undefined {
  if (text === 'now') return 'now'
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text))
    return undefined
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : undefined
}

export class Clock {
  private state: ClockState
  private last: number
  /** The instant of the pinned() call in progress, if any. */
  private pin: number | undefined
  private readonly listeners = new Set<(mode: ClockMode) => void>()
  private readonly changeListeners = new Set<() => void>()
  /** The mode the instance was started in: a world reset goes back to it. */
  readonly startMode: ClockMode

  /** Loads the persisted state if any, otherwise starts at startMs in the given mode. */
  constructor(
    private readonly store: ClockStore,
    init: { startMs: number; mode: ClockMode },
    private readonly wall: WallClock = systemWall,
  ) {
    this.startMode = init.mode
    const saved = store.load()
    if (saved) {
      this.state = saved
    } else {
      this.state = this.stateAt(init.startMs, init.mode)
      store.save(this.state)
    }
    this.last = this.compute()
  }

  get mode(): ClockMode {
    return this.state.mode
  }

  /** Current virtual time in ms since the epoch; never smaller than an earlier answer. */
  nowMs(): number {
    if (this.pin !== undefined) return this.pin
    const t = this.compute()
    if (t > this.last) this.last = t
    return this.last
  }

  /**
   * Runs fn (synchronous) at one instant: every nowMs() inside answers the same time, so one request's
   * created_at, deadlines and idempotency expiry agree even in realtime mode. Nested calls share the outer pin.
   */
  pinned<T>(fn: () => T): T {
    if (this.pin !== undefined) return fn()
    this.pin = this.nowMs()
    try {
      return fn()
    } finally {
      this.pin = undefined
    }
  }

  /** Current virtual time as a Date. */
  now(): Date {
    return new Date(this.nowMs())
  }

  /** Current virtual time as ISO 8601 UTC. */
  iso(): string {
    return this.now().toISOString()
  }

  /** The wall clock's time as ISO 8601 UTC (the request journal's wall_at; never virtual time). */
  wallIso(): string {
    return new Date(this.wall()).toISOString()
  }

  /** The wall clock's time in ms (the request journal's wall_at, formatted when listed; never virtual time). */
  wallMs(): number {
    return this.wall()
  }

  /** Switches mode; `now` is the same just before and just after. */
  setMode(mode: ClockMode): void {
    if (mode === this.state.mode) return
    this.save(this.stateAt(this.nowMs(), mode))
    for (const l of this.listeners) l(mode)
  }

  /** Moves time forward to ms (the scheduler's job); an earlier ms leaves time where it is. */
  moveTo(ms: number): number {
    const now = this.nowMs()
    if (ms > now) this.save(this.stateAt(ms, this.state.mode))
    return this.nowMs()
  }

  /** Puts the clock back to startMs (world reset only): the one way time goes backwards. */
  resetTo(startMs: number, mode: ClockMode = this.state.mode): void {
    const modeChanged = mode !== this.state.mode
    this.save(this.stateAt(startMs, mode))
    this.last = startMs
    if (modeChanged) for (const l of this.listeners) l(mode)
  }

  /** Saves the in-memory state again (after a rolled-back transaction that had moved the clock). */
  persist(): void {
    this.store.save(this.state)
  }

  /** Called after every saved change of time or mode (the inspector's change feed). */
  onChange(listener: () => void): void {
    this.changeListeners.add(listener)
  }

  /** Called after every mode change (the scheduler arms or disarms its realtime timer). */
  onModeChange(listener: (mode: ClockMode) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private stateAt(ms: number, mode: ClockMode): ClockState {
    return mode === 'manual'
      ? { mode, nowMs: ms, offsetMs: 0 }
      : { mode, nowMs: ms, offsetMs: ms - this.wall() }
  }

  private compute(): number {
    return this.state.mode === 'manual' ? this.state.nowMs : this.wall() + this.state.offsetMs
  }

  private save(state: ClockState): void {
    this.state = state
    this.store.save(state)
    const t = this.compute()
    if (t > this.last) this.last = t
    for (const l of this.changeListeners) l()
  }
}

/** A ClockStore in memory, for unit tests. */
export function memoryClockStore(
  initial?: ClockState,
): ClockStore & { saved: ClockState | undefined } {
  const s = {
    saved: initial,
    load: () => s.saved,
    save: (state: ClockState) => {
      s.saved = state
    },
  }
  return s
}
