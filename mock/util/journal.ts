/**
 * The request journal (GET /_mock/requests): what the mock received on the service's paths, for SDK tests to
 * assert on ("the client resent with the same Idempotency-Key", "it reconnected with Last-Event-ID"). Bounded:
 * the oldest entries go first once it holds `capacity`. Per instance, in memory (not kept by --db). Entries
 * hold no API key, token, secret, query string or body.
 *
 * Every request on those paths is recorded, so recording allocates nothing: the fields go into a ring of
 * fixed slots (one array per field, times as ms) and an entry is built, its times formatted, only when the
 * journal is listed. (An object per request, kept until 1,000 newer ones push it out, lived just long enough
 * to be copied out of the young generation: most of a busy mock's garbage-collection time.)
 */

import { RingSlots } from './ring.js'

export type JournalEntry = {
  /** 1, 2, ... in arrival order since the instance started (a reset or clear does not restart it). */
  seq: number
  method: string
  /** The request path without its query string (a download address's token is in the query). */
  path: string
  /** The documented operation that served it (operationId), or null (unknown path, refused early). */
  operation: string | null
  status: number
  idempotency_key: string | null
  /** The Last-Event-ID header, else the `after` query parameter, of a stream request. */
  last_event_id: string | null
  request_id: string
  /** Virtual time when the request arrived (ISO 8601 UTC). */
  at: string
  /** Wall time when the request arrived (ISO 8601 UTC). */
  wall_at: string
}

/** One request as the middleware hands it over: the entry's fields, its times in ms. */
export type JournalRecord = Omit<JournalEntry, 'seq' | 'at' | 'wall_at'> & {
  atMs: number
  wallMs: number
}

export const DEFAULT_JOURNAL_CAPACITY = 1000

export class RequestJournal {
  private readonly seqs: Float64Array
  private readonly statuses: Uint16Array
  private readonly atMs: Float64Array
  private readonly wallMs: Float64Array
  private readonly methods: string[]
  private readonly paths: string[]
  private readonly operations: (string | null)[]
  private readonly idempotencyKeys: (string | null)[]
  private readonly lastEventIds: (string | null)[]
  private readonly requestIds: string[]
  private readonly slots: RingSlots
  private nextSeq = 1

  /** Told the seq of every entry recorded (the inspector's change feed); set by the composition root. */
  onRecord: ((seq: number) => void) | undefined

  constructor(readonly capacity = DEFAULT_JOURNAL_CAPACITY) {
    this.slots = new RingSlots(capacity)
    this.seqs = new Float64Array(capacity)
    this.statuses = new Uint16Array(capacity)
    this.atMs = new Float64Array(capacity)
    this.wallMs = new Float64Array(capacity)
    this.methods = new Array<string>(capacity).fill('')
    this.paths = new Array<string>(capacity).fill('')
    this.operations = new Array<string | null>(capacity).fill(null)
    this.idempotencyKeys = new Array<string | null>(capacity).fill(null)
    this.lastEventIds = new Array<string | null>(capacity).fill(null)
    this.requestIds = new Array<string>(capacity).fill('')
  }

  /** Entries dropped to stay within capacity since the last clear. */
  get dropped(): number {
    return this.slots.dropped
  }

  record(r: JournalRecord): void {
    const slot = this.slots.next()
    const seq = this.nextSeq++
    this.seqs[slot] = seq
    this.statuses[slot] = r.status
    this.atMs[slot] = r.atMs
    this.wallMs[slot] = r.wallMs
    this.methods[slot] = r.method
    this.paths[slot] = r.path
    this.operations[slot] = r.operation
    this.idempotencyKeys[slot] = r.idempotency_key
    this.lastEventIds[slot] = r.last_event_id
    this.requestIds[slot] = r.request_id
    this.onRecord?.(seq)
  }

  /** The entry of a seq, while it is kept. */
  entry(seq: number): JournalEntry | undefined {
    const slot = this.slots.back(this.nextSeq - 1 - seq)
    return slot === undefined ? undefined : this.at(slot)
  }

  /** The entries kept, oldest first. */
  list(): readonly JournalEntry[] {
    return this.slots.kept().map((slot) => this.at(slot))
  }

  clear(): void {
    this.slots.clear()
    // The strings go with the entries.
    this.paths.fill('')
    this.idempotencyKeys.fill(null)
    this.lastEventIds.fill(null)
    this.requestIds.fill('')
  }

  private at(slot: number): JournalEntry {
    return {
      seq: this.seqs[slot]!,
      method: this.methods[slot]!,
      path: this.paths[slot]!,
      operation: this.operations[slot]!,
      status: this.statuses[slot]!,
      idempotency_key: this.idempotencyKeys[slot]!,
      last_event_id: this.lastEventIds[slot]!,
      request_id: this.requestIds[slot]!,
      at: new Date(this.atMs[slot]!).toISOString(),
      wall_at: new Date(this.wallMs[slot]!).toISOString(),
    }
  }
}
