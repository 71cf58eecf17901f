import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'

let mock: Mock
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

const create = (idem: string, body: unknown) =>
  mock.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': idem,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const valid = { input: [{ type: 'TEXT', text: 'hello' }] }

describe('call-rate accounting', () => {
  it('[RATE-001] does not count requests refused before acceptance (malformed JSON, schema, media type)', async () => {
    for (let i = 0; i < 10; i++)
      expect((await create(`bad-${i}`, { input: 'nope' })).status).toBe(422)
    for (let i = 0; i < 5; i++) expect((await create(`junk-${i}`, '{')).status).toBe(400)
    for (let i = 0; i < 10; i++) expect((await create(`ok-${i}`, valid)).status).toBe(202)
    const eleventh = await create('ok-10', valid)
    expect(eleventh.status).toBe(429)
  })

  it('[RATE-001][IDEM-001][IDEM-002] answers a resend from its stored receipt even when the window is full, and counts it not', async () => {
    const first = await create('first', valid)
    expect(first.status).toBe(202)
    for (let i = 1; i < 10; i++) expect((await create(`more-${i}`, valid)).status).toBe(202)
    expect((await create('new', valid)).status).toBe(429)
    const replay = await create('first', valid)
    expect(replay.status).toBe(202)
    expect(await replay.json()).toEqual(await first.json())
    const conflict = await create('first', { input: [{ type: 'TEXT', text: 'other' }] })
    expect(conflict.status).toBe(409)
  })
})
