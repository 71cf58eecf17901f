/**
 * Fault rules (mock/faults/rules.ts, mock/middleware/faults.ts, /_mock/faults): matching, times, seeded
 * probability, validation of control bodies, the actions in process, and drops over a real 127.0.0.1 server.
 */
import { request as httpRequest } from 'node:http'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConnectionDropped, createMock, type Mock } from '../index.js'
import { memoryLog } from '../util/log.js'
import { FaultRules, pathMatches, validateFaultRule } from './rules.js'

const KEY = 'sk_test_a_full'
const H = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' }
const D = 'aaaaaaaa-d000-4000-8000-000000000001'
const JSON_H = { 'Content-Type': 'application/json' }

let mock: Mock
beforeEach(async () => {
  mock = await createMock()
})
afterEach(() => mock.close())

const addRule = (body: unknown) =>
  mock.app.request('/_mock/faults', { method: 'POST', headers: JSON_H, body: JSON.stringify(body) })
const listDeployments = (key = KEY) =>
  mock.app.request('/v1/deployments', { headers: { Authorization: `Bearer ${key}` } })
const createSession = (idem: string) =>
  mock.app.request(`/v1/deployments/${D}/sessions`, {
    method: 'POST',
    headers: { ...H, 'Idempotency-Key': idem },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })

describe('fault rules', () => {
  it('matches a path template segment by segment, * standing for one segment', () => {
    expect(pathMatches('/v1/runs/*', '/v1/runs/abc')).toBe(true)
    expect(pathMatches('/v1/runs/*', '/v1/runs/abc/cancel')).toBe(false)
    expect(pathMatches('/v1/*/abc', '/v1/runs/abc')).toBe(true)
    expect(pathMatches('/v1/runs', '/v1/runs/abc')).toBe(false)
  })

  it('fires for the next `times` matching requests only, and counts them', () => {
    const rules = new FaultRules()
    rules.add({ match: { method: 'GET' }, action: { proxy: 503 }, times: 2 })
    const req = { method: 'GET', path: '/v1/deployments', key: KEY, operation: () => undefined }
    expect(rules.take('http', req)?.id).toBe('fault_1')
    expect(rules.take('http', { ...req, method: 'POST' })).toBeUndefined()
    expect(rules.take('http', req)?.id).toBe('fault_1')
    expect(rules.take('http', req)).toBeUndefined()
    expect(rules.active).toBe(0)
    expect(rules.list()[0]).toMatchObject({ fired: 2, remaining: 0, times: 2 })
  })

  it('draws a seeded probability: the same seed fires on the same requests', () => {
    const run = (seed: string) => {
      const rules = new FaultRules()
      rules.add({ match: {}, action: { proxy: 502 }, probability: 0.3, seed })
      const req = { method: 'GET', path: '/v1/deployments', key: KEY, operation: () => undefined }
      return Array.from({ length: 200 }, () => (rules.take('http', req) ? 1 : 0))
    }
    const a = run('s1')
    expect(run('s1')).toEqual(a)
    expect(run('s2')).not.toEqual(a)
    const fired = a.reduce<number>((n, x) => n + x, 0)
    expect(fired).toBeGreaterThan(20)
    expect(fired).toBeLessThan(110)
  })

  it('resolves the operation only when a rule matches on it', () => {
    const rules = new FaultRules()
    rules.add({ match: { path: '/v1/runs/*' }, action: { proxy: 502 } })
    let asked = 0
    const req = {
      method: 'GET',
      path: '/v1/deployments',
      key: KEY,
      operation: () => (asked++, 'listDeployments'),
    }
    expect(rules.take('http', req)).toBeUndefined()
    expect(asked).toBe(0)
  })

  it('refuses unknown codes, statuses the catalog does not list, unknown operations and bad shapes', () => {
    const bad = [
      { match: {}, action: { error: 'NO_SUCH_CODE' } },
      { match: {}, action: { error: 'EXECUTION_TIMEOUT' } }, // execution-only code: never an HTTP answer
      { match: {}, action: { error: 'NOT_FOUND', status: 410 } },
      { match: {}, action: { error: 'NOT_FOUND', retry_after_s: 3 } },
      { match: { operation: 'noSuchOperation' }, action: { proxy: 502 } },
      { match: { path: '/_mock/reset' }, action: { proxy: 502 } },
      { match: {}, action: { proxy: 500 } },
      { match: {}, action: { drop: 'sideways' } },
      { match: {}, action: { delay_ms: -1 } },
      { match: {}, action: { proxy: 502, drop: 'before' } },
      { match: {}, action: { proxy: 502 }, times: 0 },
      { match: {}, action: { proxy: 502 }, probability: 0 },
      { match: {}, action: { stream: 'close', code: 'INTERNAL_ERROR' } },
      { match: { path: '/v1/deployments' }, action: { webhook: 'duplicate' } },
      { match: { event_type: 'turn.completed' }, action: { proxy: 502 } },
      { match: {}, action: { webhook: 'duplicate', delay_s: 5 } },
      { action: { proxy: 502 } },
      { match: {}, action: { proxy: 502 }, extra: 1 },
    ]
    for (const body of bad) expect(validateFaultRule(body).ok, JSON.stringify(body)).toBe(false)
    expect(
      validateFaultRule({ match: {}, action: { error: 'INVALID_INPUT', status: 422 } }).ok,
    ).toBe(true)
  })
})

describe('/_mock/faults', () => {
  it('answers 201 with the rule, lists it with its fired count, deletes one or all; reset clears them', async () => {
    const res = await addRule({ match: { operation: 'listDeployments' }, action: { proxy: 502 } })
    expect(res.status).toBe(201)
    const rule = (await res.json()) as { id: string; fired: number; times: null }
    expect(rule).toMatchObject({ fired: 0, times: null })
    expect((await listDeployments()).status).toBe(502)
    const list = (await (await mock.app.request('/_mock/faults')).json()) as {
      items: { id: string; fired: number }[]
    }
    expect(list.items).toEqual([expect.objectContaining({ id: rule.id, fired: 1 })])
    expect((await mock.app.request(`/_mock/faults/${rule.id}`, { method: 'DELETE' })).status).toBe(
      200,
    )
    expect((await mock.app.request(`/_mock/faults/${rule.id}`, { method: 'DELETE' })).status).toBe(
      404,
    )
    expect((await listDeployments()).status).toBe(200)
    await addRule({ match: {}, action: { proxy: 502 } })
    await mock.app.request('/_mock/reset', { method: 'POST' })
    expect((await listDeployments()).status).toBe(200)
    await addRule({ match: {}, action: { proxy: 502 } })
    await mock.app.request('/_mock/faults', { method: 'DELETE' })
    expect((await listDeployments()).status).toBe(200)
  })

  it('refuses a bad body with the envelope: 400 for broken JSON, 422 for a bad rule', async () => {
    const broken = await mock.app.request('/_mock/faults', {
      method: 'POST',
      headers: JSON_H,
      body: '{',
    })
    expect(broken.status).toBe(400)
    const bad = await addRule({ match: {}, action: { error: 'NO_SUCH_CODE' } })
    expect(bad.status).toBe(422)
    const error = (
      (await bad.json()) as { error: { code: string; details: { errors: unknown[] } } }
    ).error
    expect(error.code).toBe('INVALID_INPUT')
    // Only the problems of the action kind named, not those of every other kind.
    expect(error.details.errors).toEqual([{ path: '/action/error', message: expect.any(String) }])
    const twoKinds = await addRule({ match: {}, action: { proxy: 502, drop: 'before' } })
    expect(((await twoKinds.json()) as { error: { message: string } }).error.message).toContain(
      'exactly one of',
    )
    expect(mock.faults.list()).toEqual([])
  })

  it('never faults the control API', async () => {
    await addRule({ match: {}, action: { proxy: 503 } })
    expect((await mock.app.request('/_mock/clock')).status).toBe(200)
    expect((await listDeployments()).status).toBe(503)
  })

  it('answers the catalog envelope for an error rule, with Retry-After where the catalog gives one', async () => {
    await addRule({
      match: { key: KEY },
      action: { error: 'SESSION_UPDATING', retry_after_s: 7 },
      times: 1,
    })
    const res = await listDeployments('sk_test_a_read')
    expect(res.status).toBe(200) // another key: not matched
    const faulted = await listDeployments()
    expect(faulted.status).toBe(503)
    expect(faulted.headers.get('Retry-After')).toBe('7')
    const body = (await faulted.json()) as { error: { code: string; retryable: boolean } }
    expect(body.error).toMatchObject({ code: 'SESSION_UPDATING', retryable: true })
    expect((await listDeployments()).status).toBe(200)
  })

  it('answers a proxy error as text with no envelope', async () => {
    await addRule({ match: { method: 'GET', path: '/v1/deployments' }, action: { proxy: 504 } })
    const res = await listDeployments()
    expect(res.status).toBe(504)
    expect(res.headers.get('Content-Type')).toMatch(/^text\/plain/)
    expect(await res.text()).toBe('504 Gateway Timeout\n')
  })

  it('changes nothing on an error rule: a resend after it creates the Session once', async () => {
    mock.faults.add({ match: { operation: 'createSession' }, action: { proxy: 503 }, times: 1 })
    expect((await createSession('k1')).status).toBe(503)
    const first = await createSession('k1')
    expect(first.status).toBe(202)
    expect(first.headers.get('Idempotent-Replayed')).toBeNull()
  })

  it('in process, a drop rejects the request with ConnectionDropped; after a drop-after the work is committed', async () => {
    mock.faults.add({ match: { operation: 'createSession' }, action: { drop: 'before' }, times: 1 })
    await expect(createSession('k2')).rejects.toBeInstanceOf(ConnectionDropped)
    const fresh = await createSession('k2')
    expect(fresh.status).toBe(202)
    expect(fresh.headers.get('Idempotent-Replayed')).toBeNull()

    mock.faults.add({ match: { operation: 'createSession' }, action: { drop: 'after' }, times: 1 })
    await expect(createSession('k3')).rejects.toMatchObject({ when: 'after' })
    const replay = await createSession('k3')
    expect(replay.status).toBe(202)
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true')
  })

  it('serves a delayed request after the delay', async () => {
    mock.faults.add({ match: { operation: 'listDeployments' }, action: { delay_ms: 20 }, times: 1 })
    const res = await listDeployments()
    expect(res.status).toBe(200)
    expect(mock.faults.list()[0]).toMatchObject({ fired: 1, remaining: 0 })
  })

  it('logs a dropped request as dropped, not with a status', async () => {
    const log = memoryLog()
    const logged = await createMock({ log })
    try {
      logged.faults.add({ match: {}, action: { drop: 'before' }, times: 1 })
      await expect(
        logged.app.request('/v1/deployments', { headers: { Authorization: `Bearer ${KEY}` } }),
      ).rejects.toBeInstanceOf(ConnectionDropped)
      expect(log.lines.find((l) => l.msg === 'request')).toMatchObject({
        status: null,
        dropped: 'before',
      })
    } finally {
      logged.close()
    }
  })

  it('validates programmatic rules too', () => {
    expect(() => mock.faults.add({ match: {}, action: { error: 'NOPE' as 'NOT_FOUND' } })).toThrow(
      RangeError,
    )
  })
})

/** A raw POST over a real socket: the status, or 'dropped' when the connection closes with no answer. */
function rawPost(url: string, path: string, headers: Record<string, string>, body: string) {
  return new Promise<{ status: number; body: string } | 'dropped'>((resolve) => {
    const req = httpRequest(`${url}${path}`, { method: 'POST', headers }, (res) => {
      let text = ''
      res.on('data', (d: Buffer) => (text += d.toString()))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      res.on('error', () => resolve('dropped'))
    })
    req.on('error', () => resolve('dropped'))
    req.end(body)
  })
}

describe('drops over HTTP', () => {
  it('closes the connection without an answer; drop after commits, so a resend with the same key gets the original receipt', async () => {
    const server = await mock.listen()
    try {
      const send = (idem: string) =>
        rawPost(
          server.url,
          `/v1/deployments/${D}/sessions`,
          { ...H, 'Idempotency-Key': idem },
          JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
        )
      mock.faults.add({
        match: { operation: 'createSession' },
        action: { drop: 'before' },
        times: 1,
      })
      expect(await send('d1')).toBe('dropped')
      const created = await send('d1')
      expect(created).toMatchObject({ status: 202 })

      mock.faults.add({
        match: { operation: 'createSession' },
        action: { drop: 'after' },
        times: 1,
      })
      expect(await send('d2')).toBe('dropped')
      const again = await send('d2')
      expect(again).toMatchObject({ status: 202 })
      const other = await send('d2-changed-key')
      expect(other).toMatchObject({ status: 202 })
      const ids = [again, other].map(
        (r) => (JSON.parse((r as { body: string }).body) as { session_id: string }).session_id,
      )
      // A changed key after an unanswered request runs the work twice (retry rule 3).
      expect(ids[0]).not.toBe(ids[1])
      expect(mock.faults.list().map((r) => r.fired)).toEqual([1, 1])
    } finally {
      await server.close()
    }
  })
})
