/**
 * Webhook delivery end to end inside one process: management routes, the `webhook.attempt` timer, a real HTTP
 * receiver on 127.0.0.1, the retry schedule on the virtual clock, cancellation, rotation and replay. Events are
 * appended directly (appendEvent) so these tests do not depend on the executor's event mapping.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { appendEvent, type EventRecord } from '../events/log.js'
import { createMock, type Mock } from '../index.js'
import { verifySignature } from './kit/verify.js'
import { MAX_ATTEMPTS, RETRY_OFFSETS_S } from './delivery.js'
import { WebhookConnections } from './connections.js'
import { sendNotification } from './sender.js'

type Received = { headers: IncomingMessage['headers']; raw: Buffer; url: string }
type Responder = (req: IncomingMessage, res: ServerResponse) => void

/** A receiver on 127.0.0.1 whose answer each test chooses. */
class Receiver {
  received: Received[] = []
  respond: Responder = (_req, res) => res.writeHead(204).end()
  private server!: Server
  url = ''
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        this.received.push({ headers: req.headers, raw: Buffer.concat(chunks), url: req.url ?? '' })
        this.respond(req, res)
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }
  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** A receiver that answers nothing until the test says so: a slow or silent endpoint. */
class HoldingReceiver {
  held: {
    raw: Buffer
    headers: IncomingMessage['headers']
    res: ServerResponse
    closed: boolean
  }[] = []
  private server!: Server
  url = ''
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const h = { raw: Buffer.concat(chunks), headers: req.headers, res, closed: false }
        res.on('close', () => (h.closed = true))
        this.held.push(h)
      })
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }
  /** Requests received and still open: neither answered nor given up by the sender. */
  get open(): number {
    return this.held.filter((h) => !h.closed && !h.res.writableEnded).length
  }
  answer(i: number, status: number): void {
    this.held[i]!.res.writeHead(status).end()
  }
  /** Drops every open request (the sender sees the connection close) and forgets them. */
  drop(): void {
    this.server.closeAllConnections()
    this.held = []
  }
  close(): Promise<void> {
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }
}

/** Waits (bounded, real time) for a fact that follows from I/O the test cannot await directly. */
async function until(fact: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await fact()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`still not true after waiting: ${what}`)
}

const sigTime = (headers: IncomingMessage['headers']): number =>
  Number(/t=(\d+)/.exec(headers['service-signature'] as string)![1])

const receiver = new Receiver()
const holding = new HoldingReceiver()
beforeAll(async () => {
  await receiver.start()
  await holding.start()
})
afterAll(async () => {
  await receiver.close()
  await holding.close()
})

const open: Mock[] = []
afterEach(() => {
  while (open.length) open.pop()!.close()
  holding.drop()
  receiver.received = []
  receiver.respond = (_req, res) => res.writeHead(204).end()
})

async function setup(options: Parameters<typeof createMock>[0] = {}) {
  const mock = await createMock({ allowInsecureWebhooks: true, ...options })
  open.push(mock)
  const project = mock.fixtures().projects.find((p) => p.approved)!
  const base = `/api/runtime/projects/${project.id}`
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await mock.app.request(`${base}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${project.owner_token}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    return {
      status: res.status,
      headers: res.headers,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests read loose JSON answers
      body: (await res.json()) as Record<string, any>,
    }
  }
  const register = async (body: Record<string, unknown> = {}) => {
    const res = await call('POST', '/webhooks', { url: `${receiver.url}/hook`, ...body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body as { id: string; secret: string }
  }
  // A stored OUTCOME with a field that must never reach a notice.
  const outcome: Extract<EventRecord['data'], { kind: 'OUTCOME' }> & { secret_result: string } = {
    kind: 'OUTCOME',
    status: 'SUCCEEDED',
    error: null,
    item_ids: [],
    usage: { status: 'FINAL', total_su: 0 },
    secret_result: 'never sent',
  }
  const emit = (e: Partial<EventRecord> & { type: string }): EventRecord =>
    mock.deps.db.tx(() =>
      appendEvent(mock.deps, {
        aggregate_kind: 'SESSION',
        aggregate_id: '11111111-1111-4111-8111-111111111111',
        project_id: project.id,
        session_id: '11111111-1111-4111-8111-111111111111',
        turn_id: '22222222-2222-4222-8222-222222222222',
        status: 'SUCCEEDED',
        data: outcome,
        ...e,
      }),
    )
  const deliveries = async (query = '') => (await call('GET', `/webhook-deliveries${query}`)).body
  const nowS = () => Math.floor(mock.clock.now().getTime() / 1000)
  return { mock, project, call, register, emit, deliveries, nowS }
}

describe('webhook delivery', () => {
  it('[WHN-001][WHN-003][WHN-004][WHN-008][WHN-009][AUTH-012] sends a signed notice of a subscribed event', async () => {
    const { mock, register, emit, nowS } = await setup()
    const { secret } = await register()
    const event = emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received).toHaveLength(1)
    const got = receiver.received[0]!
    expect(got.headers.authorization).toBeUndefined()
    expect(got.headers['content-type']).toBe('application/json')
    const v = verifySignature({
      header: got.headers['service-signature'] as string,
      rawBody: got.raw,
      secrets: [secret],
      nowS: nowS(),
    })
    expect(v.ok).toBe(true)
    const body = JSON.parse(got.raw.toString('utf8')) as Record<string, unknown>
    expect(body).toEqual({
      event_id: event.event_id,
      type: 'turn.completed',
      aggregate_kind: 'SESSION',
      sequence: event.sequence,
      occurred_at: new Date(event.created_at).toISOString(),
      session_id: event.session_id,
      turn_id: event.turn_id,
      status_url: `/v1/sessions/${event.session_id}/turns/${event.turn_id}`,
      outputs_url: `/v1/sessions/${event.session_id}/turns/${event.turn_id}/outputs`,
      status: 'SUCCEEDED',
    })
    expect(got.raw.byteLength).toBeLessThanOrEqual(4096)
  })

  it('[WHM-004][WHM-005] sends the default set only, and run.step.completed only when subscribed', async () => {
    const { mock, register, emit } = await setup()
    await register()
    await register({ event_types: ['run.step.completed'] })
    const run = {
      aggregate_kind: 'RUN' as const,
      aggregate_id: '33333333-3333-4333-8333-333333333333',
    }
    emit({
      ...run,
      run_id: run.aggregate_id,
      type: 'run.step.completed',
      step_id: 'step-1',
      status: 'RUNNING',
    })
    emit({ type: 'message.created' })
    emit({ ...run, run_id: run.aggregate_id, type: 'run.expired', status: 'EXPIRED' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    const bodies = receiver.received.map(
      (r) => JSON.parse(r.raw.toString()) as Record<string, string>,
    )
    expect(bodies.map((b) => b.type).sort()).toEqual(['run.expired', 'run.step.completed'])
    const step = bodies.find((b) => b.type === 'run.step.completed')!
    expect(step).toMatchObject({
      run_id: run.aggregate_id,
      step_id: 'step-1',
      status_url: `/v1/runs/${run.aggregate_id}`,
      outputs_url: `/v1/runs/${run.aggregate_id}/outputs`,
    })
  })

  it('[WHN-021][WHN-022][WHN-028][WHN-012] retries 1 min, 5 min, 30 min, 2 h, 8 h, 24 h after the first attempt, then FAILED', async () => {
    const { mock, register, emit, deliveries } = await setup()
    const { secret } = await register()
    receiver.respond = (_req, res) => res.writeHead(500).end('stack trace with secrets')
    emit({ type: 'turn.failed', status: 'FAILED' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    const start = receiver.received.length
    expect(start).toBe(1)
    const firstT = Number(
      /t=(\d+)/.exec(receiver.received[0]!.headers['service-signature'] as string)![1],
    )
    await mock.clock.advance(25 * 3600)
    expect(receiver.received).toHaveLength(7)
    const ts = receiver.received.map((r) =>
      Number(/t=(\d+)/.exec(r.headers['service-signature'] as string)![1]),
    )
    expect(ts.map((t) => t - firstT)).toEqual([0, ...RETRY_OFFSETS_S])
    for (const r of receiver.received) {
      const t = Number(/t=(\d+)/.exec(r.headers['service-signature'] as string)![1])
      expect(
        verifySignature({
          header: r.headers['service-signature'] as string,
          rawBody: r.raw,
          secrets: [secret],
          nowS: t,
        }).ok,
      ).toBe(true)
      expect(r.raw.equals(receiver.received[0]!.raw)).toBe(true)
    }
    const page = await deliveries('?status=FAILED')
    expect(page.items).toHaveLength(1)
    const d = page.items[0]
    expect(d).toMatchObject({
      status: 'FAILED',
      attempts: 7,
      last_http_status: 500,
      last_error_code: 'HTTP_STATUS',
      next_attempt_at: null,
    })
    expect(JSON.stringify(d)).not.toContain('stack trace')
    expect(d.history).toHaveLength(7)
    await mock.clock.advance(7 * 24 * 3600)
    expect(receiver.received).toHaveLength(7)
  })

  it('[WHN-021] records each sent attempt in a bounded number of statements (the outcome without a second read)', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register()
    receiver.respond = (_req, res) => res.writeHead(500).end()
    emit({ type: 'turn.failed', status: 'FAILED' })
    // Counts every statement run through the store from the first attempt to the last outcome.
    const counts = new Map<string, number>()
    const db = mock.deps.db as { stmt: (sql: string) => unknown }
    const stmt = db.stmt.bind(db)
    db.stmt = (sql: string) => {
      counts.set(sql, (counts.get(sql) ?? 0) + 1)
      return stmt(sql)
    }
    await mock.clock.advance(25 * 3600)
    await mock.webhooks.idle()
    db.stmt = stmt
    expect(receiver.received).toHaveLength(MAX_ATTEMPTS)
    expect((await deliveries('?status=FAILED')).items).toHaveLength(1)
    const total = [...counts.values()].reduce((a, b) => a + b, 0)
    const reads = (sql: RegExp) =>
      [...counts].filter(([k]) => sql.test(k)).reduce((a, [, n]) => a + n, 0)
    // The attempt's firing reads its delivery once; its outcome is one UPDATE and the attempt's row.
    expect(reads(/^SELECT \* FROM webhook_deliveries WHERE id = \?$/)).toBe(MAX_ATTEMPTS)
    // Per attempt about 11: the queue read (twice when the retry waits for the send), the timer's delete, the
    // clock's time, the delivery and endpoint reads, the next timer's row, the delivery and attempt writes,
    // then the outcome's UPDATE and attempt row (80 for the 7 attempts; 86 with a seq statement per timer,
    // 93 with a read per outcome as well).
    expect(total).toBeLessThanOrEqual(12 * MAX_ATTEMPTS)
    // The timer seq counter is held by the scheduler: saved once at the end of the advance, not per timer.
    expect(reads(/timer_seq/)).toBeLessThanOrEqual(1)
  })

  it('[WHN-025] records a redirect as a failure and does not follow it', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register()
    receiver.respond = (req, res) => {
      if (req.url === '/hook') res.writeHead(302, { Location: `${receiver.url}/elsewhere` }).end()
      else res.writeHead(200).end()
    }
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received.map((r) => r.url)).toEqual(['/hook'])
    const d = (await deliveries()).items[0]
    expect(d).toMatchObject({
      status: 'PENDING',
      attempts: 1,
      last_http_status: 302,
      last_error_code: 'REDIRECT',
    })
  })

  it('[WHM-011] a changed address cancels waiting deliveries; past events never reach the new address', async () => {
    const { mock, register, emit, call, deliveries } = await setup()
    const { id } = await register()
    receiver.respond = (_req, res) => res.writeHead(503).end()
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received).toHaveLength(1)
    const patched = await call('PATCH', `/webhooks/${id}`, { url: `${receiver.url}/new` })
    expect(patched.status).toBe(200)
    expect(patched.body).not.toHaveProperty('secret')
    receiver.respond = (_req, res) => res.writeHead(200).end()
    await mock.clock.advance(2 * 24 * 3600)
    expect(receiver.received.map((r) => r.url)).toEqual(['/hook'])
    expect((await deliveries()).items[0]).toMatchObject({
      status: 'CANCELED',
      next_attempt_at: null,
    })
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received.map((r) => r.url)).toEqual(['/hook', '/new'])
  })

  it('[WHM-007][WHN-013] signs with the new secret as soon as it is rotated', async () => {
    const { mock, register, emit, call, nowS } = await setup()
    const { id, secret: old } = await register()
    const rotated = await call('POST', `/webhooks/${id}/rotate-secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).not.toBe(old)
    expect(
      Date.parse(rotated.body.previous_secret_expires_at) - Date.parse(rotated.body.rotated_at),
    ).toBe(320_000)
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    const r = receiver.received[0]!
    const header = r.headers['service-signature'] as string
    expect(
      verifySignature({ header, rawBody: r.raw, secrets: [rotated.body.secret], nowS: nowS() }).ok,
    ).toBe(true)
    expect(verifySignature({ header, rawBody: r.raw, secrets: [old], nowS: nowS() }).ok).toBe(false)
    const list = await call('GET', '/webhooks')
    expect(JSON.stringify(list.body)).not.toContain(rotated.body.secret)
  })

  it('[WHM-012][WHN-005][WHN-012][WHN-019][WHM-010] replays the same event bytes with a fresh signature, 10 per minute', async () => {
    const { mock, register, emit, call, deliveries } = await setup()
    await register()
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    const original = (await deliveries()).items[0]
    expect(original.status).toBe('SUCCEEDED')
    await mock.clock.advance(30)
    const executionsBefore = mock.deps.db.stmt('SELECT COUNT(*) AS n FROM executions').get()
    const replay = await call('POST', `/webhook-deliveries/${original.id}/replay`, undefined, {
      'Idempotency-Key': 'r-1',
    })
    expect(replay.status).toBe(202)
    expect(replay.body).toMatchObject({
      event_id: original.event_id,
      status: 'PENDING',
      attempts: 0,
      replay_of: original.id,
    })
    const again = await call('POST', `/webhook-deliveries/${original.id}/replay`, undefined, {
      'Idempotency-Key': 'r-1',
    })
    expect(again.body.id).toBe(replay.body.id)
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received).toHaveLength(2)
    const [a, b] = receiver.received as [Received, Received]
    expect(b.raw.equals(a.raw)).toBe(true)
    expect(b.headers['service-signature']).not.toBe(a.headers['service-signature'])
    expect(mock.deps.db.stmt('SELECT COUNT(*) AS n FROM executions').get()).toEqual(
      executionsBefore,
    )
    for (let i = 2; i <= 10; i++) {
      const r = await call('POST', `/webhook-deliveries/${original.id}/replay`, undefined, {
        'Idempotency-Key': `r-${i}`,
      })
      expect(r.status).toBe(202)
    }
    const limited = await call('POST', `/webhook-deliveries/${original.id}/replay`, undefined, {
      'Idempotency-Key': 'r-11',
    })
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe('RATE_LIMITED')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    await mock.clock.advance(Number(limited.headers.get('retry-after')))
    const later = await call('POST', `/webhook-deliveries/${original.id}/replay`, undefined, {
      'Idempotency-Key': 'r-11',
    })
    expect(later.status).toBe(202)
  })

  it('[WHN-026] resolves and checks the address again on every attempt', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register()
    mock.deps.settings.allowInsecureWebhooks = false
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received).toHaveLength(0)
    expect((await deliveries()).items[0]).toMatchObject({
      last_error_code: 'ADDRESS_REFUSED',
      last_http_status: null,
    })
  })

  it('[WHM-001][WHM-002] keeps at most 10 endpoints and shows the secret only once', async () => {
    const { call, register } = await setup()
    const ids: string[] = []
    for (let i = 0; i < 10; i++) ids.push((await register()).id)
    const over = await call('POST', '/webhooks', { url: `${receiver.url}/hook` })
    expect(over.status).toBe(422)
    expect(over.body.error).toMatchObject({
      code: 'INVALID_INPUT',
      details: { reason: 'webhook endpoint limit (10) reached' },
    })
    const list = await call('GET', '/webhooks')
    expect(list.body.items).toHaveLength(10)
    for (const item of list.body.items) expect(item).not.toHaveProperty('secret')
    expect((await call('DELETE', `/webhooks/${ids[0]}`)).body.status).toBe('DELETED')
    expect((await call('POST', '/webhooks', { url: `${receiver.url}/hook` })).status).toBe(201)
  })
})

/** Starts a Turn (scenario `succeed`: SUCCEEDED 5 s later) in a Project's Deployment through /v1. */
async function startTurn(mock: Mock, key: string, deploymentId: string, idem: string) {
  const res = await mock.app.request(`/v1/deployments/${deploymentId}/sessions`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': idem,
    },
    body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
  })
  expect(res.status).toBe(202)
  const { session_id, turn_id } = (await res.json()) as { session_id: string; turn_id: string }
  return async () => {
    const read = await mock.app.request(`/v1/sessions/${session_id}/turns/${turn_id}`, {
      headers: { Authorization: `Bearer ${key}` },
    })
    return ((await read.json()) as { status: string }).status
  }
}

const PROJECT_C = 'cccccccc-0000-4000-8000-000000000000'
const DEPLOYMENT_C = 'cccccccc-d000-4000-8000-000000000001'

describe('webhook sends and the clock', () => {
  it('a receiver that never answers holds neither the clock advance nor another Project', async () => {
    const { mock, register, emit, deliveries } = await setup()
    // Project A: three endpoints that never answer.
    for (let i = 0; i < 3; i++) await register({ url: `${holding.url}/silent-${i}` })
    // Project C: its own endpoint on a receiver that answers at once, and a Turn.
    const c = mock.fixtures().projects.find((p) => p.id === PROJECT_C)!
    const cHook = await mock.app.request(`/api/runtime/projects/${PROJECT_C}/webhooks`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${c.owner_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/c` }),
    })
    expect(cHook.status).toBe(201)
    emit({ type: 'turn.completed' })
    const cTurn = await startTurn(mock, 'sk_test_c_full', DEPLOYMENT_C, 'c-turn')

    await mock.clock.advance(10)
    // The advance has answered; A's three sends reach the receiver and stay open.
    await until(() => holding.open === 3, "A's three requests open at the silent receiver")
    expect(await cTurn()).toBe('SUCCEEDED')
    // C's notice is delivered and recorded while A's requests are still open.
    await until(() => receiver.received.length === 1, "C's notice received")
    expect(JSON.parse(receiver.received[0]!.raw.toString())).toMatchObject({
      type: 'turn.completed',
    })
    const cDeliveries = async () => {
      const res = await mock.app.request(`/api/runtime/projects/${PROJECT_C}/webhook-deliveries`, {
        headers: { Authorization: `Bearer ${c.owner_token}` },
      })
      return ((await res.json()) as { items: { status: string }[] }).items
    }
    await until(
      async () => (await cDeliveries())[0]?.status === 'SUCCEEDED',
      "C's delivery SUCCEEDED",
    )
    expect(holding.open).toBe(3)
    // A's attempts are recorded as made, their outcome not yet known.
    const a = (await deliveries()).items as {
      status: string
      attempts: number
      history: unknown[]
    }[]
    expect(a).toHaveLength(3)
    for (const d of a) {
      expect(d).toMatchObject({ status: 'PENDING', attempts: 1, last_error_code: null })
      expect(d.history).toEqual([expect.objectContaining({ attempt: 1, http_status: null })])
    }
  })

  it('waits for an attempt still in flight before its retry is due: a late success is not retried', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register({ url: `${holding.url}/slow` })
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await until(() => holding.open === 1, 'first attempt open')
    // The advance reaches the retry's due time while the first attempt is still open...
    const advanced = mock.clock.advance(120)
    await new Promise((r) => setImmediate(r))
    // ...and the receiver then answers 2xx: the delivery succeeded, nothing is retried.
    holding.answer(0, 204)
    await advanced
    expect(holding.held).toHaveLength(1)
    expect((await deliveries()).items[0]).toMatchObject({
      status: 'SUCCEEDED',
      attempts: 1,
      last_http_status: 204,
      next_attempt_at: null,
    })
  })

  it('records a late failure and still retries 60 s after the first attempt', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register({ url: `${holding.url}/slow` })
    emit({ type: 'turn.failed', status: 'FAILED' })
    await mock.clock.advance(1)
    await until(() => holding.open === 1, 'first attempt open')
    const first = sigTime(holding.held[0]!.headers)
    await mock.clock.advance(30)
    holding.answer(0, 500)
    await until(
      async () => (await deliveries()).items[0].last_http_status === 500,
      'late failure recorded',
    )
    await mock.clock.advance(60)
    await until(() => holding.held.length === 2, 'retry sent')
    expect(sigTime(holding.held[1]!.headers) - first).toBe(RETRY_OFFSETS_S[0])
    holding.answer(1, 200)
    await mock.webhooks.idle()
    const d = (await deliveries()).items[0]
    expect(d).toMatchObject({ status: 'SUCCEEDED', attempts: 2 })
    expect(d.history.map((h: { http_status: number | null }) => h.http_status)).toEqual([500, 200])
  })

  it('settles a delivery whose send was cut by a stop: the --db store reopens and retries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mock-webhook-crash-'))
    try {
      const db = join(dir, 'state.db')
      const first = await setup({ db })
      await first.register({ url: `${holding.url}/slow` })
      first.emit({ type: 'turn.completed' })
      await first.mock.clock.advance(1)
      await until(() => holding.open === 1, 'first attempt open')
      // Stopped mid-send: the outcome is never recorded.
      open.splice(open.indexOf(first.mock), 1)
      first.mock.close()
      const again = await setup({ db })
      const before = (await again.deliveries()).items[0]
      expect(before).toMatchObject({ status: 'PENDING', attempts: 1, last_error_code: null })
      await again.mock.clock.advance(120)
      await until(() => holding.held.length === 2, 'retry sent after the reopen')
      holding.answer(1, 204)
      await again.mock.webhooks.idle()
      expect((await again.deliveries()).items[0]).toMatchObject({
        status: 'SUCCEEDED',
        attempts: 2,
      })
      again.mock.close()
      open.splice(open.indexOf(again.mock), 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it(
    '[WHN-021] rehearses retries at scale: 10 failing endpoints and several Turns, advanced through the last retry',
    { timeout: 60_000 },
    async () => {
      // The README's rehearsal, scaled down with a lower guard: 40 deliveries of 7 attempts are far more firings
      // than the limit in all, but never that many at one virtual instant.
      const { mock, register, deliveries } = await setup({ loopLimit: 100, rateLimits: false })
      receiver.respond = (_req, res) => res.writeHead(500).end()
      for (let i = 0; i < 10; i++) await register({ url: `${receiver.url}/fail-${i}` })
      for (let i = 0; i < 4; i++)
        await startTurn(mock, 'sk_test_a_full', 'aaaaaaaa-d000-4000-8000-000000000001', `r-${i}`)
      const res = await mock.app.request('/_mock/clock/advance', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ seconds: 86400 + 3600 }),
      })
      expect(res.status, await res.clone().text()).toBe(200)
      // The last attempts' outcomes were awaited by their safety timers, inside the advance.
      expect(receiver.received).toHaveLength(40 * 7)
      const failed = await deliveries('?status=FAILED&limit=100')
      expect(failed.items).toHaveLength(40)
      for (const d of failed.items) expect(d).toMatchObject({ attempts: 7, last_http_status: 500 })
    },
  )
})

describe('sender', () => {
  it('[WHN-027] gives up after the send limit (here shortened) with TIMEOUT', async () => {
    receiver.respond = () => undefined // never answers
    const outcome = await sendNotification({
      url: `${receiver.url}/slow`,
      body: Buffer.from('{}'),
      headers: {},
      allowInsecure: true,
      timeoutMs: 200,
    })
    expect(outcome).toEqual({ ok: false, httpStatus: null, errorCode: 'TIMEOUT' })
  })

  it('reports a refused connection as CONNECTION_ERROR', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    await new Promise<void>((resolve) => server.close(() => resolve()))
    const outcome = await sendNotification({
      url: `http://127.0.0.1:${port}/`,
      body: Buffer.from('{}'),
      headers: {},
      allowInsecure: true,
      timeoutMs: 5000,
    })
    expect(outcome).toEqual({ ok: false, httpStatus: null, errorCode: 'CONNECTION_ERROR' })
  })

  it('[WHN-026] posts to the address as registered: its path and query, through kept-alive connections too', async () => {
    receiver.respond = (_req, res) => res.writeHead(204).end()
    const connections = new WebhookConnections()
    try {
      for (const kept of [undefined, connections, connections]) {
        const outcome = await sendNotification({
          url: `${receiver.url}/in/a%20path?topic=runs&x=1`,
          body: Buffer.from('{}'),
          headers: {},
          allowInsecure: true,
          connections: kept,
        })
        expect(outcome).toEqual({ ok: true, httpStatus: 204, errorCode: null })
      }
      expect(receiver.received.map((r) => r.url)).toEqual(
        Array(3).fill('/in/a%20path?topic=runs&x=1'),
      )
    } finally {
      connections.destroy()
    }
  })

  it('[WHN-024] refuses http:// and loopback without the insecure flag', async () => {
    for (const url of [`${receiver.url}/x`, 'https://127.0.0.1:1/x', 'https://localhost:1/x']) {
      expect(
        await sendNotification({ url, body: Buffer.from('{}'), headers: {}, allowInsecure: false }),
      ).toEqual({ ok: false, httpStatus: null, errorCode: 'ADDRESS_REFUSED' })
    }
  })
})

describe('webhook fault rules', () => {
  it('[WHN-014] duplicates a notice: the receiver gets one event_id and body twice', async () => {
    const { mock, register, emit, deliveries } = await setup()
    await register()
    mock.faults.add({
      match: { event_type: 'turn.completed' },
      action: { webhook: 'duplicate' },
      times: 1,
    })
    const event = emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    expect(receiver.received).toHaveLength(2)
    expect(receiver.received[0]!.raw.equals(receiver.received[1]!.raw)).toBe(true)
    const body = JSON.parse(receiver.received[0]!.raw.toString('utf8')) as { event_id: string }
    expect(body.event_id).toBe(event.event_id)
    expect((await deliveries()).items).toHaveLength(2)
  })

  it('[WHN-017] delivers a late progress notice after the completion', async () => {
    const { mock, register, emit } = await setup()
    await register({ event_types: ['turn.progress', 'turn.completed'] })
    mock.faults.add({
      match: { event_type: 'turn.progress' },
      action: { webhook: 'late', delay_s: 30 },
    })
    emit({ type: 'turn.progress', status: 'RUNNING', data: { kind: 'PROGRESS' } as never })
    emit({ type: 'turn.completed' })
    await mock.clock.advance(1)
    await mock.webhooks.idle()
    await mock.clock.advance(60)
    await mock.webhooks.idle()
    const types = receiver.received.map(
      (r) => (JSON.parse(r.raw.toString('utf8')) as { type: string }).type,
    )
    expect(types).toEqual(['turn.completed', 'turn.progress'])
  })
})

describe('forward-compatibility rehearsal', () => {
  it('[VER-003] sends the unknown event type to every endpoint, signed like any notice', async () => {
    const { mock, register, nowS } = await setup({ forwardCompat: true, rateLimits: false })
    const { secret } = await register()
    const created = await mock.app.request(
      '/v1/deployments/aaaaaaaa-d000-4000-8000-000000000001/sessions',
      {
        method: 'POST',
        headers: {
          Authorization: 'Bearer sk_test_a_full',
          'Content-Type': 'application/json',
          'Idempotency-Key': 'fc-webhook',
        },
        body: JSON.stringify({ input: [{ type: 'TEXT', text: 'hello' }] }),
      },
    )
    expect(created.status).toBe(202)
    await mock.clock.advance(10)
    await mock.webhooks.idle()
    const types = receiver.received.map(
      (r) => (JSON.parse(r.raw.toString('utf8')) as { type: string }).type,
    )
    expect(types).toContain('turn.insight')
    expect(types).toContain('turn.completed')
    const insight = receiver.received[types.indexOf('turn.insight')]!
    expect(
      verifySignature({
        header: insight.headers['service-signature'] as string,
        rawBody: insight.raw,
        secrets: [secret],
        nowS: nowS(),
      }).ok,
    ).toBe(true)
  })
})
