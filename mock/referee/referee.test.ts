/**
 * The client referee end to end inside one process: requests through the app, findings through
 * GET /_mock/referee, cleared by DELETE /_mock/referee and by a reset. The judging rules themselves are
 * tested in rules.test.ts; a webhook receiver that creates work is tested over HTTP below.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createMock, type Mock } from '../index.js'
import { readUntilEvent } from '../events/test-stream.js'
import type { Violation } from './rules.js'

const A = {
  key: 'sk_test_a_full',
  deployment: 'aaaaaaaa-d000-4000-8000-000000000001',
  project: 'aaaaaaaa-0000-4000-8000-000000000000',
}

let mock: Mock
beforeEach(async () => {
  mock = await createMock({ rateLimits: false, allowInsecureWebhooks: true })
})
afterEach(() => mock.close())

const v1 = (path: string, init: RequestInit & { idem?: string; json?: unknown } = {}) => {
  const { idem, json, headers, ...rest } = init
  return mock.app.request(path, {
    method: json === undefined ? 'GET' : 'POST',
    ...rest,
    headers: {
      Authorization: `Bearer ${A.key}`,
      ...(json === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(idem === undefined ? {} : { 'Idempotency-Key': idem }),
      ...(headers as Record<string, string> | undefined),
    },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
}

const createSession = async (idem: string, text = 'hello') =>
  v1(`/v1/deployments/${A.deployment}/sessions`, {
    idem,
    json: { input: [{ type: 'TEXT', text }] },
  })

async function findings(): Promise<Violation[]> {
  const res = await mock.app.request('/_mock/referee')
  expect(res.status).toBe(200)
  return ((await res.json()) as { violations: Violation[] }).violations
}

describe('client referee', () => {
  it('[RETRY-001] reports a resend after a non-retryable error with the requests involved, never keys or bodies', async () => {
    const bad = { input: [{ type: 'TEXT', text: 'x', extra: true }] }
    const path = `/v1/deployments/${A.deployment}/sessions`
    const first = await v1(path, { idem: 'k-1', json: bad })
    expect(first.status).toBe(422)
    expect(await findings()).toEqual([])
    await mock.clock.advance(30)
    const second = await v1(path, { idem: 'k-1', json: bad })
    const [v, ...more] = await findings()
    expect(more).toEqual([])
    expect(v).toEqual({
      rule: 'resend-after-non-retryable',
      requirement_id: 'RETRY-001',
      key: A.key,
      requests: [
        {
          method: 'POST',
          path,
          request_id: first.headers.get('x-request-id'),
          at: '2026-11-02T09:00:00.000Z',
        },
        {
          method: 'POST',
          path,
          request_id: second.headers.get('x-request-id'),
          at: '2026-11-02T09:00:30.000Z',
        },
      ],
      at: '2026-11-02T09:00:30.000Z',
    })
    expect(JSON.stringify(v!.requests)).not.toContain('k-1')
    expect(JSON.stringify(v!.requests)).not.toContain(A.key)
  })

  it('[RETRY-004] reports another body under an accepted Idempotency-Key', async () => {
    expect((await createSession('same', 'one')).status).toBe(202)
    expect((await createSession('same', 'two')).status).toBe(409)
    expect((await findings()).map((v) => [v.rule, v.requirement_id])).toEqual([
      ['changed-body-same-key', 'RETRY-004'],
    ])
  })

  it('[RATE-007] reports polls of a Turn under 2 virtual seconds apart, not polls 2 seconds apart', async () => {
    const receipt = (await (await createSession('poll')).json()) as { status_url: string }
    expect((await v1(receipt.status_url)).status).toBe(200)
    await mock.clock.advance(2)
    expect((await v1(receipt.status_url)).status).toBe(200)
    expect(await findings()).toEqual([])
    await mock.clock.advance(1)
    expect((await v1(receipt.status_url)).status).toBe(200)
    expect((await findings()).map((v) => v.requirement_id)).toEqual(['RATE-007'])
  })

  it('[SSE-023] reports a stream reopened without the last id after events were delivered', async () => {
    const receipt = (await (await createSession('sse')).json()) as { events_url: string }
    await mock.clock.advance(10)
    const open = async (headers: Record<string, string> = {}) => {
      const res = await v1(receipt.events_url, {
        headers: { Accept: 'text/event-stream', ...headers },
      })
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      const text = await readUntilEvent(reader)
      await reader.cancel()
      return text
    }
    const first = await open()
    const lastId = /^id: (.+)$/m.exec(first)![1]!
    await open({ 'Last-Event-ID': lastId })
    expect(await findings()).toEqual([])
    await open()
    const found = await findings()
    expect(found.map((v) => v.requirement_id)).toEqual(['SSE-023'])
    expect(found[0]!.requests.map((r) => r.path)).toEqual([receipt.events_url, receipt.events_url])
  })

  it('[RETRY-001] DELETE /_mock/referee and POST /_mock/reset clear the findings and what was observed', async () => {
    const bad = { input: [] }
    await createSession('c-1')
    for (let i = 0; i < 2; i++)
      await v1(`/v1/deployments/${A.deployment}/sessions`, { idem: 'c-2', json: bad })
    expect(await findings()).toHaveLength(1)
    const cleared = await mock.app.request('/_mock/referee', { method: 'DELETE' })
    expect(cleared.status).toBe(200)
    expect(await findings()).toEqual([])
    // What was observed is forgotten too: the next resend is judged afresh.
    await v1(`/v1/deployments/${A.deployment}/sessions`, { idem: 'c-2', json: bad })
    expect(await findings()).toEqual([])
    await v1(`/v1/deployments/${A.deployment}/sessions`, { idem: 'c-2', json: bad })
    expect(await findings()).toHaveLength(1)
    expect((await mock.app.request('/_mock/reset', { method: 'POST' })).status).toBe(200)
    expect(await findings()).toEqual([])
  })

  it('[WHN-020] reports a receiver that creates a Session before answering the webhook', async () => {
    const project = mock.fixtures().projects.find((p) => p.id === A.project)!
    let created = 0
    const server: Server = createServer((req, res) => {
      req.resume()
      req.on('end', () => {
        // The naive receiver: "a Turn ended, so start new work", then answer.
        void createSession(`from-webhook-${++created}`, `again ${created}`).then(() =>
          res.writeHead(204).end(),
        )
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
      const hook = await mock.app.request(`/api/runtime/projects/${A.project}/webhooks`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${project.owner_token}`,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify({ url, event_types: ['turn.completed'] }),
      })
      expect(hook.status).toBe(201)
      expect((await createSession('first')).status).toBe(202)
      expect(await findings()).toEqual([])
      await mock.clock.advance(10)
      await mock.webhooks.idle()
      expect(created).toBeGreaterThan(0)
      const found = await findings()
      expect(found.map((v) => v.requirement_id)).toContain('WHN-020')
      expect(found.every((v) => v.requirement_id === 'WHN-020')).toBe(true)
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('client referee under fault rules', () => {
  const fault = async (rule: unknown) => {
    const res = await mock.app.request('/_mock/faults', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(rule),
    })
    expect(res.status).toBe(201)
  }

  it('[RETRY-017] reports a new Idempotency-Key for the same body after an unanswered create, not a resend with the same key', async () => {
    await fault({ match: { operation: 'createSession' }, action: { drop: 'after' }, times: 1 })
    await expect(createSession('lost', 'work')).rejects.toThrow()
    // The correct resend gets the original receipt.
    expect((await createSession('lost', 'work')).status).toBe(202)
    expect(await findings()).toEqual([])
    await fault({ match: { operation: 'createSession' }, action: { drop: 'after' }, times: 1 })
    await expect(createSession('lost-2', 'other work')).rejects.toThrow()
    expect((await createSession('fresh-key', 'other work')).status).toBe(202)
    const found = await findings()
    expect(found.map((v) => [v.rule, v.requirement_id])).toEqual([
      ['changed-key-after-unanswered', 'RETRY-017'],
    ])
    expect(found[0]!.requests).toHaveLength(2)
  })

  it('[RETRY-002] reports a resend before the Retry-After of a faulted answer has passed', async () => {
    await fault({
      match: { operation: 'createSession' },
      action: { error: 'SESSION_UPDATING', retry_after_s: 5 },
      times: 2,
    })
    const first = await createSession('busy', 'w')
    expect(first.status).toBe(503)
    expect(first.headers.get('retry-after')).toBe('5')
    await mock.clock.advance(5)
    expect((await createSession('busy', 'w')).status).toBe(503)
    expect(await findings()).toEqual([])
    await mock.clock.advance(4)
    expect((await createSession('busy', 'w')).status).toBe(202)
    expect((await findings()).map((v) => v.requirement_id)).toEqual(['RETRY-002'])
  })

  it('[SSE-023] a stream whose answer was dropped delivered nothing: reopening it without a cursor is right', async () => {
    const receipt = (await (await createSession('sse-drop')).json()) as { events_url: string }
    await mock.clock.advance(10)
    await fault({
      match: { operation: 'streamSessionEvents' },
      action: { drop: 'after' },
      times: 1,
    })
    await expect(
      v1(receipt.events_url, { headers: { Accept: 'text/event-stream' } }),
    ).rejects.toThrow()
    const res = await v1(receipt.events_url, { headers: { Accept: 'text/event-stream' } })
    expect(res.status).toBe(200)
    await res.body!.cancel()
    expect(await findings()).toEqual([])
  })
})

describe('body digests', () => {
  it('[RETRY-004] makes the digest of a resent body text once, keeps only short texts, and forgets them on clear', async () => {
    const { Referee } = await import('./referee.js')
    const ref = new Referee()
    let made = 0
    const make = (text: string) => () => `d:${text}:${++made}`
    expect(ref.digestOf('{"a":1}', make('{"a":1}'))).toBe('d:{"a":1}:1')
    expect(ref.digestOf('{"a":1}', make('{"a":1}'))).toBe('d:{"a":1}:1')
    expect(ref.digestOf('{"a":2}', make('{"a":2}'))).toBe('d:{"a":2}:2')
    const long = 'x'.repeat(9000)
    ref.digestOf(long, make('long'))
    ref.digestOf(long, make('long'))
    expect(made).toBe(4)
    ref.clear()
    ref.digestOf('{"a":1}', make('{"a":1}'))
    expect(made).toBe(5)
  })
})
