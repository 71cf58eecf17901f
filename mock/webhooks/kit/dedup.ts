/**
 * Receiver kit, deduplication half (Webhook notifications 6; Retention "Webhook dedup ids"): delivery is at
 * least once, so a receiver remembers each event_id with a hash of its body for up to 30 days. Pure and
 * dependency-free (node:crypto only).
 */
import { createHash } from 'node:crypto'

/** Retention: webhook dedup ids are kept at most 30 days. */
export const DEDUP_RETENTION_MS = 30 * 24 * 60 * 60 * 1000

/** new: first sighting (now remembered); duplicate: same id and body (answer 2xx); conflict: reject it. */
export type DedupVerdict = 'new' | 'duplicate' | 'conflict'

export type DedupEntry = { bodySha256: string; firstSeenMs: number }

/** Where the ids live; the default keeps them in memory. Back it with your database to survive restarts. */
export interface DedupStore {
  get(eventId: string): DedupEntry | undefined
  set(eventId: string, entry: DedupEntry): void
  delete(eventId: string): void
  /** Removes every entry first seen before cutoffMs. */
  prune(cutoffMs: number): void
}

/** An in-memory DedupStore (a Map in insertion order, so pruning stops at the first young entry). */
export class MemoryDedupStore implements DedupStore {
  private readonly entries = new Map<string, DedupEntry>()
  get = (eventId: string) => this.entries.get(eventId)
  set = (eventId: string, entry: DedupEntry) => {
    this.entries.delete(eventId)
    this.entries.set(eventId, entry)
  }
  delete = (eventId: string) => {
    this.entries.delete(eventId)
  }
  prune = (cutoffMs: number) => {
    for (const [id, entry] of this.entries) {
      if (entry.firstSeenMs >= cutoffMs) break
      this.entries.delete(id)
    }
  }
  get size(): number {
    return this.entries.size
  }
}

export type DeduplicatorOptions = {
  /** How long an id is remembered; default (and at most useful) 30 days. */
  retentionMs?: number
  /** Milliseconds since the epoch; default the wall clock. */
  now?: () => number
  store?: DedupStore
}

/** The SHA-256 of the raw body bytes, hex. */
export const bodySha256 = (rawBody: Uint8Array | string): string =>
  createHash('sha256')
    .update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody)
    .digest('hex')

/**
 * Remembers event ids with their body hash. Call seen() after the signature is verified and before answering:
 * 'new' -> store the notice, then 2xx; 'duplicate' -> 2xx without doing anything again; 'conflict' (a known
 * event_id with another body) -> reject it (for example 409). If storing a 'new' notice fails, call forget()
 * so the retry is treated as new.
 * @example
 * const dedup = new Deduplicator()
 * if (dedup.seen(notice.event_id, rawBody) === 'conflict') return res.writeHead(409).end()
 */
export class Deduplicator {
  private readonly retentionMs: number
  private readonly now: () => number
  private readonly store: DedupStore

  constructor(opts: DeduplicatorOptions = {}) {
    this.retentionMs = opts.retentionMs ?? DEDUP_RETENTION_MS
    // eslint-disable-next-line no-restricted-properties -- the kit runs in the receiver's process, on its wall clock (the mock's virtual clock does not apply)
    this.now = opts.now ?? (() => Date.now())
    this.store = opts.store ?? new MemoryDedupStore()
  }

  /** Classifies a verified notification and remembers a new one. */
  seen(eventId: string, rawBody: Uint8Array | string): DedupVerdict {
    const nowMs = this.now()
    this.store.prune(nowMs - this.retentionMs)
    const hash = bodySha256(rawBody)
    const known = this.store.get(eventId)
    if (known && known.firstSeenMs > nowMs - this.retentionMs) {
      return known.bodySha256 === hash ? 'duplicate' : 'conflict'
    }
    this.store.set(eventId, { bodySha256: hash, firstSeenMs: nowMs })
    return 'new'
  }

  /** Forgets an id (storing the notice failed: the next delivery must count as new). */
  forget(eventId: string): void {
    this.store.delete(eventId)
  }
}
