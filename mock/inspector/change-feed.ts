/**
 * The instance's change feed (deps.changes): the one place the features tell "something changed" to the
 * inspector's stream (GET /_mock/stream). The composition root (mock/wiring.ts) connects it to the bus
 * (execution changes, appended events), the clock, the webhook send pool, the request journal and the control
 * API's writes. Cheap when nobody watches: with no stream open a note returns at once and builds nothing.
 * Changes are batched per microtask and handed to every open stream in order; a batch holds at most
 * MAX_BATCH changes (the rest are counted as dropped: a watcher then re-reads the state).
 */

/** What changed: the topics of the stream's events (README "Inspector"). */
export type ChangeTopic = 'execution' | 'event' | 'webhook' | 'request' | 'control'

export type Change = { seq: number; topic: ChangeTopic; data: Record<string, unknown> }

/** One flush: the changes in order, whether the clock moved or switched mode, and how many were dropped. */
export type ChangeBatch = { changes: readonly Change[]; clock: boolean; dropped: number }

export type ChangeWatcher = (batch: ChangeBatch) => void

/** The most changes held for one flush (one advance can fire thousands of timers). */
export const MAX_BATCH = 1000

export class ChangeFeed {
  private readonly watchers = new Map<ChangeWatcher, () => void>()
  private pending: Change[] = []
  private clockMoved = false
  private dropped = 0
  private scheduled = false
  private seq = 0

  /** True while at least one stream is open. */
  get active(): boolean {
    return this.watchers.size > 0
  }

  /** Adds a watcher and what ends it at the mock's close; the function returned removes it. */
  watch(watcher: ChangeWatcher, close: () => void): () => void {
    this.watchers.set(watcher, close)
    return () => {
      this.watchers.delete(watcher)
    }
  }

  /** The mock closes: every watcher ends (its stream closes) and is removed. */
  closeAll(): void {
    const closers = [...this.watchers.values()]
    this.watchers.clear()
    for (const close of closers) close()
  }

  /** Records a change; `data` is built only when a stream is open. */
  note(topic: ChangeTopic, data: () => Record<string, unknown>): void {
    if (this.watchers.size === 0) return
    this.seq += 1
    if (this.pending.length < MAX_BATCH) this.pending.push({ seq: this.seq, topic, data: data() })
    else this.dropped += 1
    this.schedule()
  }

  /** The virtual clock moved or switched mode (the stream sends its time once per batch). */
  clockChanged(): void {
    if (this.watchers.size === 0) return
    this.clockMoved = true
    this.schedule()
  }

  private schedule(): void {
    if (this.scheduled) return
    this.scheduled = true
    queueMicrotask(() => this.flush())
  }

  private flush(): void {
    this.scheduled = false
    const batch: ChangeBatch = {
      changes: this.pending,
      clock: this.clockMoved,
      dropped: this.dropped,
    }
    this.pending = []
    this.clockMoved = false
    this.dropped = 0
    for (const watcher of [...this.watchers.keys()]) {
      try {
        watcher(batch)
      } catch {
        // A watcher whose stream broke is dropped; the others and the mock go on.
        this.watchers.delete(watcher)
      }
    }
  }
}
