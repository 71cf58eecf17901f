import { afterEach, describe, expect, it } from 'vitest'
import { ERROR_CATALOG } from '../spec/index.js'
import { ApiError } from './errors.js'
import { createMock, type Mock } from './index.js'
import { memoryLog } from './util/log.js'

const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
})
async function fresh(opts: Parameters<typeof createMock>[0] = {}) {
  const mock = await createMock(opts)
  open.push(mock)
  return mock
}

type Envelope = {
  error: { code: string; message: string; retryable: boolean; request_id: string; details: object }
}

describe('app', () => {
  it('answers an unknown path with HTTP_ERROR 404 in the error envelope', async () => {
    const mock = await fresh()
    const res = await mock.app.request('/v1/nothing-here')
    expect(res.status).toBe(404)
    const body = (await res.json()) as Envelope
    expect(Object.keys(body.error).sort()).toEqual([
      'code',
      'details',
      'message',
      'request_id',
      'retryable',
    ])
    expect(body.error).toMatchObject({ code: 'HTTP_ERROR', retryable: false, details: {} })
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
  })

  it('answers a known path with another method with HTTP_ERROR 405 and an Allow header', async () => {
    const mock = await fresh()
    const res = await mock.app.request('/_mock/reset', { method: 'GET' })
    expect(res.status).toBe(405)
    expect(((await res.json()) as Envelope).error.code).toBe('HTTP_ERROR')
    expect(res.headers.get('allow')).toBe('POST')
    expect((await mock.app.request('/_mock/fixtures', { method: 'DELETE' })).status).toBe(405)
  })

  it('issues a new X-Request-Id per request and sends Cache-Control no-store on success too', async () => {
    const mock = await fresh()
    const a = await mock.app.request('/_mock/clock')
    const b = await mock.app.request('/_mock/clock', {
      headers: { 'X-Request-Id': 'client-chosen' },
    })
    expect(a.headers.get('x-request-id')).toMatch(/^req_/)
    expect(b.headers.get('x-request-id')).not.toBe(a.headers.get('x-request-id'))
    expect(b.headers.get('x-request-id')).not.toBe('client-chosen')
    expect(a.headers.get('cache-control')).toBe('no-store')
  })

  it('answers an unexpected exception with INTERNAL_ERROR 500, logs it and sends no stack trace', async () => {
    const log = memoryLog()
    const mock = await fresh({ log })
    mock.app.get('/_mock/boom', () => {
      throw new Error('secret internals at /srv/app.ts:42')
    })
    const res = await mock.app.request('/_mock/boom')
    expect(res.status).toBe(500)
    const text = await res.text()
    expect(text).not.toContain('secret internals')
    expect(text).not.toContain('app.ts')
    const body = JSON.parse(text) as Envelope
    expect(body.error).toMatchObject({
      code: 'INTERNAL_ERROR',
      retryable: ERROR_CATALOG.INTERNAL_ERROR.http.retryable,
    })
    expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
    expect(res.headers.get('cache-control')).toBe('no-store')
    const logged = log.lines.find((l) => l.msg === 'unhandled error')
    expect(logged).toMatchObject({ request_id: body.error.request_id })
    expect(String(logged?.stack)).toContain('secret internals')
  })

  it('renders an ApiError with the catalog status, retryable and Retry-After', async () => {
    const mock = await fresh()
    mock.app.get('/_mock/limited', () => {
      throw new ApiError('RATE_LIMITED', {
        retryAfterS: 12.2,
        details: { reset_at: '2026-11-02T09:01:00Z' },
      })
    })
    mock.app.get('/_mock/busy', () => {
      throw new ApiError('STORAGE_UNAVAILABLE')
    })
    mock.app.get('/_mock/concurrency', () => {
      throw new ApiError('CONCURRENCY_LIMIT')
    })
    const limited = await mock.app.request('/_mock/limited')
    expect(limited.status).toBe(429)
    expect(limited.headers.get('retry-after')).toBe('13')
    expect(((await limited.json()) as Envelope).error).toMatchObject({
      retryable: true,
      details: { reset_at: '2026-11-02T09:01:00Z' },
    })
    const busy = await mock.app.request('/_mock/busy')
    expect(busy.status).toBe(503)
    expect(busy.headers.get('retry-after')).toBeNull()
    expect((await mock.app.request('/_mock/concurrency')).headers.get('retry-after')).toBe('1')
  })

  it('refuses an ApiError status outside the catalog list', () => {
    // @ts-expect-error 409 is not a status of NOT_FOUND
    expect(() => new ApiError('NOT_FOUND', { status: 409 })).toThrow(/needs a status among 404/)
    // @ts-expect-error INVALID_INPUT has two statuses: one must be chosen
    expect(() => new ApiError('INVALID_INPUT')).toThrow(/needs a status among 400, 422/)
    expect(new ApiError('INVALID_INPUT', { status: 400 }).status).toBe(400)
  })

  it('logs one line per request with the route pattern and never the query string or keys', async () => {
    const log = memoryLog()
    const mock = await fresh({ log })
    await mock.app.request('/_mock/clock?token=very-secret', {
      headers: { Authorization: 'Bearer sk_test_a_full' },
    })
    await mock.app.request('/v1/artifacts/x/content?token=very-secret')
    const lines = log.lines.filter((l) => l.msg === 'request')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatchObject({ method: 'GET', route: '/_mock/clock', status: 200 })
    expect(lines[1]).toMatchObject({ route: '/v1/artifacts/:artifact_id/content', status: 404 })
    expect(typeof lines[0]?.duration_ms).toBe('number')
    expect(lines[0]?.request_id).toMatch(/^req_/)
    const text = JSON.stringify(log.lines)
    expect(text).not.toContain('very-secret')
    expect(text).not.toContain('sk_test_a_full')
  })

  it('answers through mock.fetch like through app.request', async () => {
    const mock = await fresh()
    const res = await mock.fetch(new Request('http://mock.local/_mock/clock'))
    expect(res.status).toBe(200)
    expect(await mock.clock.advance(1.5)).toEqual(new Date('2026-11-02T09:00:01.500Z'))
  })
})
