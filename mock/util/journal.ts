/**
 * The request journal (GET /_mock/requests): what the mock received on the service's paths, for SDK tests to
 * assert on ("the client resent with the same Idempotency-Key", "it reconnected with Last-Event-ID"). Bounded:
 * the oldest entries go first once it holds `capacity`. Per instance, in memory (not kept by --db). Entries
 * hold no API key, token, secret, query string or body.
 */
import { BoundedList } from './bounded-list.js'

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

export const DEFAULT_JOURNAL_CAPACITY = 1000

export class RequestJournal {
  private readonly entries: BoundedList<JournalEntry>
  private nextSeq = 1

  /** Told of every entry recorded (the inspector's change feed); set by the composition root. */
  onRecord: ((entry: JournalEntry) => void) | undefined

  constructor(readonly capacity = DEFAULT_JOURNAL_CAPACITY) {
    this.entries = new BoundedList(capacity)
  }

  /** Entries dropped to stay within capacity since the last clear. */
  get dropped(): number {
    return this.entries.dropped
  }

  record(entry: Omit<JournalEntry, 'seq'>): void {
    const recorded = { seq: this.nextSeq++, ...entry }
    this.entries.push(recorded)
    this.onRecord?.(recorded)
  }

  /** The entries kept, oldest first. */
  list(): readonly JournalEntry[] {
    return this.entries.list()
  }

  clear(): void {
    this.entries.clear()
  }
}
