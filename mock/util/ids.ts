/**
 * Ids, request ids and secret tokens: the mock's only source of randomness, in two parts.
 * - Seeded: record ids (`uuid()`) are a deterministic sequence, reproducible for a seed and the same sequence
 *   of calls on a fresh store and again after every world reset (which wipes every record, so the same
 *   test sequence gives the same ids after a reset); every process start on a kept store (--db) starts a
 *   new sequence, so ids of records a store keeps are never repeated. Ids are not secrets: anyone who knows the seed can
 *   compute them, and access rules never rely on an id being unknown.
 * - Cryptographic (node:crypto randomBytes, not seeded, not reproducible): secret tokens (download tokens,
 *   webhook signing secrets, anything that grants access) and request ids. Neither draws from the seeded
 *   sequence, so no response reveals a position in it and no token follows from the seed and a position.
 */
import * as crypto from 'node:crypto'
import { createHash, randomBytes } from 'node:crypto'

/**
 * SHA-256 of a string: node:crypto's one-shot hash() where this Node has it (20.12 and later; about twice as
 * fast as a Hash object per id), else createHash. The same digest either way, so the same ids.
 */
const sha256: (data: string) => Buffer =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'buffer')
    : (data) => createHash('sha256').update(data).digest()

/**
 * Persisted state of the seeded sequence: epoch (0; stores of versions before 0.2 counted world resets) and boot (process starts on this
 * store). Ids are hashes of (seed, epoch, boot, counter); the counter lives in memory only, so nothing is
 * written per id and a rolled-back transaction cannot make the store forget ids already handed out.
 */
export type IdsState = { epoch: number; boot: number }

export interface IdsStore {
  load(): IdsState | undefined
  save(state: IdsState): void
}

/** Random bytes per request id (24 hex characters). */
const REQUEST_ID_BYTES = 12

export class Ids {
  private epoch: number
  private boot: number
  private counter = 0
  /** Cryptographically random bytes drawn in blocks for request ids (one randomBytes call per 256 ids). */
  private requestIdBytes = Buffer.alloc(0)
  private requestIdAt = 0

  /** Call outside any transaction: a kept store's boot count is incremented and saved at once. */
  constructor(
    private readonly store: IdsStore,
    private readonly seed: string,
  ) {
    const saved = store.load()
    this.epoch = saved?.epoch ?? 0
    this.boot = saved ? saved.boot + 1 : 0
    this.persist()
  }

  /** A UUID v4-shaped id (version nibble 4, variant 10xx). */
  uuid(): string {
    const b = this.next()
    b[6] = (b[6]! & 0x0f) | 0x40
    b[8] = (b[8]! & 0x3f) | 0x80
    const h = b.subarray(0, 16).toString('hex')
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`
  }

  /**
   * A request id for X-Request-Id and error.request_id: "req_" and 24 hex characters, from 12
   * cryptographically random bytes. It does not advance the seeded sequence, so it tells nothing about ids
   * or tokens.
   */
  requestId(): string {
    if (this.requestIdAt + REQUEST_ID_BYTES > this.requestIdBytes.length) {
      this.requestIdBytes = randomBytes(REQUEST_ID_BYTES * 256)
      this.requestIdAt = 0
    }
    const at = this.requestIdAt
    this.requestIdAt += REQUEST_ID_BYTES
    return `req_${this.requestIdBytes.toString('hex', at, at + REQUEST_ID_BYTES)}`
  }

  /**
   * An opaque URL-safe secret (download tokens, webhook signing secrets) of `bytes` cryptographically random
   * bytes (16 to 64; base64url, 32 characters for the default 24). Never seeded: equal seeds give different
   * secrets.
   */
  secretToken(bytes = 24): string {
    if (!Number.isInteger(bytes) || bytes < 16 || bytes > 64) {
      throw new RangeError(`a secret token has 16 to 64 random bytes, not ${bytes}`)
    }
    return randomBytes(bytes).toString('base64url')
  }

  /**
   * Rewinds the seeded sequence to where this process started it (world reset): the world is wiped, so the
   * same calls after a reset give the same ids as after the start. A store kept with --db keeps its boot count,
   * so ids of an earlier process start are still never repeated.
   */
  reset(): void {
    this.epoch = 0
    this.counter = 0
    this.persist()
  }

  /** Saves the current state (also after the world's tables were wiped). */
  persist(): void {
    this.store.save({ epoch: this.epoch, boot: this.boot })
  }

  private next(): Buffer {
    const n = this.counter++
    return sha256(`${this.seed}:${this.epoch}:${this.boot}:${n}`)
  }
}

/** An IdsStore in memory, for unit tests. */
export function memoryIdsStore(): IdsStore {
  let state: IdsState | undefined
  return {
    load: () => state,
    save: (s) => {
      state = s
    },
  }
}
