/**
 * One mock instance's client referee (deps.referee, wired in mock/wiring.ts): a bounded record per API key of
 * what the key sent and was answered, judged by rules.ts; the violations found, oldest first, for
 * GET /_mock/referee. Cleared by DELETE /_mock/referee and by a world reset.
 */
import {
  delivered,
  emptyRecord,
  judge,
  type Delivery,
  type KeyRecord,
  type Observation,
  type Violation,
} from './rules.js'
import { Recent } from '../util/recent.js'
import { Findings } from './findings.js'

/** Keys remembered at once (the least recently seen is forgotten first). */
export const MAX_KEYS = 1_000
/** Violations kept (the oldest are dropped first, and counted). */
export const MAX_VIOLATIONS = 1_000
/** Body digests kept by body text (the oldest forgotten first), and the longest text kept. */
const KEPT_DIGESTS = 32
const MAX_KEPT_TEXT = 8 * 1024

export class Referee {
  private readonly records = new Map<string, KeyRecord>()
  /** The key whose record is the most recently seen (the last in `records`). */
  private lastKey: string | undefined
  /** The violations found, oldest first (the oldest dropped first, and counted). */
  private readonly found = new Findings(MAX_VIOLATIONS)

  /** Digests of recent request bodies by their text. */
  private readonly digests = new Recent<string>(KEPT_DIGESTS)

  /** The digest of a request body's text: made by `make`, kept for the next resend of a short text. */
  digestOf(text: string, make: () => string): string {
    return text.length <= MAX_KEPT_TEXT ? this.digests.get(text, make) : make()
  }

  /** Judges one request of a key. */
  observe(key: string, o: Observation): void {
    for (const v of judge(this.record(key), key, o)) this.found.push(v)
  }

  /** Whether the key has an answer on record that constrains a resend (the identity is worth computing). */
  constrainsResends(key: string): boolean {
    return (this.records.get(key)?.answers.size ?? 0) > 0
  }

  /** The stream hook (mock/events/sse.ts): an event was written to a stream the key opened. */
  streamDelivered(
    key: string,
    aggregate: { kind: string; id: string },
    eventId: string,
    stream: { requestId: string; atMs: number },
  ): void {
    const path =
      aggregate.kind === 'RUN'
        ? `/v1/runs/${aggregate.id}/events`
        : `/v1/sessions/${aggregate.id}/events`
    delivered(this.record(key), aggregate.id, eventId, {
      method: 'GET',
      path,
      request_id: stream.requestId,
      atMs: stream.atMs,
    })
  }

  /** The last delivery to this key of an event of the Session or Run, if any. */
  lastDelivered(key: string, aggregateId: string): Delivery | undefined {
    return this.records.get(key)?.delivered.get(aggregateId)
  }

  /** A stream whose answer never reached the client delivered nothing: back to the delivery before it. */
  undoDeliveries(key: string, aggregateId: string, before: Delivery | undefined): void {
    const record = this.records.get(key)
    if (!record) return
    if (before) record.delivered.set(aggregateId, before)
    else record.delivered.delete(aggregateId)
  }

  /** The findings, oldest first. */
  report(): { violations: Violation[]; dropped: number } {
    return { violations: this.found.list(), dropped: this.found.dropped }
  }

  /** Forgets the findings and everything observed. */
  clear(): void {
    this.records.clear()
    this.lastKey = undefined
    this.found.clear()
    this.digests.clear()
  }

  private record(key: string): KeyRecord {
    let record = this.records.get(key)
    // The key seen last is already last (a client's requests mostly come with one key).
    if (record && key === this.lastKey) return record
    if (record) {
      // Most recently seen last, so the least recently seen key is the one forgotten.
      this.records.delete(key)
    } else {
      record = emptyRecord()
    }
    this.lastKey = key
    this.records.set(key, record)
    if (this.records.size > MAX_KEYS) this.records.delete(this.records.keys().next().value!)
    return record
  }
}
