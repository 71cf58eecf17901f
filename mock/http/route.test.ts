/**
 * route()'s idempotency with the fingerprints it keeps by body text: a resend of the same text replays, a
 * different body under the same key is a conflict whether or not its text was seen before, and a text seen
 * under one key creates new work under another.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ rateLimits: false })
})
afterEach(() => mock.close())

const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const create = (key: string, text: string) =>
  mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: 'Bearer sk_test_a_full',
      'Content-Type': 'application/json',
      'Idempotency-Key': key,
    },
    body: text,
  })

it('[IDEM-001][IDEM-002] replays a resent text, refuses another body under the same key, and creates new work for a seen text under a new key', async () => {
  const a = '{"input":[{"type":"TEXT","text":"a"}],"limits":{"max_su":1}}'
  const aReordered = '{ "limits": {"max_su": 1}, "input": [{"text": "a", "type": "TEXT"}] }'
  const b = '{"input":[{"type":"TEXT","text":"b"}],"limits":{"max_su":1}}'
  const first = await create('k1', a)
  expect(first.status).toBe(202)
  const receipt = (await first.json()) as { session_id: string }
  for (const text of [a, a, aReordered, aReordered]) {
    const again = await create('k1', text)
    expect(again.status).toBe(202)
    expect(again.headers.get('Idempotent-Replayed')).toBe('true')
    expect(((await again.json()) as { session_id: string }).session_id).toBe(receipt.session_id)
  }
  // b under k1 (first a fresh text, then a text seen before) is a conflict both times.
  for (let i = 0; i < 2; i++) expect((await create('k1', b)).status).toBe(409)
  // A text seen under k1 creates new work under k2.
  const other = await create('k2', a)
  expect(other.status).toBe(202)
  expect(other.headers.get('Idempotent-Replayed')).toBeNull()
  expect(((await other.json()) as { session_id: string }).session_id).not.toBe(receipt.session_id)
  // b was refused under k1 but is new work under k3.
  expect((await create('k3', b)).status).toBe(202)
})
