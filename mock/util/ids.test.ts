import { createCipheriv, createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { Ids, memoryIdsStore } from './ids.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('ids', () => {
  it('makes UUID v4-shaped ids, request ids and URL-safe secret tokens', () => {
    const ids = new Ids(memoryIdsStore(), 'seed')
    expect(ids.uuid()).toMatch(UUID_V4)
    expect(ids.requestId()).toMatch(/^req_[0-9a-f]{24}$/)
    expect(ids.secretToken()).toMatch(/^[A-Za-z0-9_-]{32}$/)
    expect(ids.secretToken(32)).toMatch(/^[A-Za-z0-9_-]{43}$/)
  })

  it('gives the same uuid sequence for the same seed and another for another seed', () => {
    const a = new Ids(memoryIdsStore(), 'one')
    const b = new Ids(memoryIdsStore(), 'one')
    const c = new Ids(memoryIdsStore(), 'two')
    const seq = (ids: Ids) => [ids.uuid(), ids.uuid(), ids.uuid()]
    const first = seq(a)
    expect(seq(b)).toEqual(first)
    expect(seq(c)).not.toEqual(first)
  })

  it('keeps the uuid sequence reproducible whatever request ids and tokens were issued in between', () => {
    // Request ids and tokens do not draw from the seeded sequence: a run that answered more requests (401s
    // included) or issued more tokens still gets the same uuids, and no request id marks a position in it.
    const a = new Ids(memoryIdsStore(), 'one')
    const b = new Ids(memoryIdsStore(), 'one')
    const first = [a.uuid(), a.requestId(), a.secretToken(), a.requestId(), a.uuid()]
    expect([b.uuid(), b.uuid()]).toEqual([first[0], first[4]])
  })

  it('issues request ids and secret tokens from a cryptographic source, not from (seed, position)', () => {
    // Two generators with the same seed, the same store state and the same calls: the uuids agree, the
    // request ids and tokens do not (a seeded derivation would make them equal).
    const a = new Ids(memoryIdsStore(), 'mock')
    const b = new Ids(memoryIdsStore(), 'mock')
    const run = (ids: Ids) => ({
      uuid: ids.uuid(),
      requestId: ids.requestId(),
      token: ids.secretToken(24),
      long: ids.secretToken(32),
    })
    const x = run(a)
    const y = run(b)
    expect(y.uuid).toBe(x.uuid)
    expect(y.requestId).not.toBe(x.requestId)
    expect(y.token).not.toBe(x.token)
    expect(y.long).not.toBe(x.long)
    const many = new Set(Array.from({ length: 1000 }, () => a.secretToken()))
    expect(many.size).toBe(1000)
  })

  it('refuses a secret token shorter than 16 bytes', () => {
    const ids = new Ids(memoryIdsStore(), 'seed')
    expect(() => ids.secretToken(8)).toThrow(RangeError)
  })

  it('never repeats an id of an earlier process start on the same store, also after a reset', () => {
    const store = memoryIdsStore()
    const seen = new Set<string>()
    const before = new Ids(store, 's')
    for (let i = 0; i < 2000; i++) seen.add(before.uuid())
    const after = new Ids(store, 's')
    for (let i = 0; i < 2000; i++) expect(seen.has(after.uuid())).toBe(false)
    after.reset()
    expect(seen.has(after.uuid())).toBe(false)
  })

  it('rewinds the sequence on a reset: the same calls give the same ids again', () => {
    const ids = new Ids(memoryIdsStore(), 's')
    const first = Array.from({ length: 50 }, () => ids.uuid())
    ids.reset()
    expect(Array.from({ length: 50 }, () => ids.uuid())).toEqual(first)
    ids.reset()
    expect(ids.uuid()).toBe(first[0])
  })

  it('derives the n-th id of a seed as AES-256 of n under the key SHA-256 of "seed:epoch:boot" (the same ids on every Node version)', () => {
    const ids = new Ids(memoryIdsStore(), 'fixed-seed')
    const key = createHash('sha256').update('fixed-seed:0:0').digest()
    const expected = (n: number) => {
      // One AES block: n as a 128-bit big-endian counter, encrypted on its own (ECB of one block).
      const counter = Buffer.alloc(16)
      counter.writeUIntBE(n, 10, 6)
      const cipher = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false)
      const b = Buffer.concat([cipher.update(counter), cipher.final()])
      b[6] = (b[6]! & 0x0f) | 0x40
      b[8] = (b[8]! & 0x3f) | 0x80
      const h = b.toString('hex')
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`
    }
    // Across the first blocks the generator makes at once (256 ids each).
    const made = Array.from({ length: 600 }, () => ids.uuid())
    for (const n of [0, 1, 2, 255, 256, 257, 511, 512, 599]) expect(made[n]).toBe(expected(n))
    ids.reset()
    expect(ids.uuid()).toBe(expected(0))
  })
})
