import { describe, expect, it } from 'vitest'
import { Ids, memoryIdsStore } from './ids.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('ids', () => {
  it('makes UUID v4-shaped ids, request ids and URL-safe tokens', () => {
    const ids = new Ids(memoryIdsStore(), 'seed')
    expect(ids.uuid()).toMatch(UUID_V4)
    expect(ids.requestId()).toMatch(/^req_[0-9a-f]{24}$/)
    expect(ids.token()).toMatch(/^[A-Za-z0-9_-]{32}$/)
  })

  it('gives the same sequence for the same seed and another for another seed', () => {
    const a = new Ids(memoryIdsStore(), 'one')
    const b = new Ids(memoryIdsStore(), 'one')
    const c = new Ids(memoryIdsStore(), 'two')
    const seq = (ids: Ids) => [ids.uuid(), ids.uuid(), ids.requestId()]
    const first = seq(a)
    expect(seq(b)).toEqual(first)
    expect(seq(c)).not.toEqual(first)
  })

  it('never repeats an id after a restart on the same store or after a reset', () => {
    const store = memoryIdsStore()
    const seen = new Set<string>()
    const before = new Ids(store, 's')
    for (let i = 0; i < 2000; i++) seen.add(before.uuid())
    const after = new Ids(store, 's')
    for (let i = 0; i < 2000; i++) expect(seen.has(after.uuid())).toBe(false)
    after.reset()
    expect(seen.has(after.uuid())).toBe(false)
  })
})
