/**
 * Issue #14: the request journal (GET/DELETE /_mock/requests) SDK tests assert on: what the mock received,
 * filterable, bounded, cleared by reset, never holding keys, tokens or bodies.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { RequestJournal, type JournalEntry } from '../util/journal.js'

const KEY = 'sk_test_a_full'
const DEPLOYMENT = 'aaaaaaaa-d000-4000-8000-000000000001'
const SECRET_TEXT = 'a body the journal never keeps'

let mock: Mock
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

const createSession = (idempotencyKey: string) =>
  mock.app.request(`/v1/deployments/${DEPLOYMENT}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${KEY}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': idempotencyKey,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: SECRET_TEXT }] }),
  })

async function journal(
  query = '',
): Promise<{ items: JournalEntry[]; dropped: number; capacity: number }> {
  const res = await mock.app.request(`/_mock/requests${query}`)
  expect(res.status).toBe(200)
  return (await res.json()) as { items: JournalEntry[]; dropped: number; capacity: number }
}

describe('request journal', () => {
  it('lists each request with method, path, operation, status, Idempotency-Key, request_id and times', async () => {
    const first = await createSession('same-key')
    const again = await createSession('same-key')
    expect([first.status, again.status]).toEqual([202, 202])
    const { items } = await journal()
    expect(items).toHaveLength(2)
    expect(items[0]).toEqual({
      seq: 1,
      method: 'POST',
      path: `/v1/deployments/${DEPLOYMENT}/sessions`,
      operation: 'createSession',
      status: 202,
      idempotency_key: 'same-key',
      last_event_id: null,
      request_id: first.headers.get('x-request-id'),
      at: '2026-11-02T09:00:00.000Z',
      wall_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T.*Z$/),
    })
    // "The client resent with the same key": two entries, one key.
    expect(items.map((e) => e.idempotency_key)).toEqual(['same-key', 'same-key'])
    expect(items[1]!.request_id).toBe(again.headers.get('x-request-id'))
  })

  it('never holds the API key, a body, or a query string (download tokens)', async () => {
    await createSession('k1')
    await mock.app.request(
      '/v1/artifacts/aaaaaaaa-0000-4000-8000-00000000ffff/content?token=tok_secret_1',
      {
        headers: { Authorization: `Bearer ${KEY}` },
      },
    )
    const text = JSON.stringify(await journal())
    expect(text).not.toContain(KEY)
    expect(text).not.toContain(SECRET_TEXT)
    expect(text).not.toContain('tok_secret_1')
    expect(text).toContain('/content"')
  })

  it('records the Last-Event-ID of a stream request, and an unknown path with operation null', async () => {
    const receipt = (await (await createSession('k2')).json()) as { session_id: string }
    const stream = await mock.app.request(`/v1/sessions/${receipt.session_id}/events`, {
      headers: { Authorization: `Bearer ${KEY}`, 'Last-Event-ID': 'not-an-event' },
    })
    await stream.body?.cancel()
    await mock.app.request('/v1/no-such-thing')
    const { items } = await journal()
    expect(items[1]).toMatchObject({ last_event_id: 'not-an-event', method: 'GET' })
    expect(items[2]).toMatchObject({ path: '/v1/no-such-thing', operation: null, status: 404 })
  })

  it('does not record control-API requests', async () => {
    await mock.app.request('/_mock/clock')
    await mock.app.request('/_mock/fixtures')
    expect((await journal()).items).toEqual([])
  })

  it('filters by method, path, operation, status, Idempotency-Key and request_id, and keeps the last `limit`', async () => {
    await createSession('a')
    await createSession('b')
    await mock.app.request('/v1/deployments', { headers: { Authorization: `Bearer ${KEY}` } })
    await mock.app.request('/v1/deployments')
    expect((await journal('?operation=createSession')).items.map((e) => e.idempotency_key)).toEqual(
      ['a', 'b'],
    )
    expect((await journal('?idempotency_key=b')).items).toHaveLength(1)
    expect((await journal('?method=get')).items).toHaveLength(2)
    expect((await journal('?path=/v1/deployments&status=401')).items).toHaveLength(1)
    expect((await journal('?path_prefix=/v1/deployments/')).items).toHaveLength(2)
    expect((await journal('?limit=1')).items.map((e) => e.seq)).toEqual([4])
    const id = (await journal()).items[0]!.request_id
    expect((await journal(`?request_id=${id}`)).items.map((e) => e.seq)).toEqual([1])
  })

  it('answers an unknown or malformed filter with INVALID_INPUT 422', async () => {
    for (const query of ['?colour=red', '?status=abc', '?limit=0', '?limit=99999']) {
      const res = await mock.app.request(`/_mock/requests${query}`)
      expect(res.status, query).toBe(422)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT')
    }
  })

  it('is cleared by DELETE /_mock/requests and by a reset', async () => {
    await createSession('x')
    expect((await mock.app.request('/_mock/requests', { method: 'DELETE' })).status).toBe(200)
    expect((await journal()).items).toEqual([])
    await createSession('y')
    await mock.app.request('/_mock/reset', { method: 'POST' })
    expect((await journal()).items).toEqual([])
  })

  it('is bounded: past its capacity the oldest entries go, and dropped counts them', () => {
    const j = new RequestJournal(3)
    const entry = (n: number) => ({
      method: 'GET',
      path: `/v1/x/${n}`,
      operation: null,
      status: 200,
      idempotency_key: null,
      last_event_id: null,
      request_id: `req_${n}`,
      atMs: Date.UTC(2026, 10, 2, 9, 0, n),
      wallMs: Date.UTC(2026, 10, 26, 9, 0, n),
    })
    for (let n = 1; n <= 5; n++) j.record(entry(n))
    expect(j.list().map((e) => e.seq)).toEqual([3, 4, 5])
    expect(j.dropped).toBe(2)
    j.clear()
    j.record(entry(6))
    expect(j.list().map((e) => e.seq)).toEqual([6])
    expect(j.dropped).toBe(0)
    // Far past its capacity it still keeps exactly the newest entries, in order.
    for (let n = 7; n <= 20; n++) {
      j.record(entry(n))
      expect(j.list().map((e) => e.seq)).toEqual([n - 2, n - 1, n].filter((s) => s >= 6))
    }
    expect(j.dropped).toBe(12)
    // Each kept entry is the one recorded with its seq, its times formatted when listed.
    expect(j.list().map((e) => [e.seq, e.path, e.request_id, e.at, e.wall_at])).toEqual(
      [18, 19, 20].map((n) => [
        n,
        `/v1/x/${n}`,
        `req_${n}`,
        `2026-11-02T09:00:${String(n).padStart(2, '0')}.000Z`,
        `2026-11-26T09:00:${String(n).padStart(2, '0')}.000Z`,
      ]),
    )
    // entry(seq) (the inspector's change feed) finds a kept entry, and none that was pushed out.
    expect(j.entry(19)?.path).toBe('/v1/x/19')
    expect(j.entry(17)).toBeUndefined()
    expect(j.entry(21)).toBeUndefined()
  })
})
