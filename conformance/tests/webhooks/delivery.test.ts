/**
 * Webhook notifications, received by a real HTTP receiver on 127.0.0.1: a Turn runs on the virtual clock and
 * its notice arrives signed; retries follow the documented schedule to FAILED; redirects fail; a change of
 * address cancels waiting deliveries; a replay resends the same event. Needs an in-process mock started with
 * allowInsecureWebhooks (a receiver on 127.0.0.1 is not a public HTTPS address), so mock only.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it, type TestContext } from 'vitest'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { createSession, type SessionReceipt } from '../../support/session-create.js'
import { assumedRule, loopbackReceiver, role } from '../../support/skip.js'
import { Deduplicator, verifySignature } from '../../support/target.js'
import { useTarget } from '../../support/use-target.js'
import {
  answer,
  documentVerifies,
  signatureTime,
  SIGNATURE_SHAPE,
  useTestReceiver,
  type Delivery,
} from './receiver.js'

const target = useTarget({ allowInsecureWebhooks: true })
const receiver = useTestReceiver()
afterEach(() => {
  receiver.reset()
})

type Endpoint = { id: string; secret: string; url: string }
type DeliveryRecord = {
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  last_http_status: number | null
  last_error_code: string | null
  next_attempt_at: string | null
}

/** The receiver needs http://127.0.0.1, which only an in-process mock with the insecure flag accepts. */
function needsLocalReceiver(ctx: TestContext): { owner: string } {
  loopbackReceiver(ctx, target)
  return { owner: role(ctx, target.world.ownerToken, 'owner login token') }
}

const base = () => `/api/runtime/projects/${target.world.projectId}`

async function register(owner: string, body: Record<string, unknown> = {}): Promise<Endpoint> {
  const res = await target.api.post(
    `${base()}/webhooks`,
    { url: `${receiver.baseUrl}/hook`, ...body },
    { key: owner },
  )
  expect(res.status, res.text).toBe(201)
  return res.body as Endpoint
}

const MARKER = 'confidential-input-7f3a'

/** Creates a Session whose first Turn runs the default `succeed` scenario; returns its receipt. */
async function startTurn(): Promise<SessionReceipt> {
  const res = await createSession(target, {
    input: [{ type: 'TEXT', text: `Summarize ${MARKER}` }],
  })
  expect(res.status, res.text).toBe(202)
  return res.body as SessionReceipt
}

const nowS = async () => Math.floor(Date.parse((await target.control!.clock()).now) / 1000)

async function deliveries(
  owner: string,
  query: Record<string, string> = {},
): Promise<DeliveryRecord[]> {
  const res = await target.api.get(`${base()}/webhook-deliveries`, { key: owner, query })
  expect(res.status, res.text).toBe(200)
  return (res.body as { items: DeliveryRecord[] }).items
}

const ofType = (type: string) => (d: Delivery) => d.json?.type === type

async function readTurn(receipt: SessionReceipt): Promise<ApiResponse> {
  return target.api.get(receipt.status_url, { key: target.world.keys.full })
}

describe('webhook delivery', () => {
  it(`${req('WHN-001', 'WHN-002', 'WHN-003', 'WHN-004', 'WHN-006', 'WHN-007', 'WHN-008', 'WHN-009', 'AUTH-012')} sends a signed turn.completed that the receiver kit verifies`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    const endpoint = await register(owner)
    const receipt = await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    const notice = receiver.received.find(ofType('turn.completed'))
    expect(notice, JSON.stringify(receiver.received.map((d) => d.json))).toBeDefined()
    const d = notice!
    // AUTH-012: no bearer key, a Service-Signature header instead.
    expect(d.method).toBe('POST')
    expect(d.headers.authorization).toBeUndefined()
    const header = d.headers['service-signature'] as string
    expect(header).toMatch(SIGNATURE_SHAPE)
    const now = await nowS()
    expect(await documentVerifies(d, endpoint.secret, now)).toBe(true)
    expect(
      verifySignature({ header, rawBody: d.raw, secrets: [endpoint.secret], nowS: now }),
    ).toEqual({
      ok: true,
      t: signatureTime(header),
    })
    expect(new Deduplicator().seen(String(d.json!.event_id), d.raw)).toBe('new')
    // WHN-003, WHN-004, WHN-007
    expect(d.raw.byteLength).toBeLessThanOrEqual(4096)
    const body = d.json!
    expect(body).toMatchObject({
      type: 'turn.completed',
      session_id: receipt.session_id,
      turn_id: receipt.turn_id,
      status: 'SUCCEEDED',
    })
    expect(body.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(typeof body.aggregate_kind).toBe('string')
    expect(Number.isInteger(body.sequence)).toBe(true)
    expect(Number.isNaN(Date.parse(String(body.occurred_at)))).toBe(false)
    // WHN-006: relative paths that need authentication.
    for (const field of ['status_url', 'outputs_url']) {
      const path = String(body[field])
      expect(path.startsWith('/'), field).toBe(true)
      expectError(await target.api.get(path), 'INVALID_API_KEY')
      expect((await target.api.get(path, { key: target.world.keys.full })).status).toBe(200)
    }
    const turn = await readTurn(receipt)
    expect((turn.body as { status: string }).status).toBe(body.status)
    // WHN-002: no raw input, result, file or download address.
    const text = d.raw.toString('utf8')
    expect(text).not.toContain(MARKER)
    expect(text).not.toMatch(/https?:\/\//)
    expect(text).not.toContain('/content?token=')
  })

  it(`${req('WHM-004')} sends the default set without progress or message events`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    await register(owner)
    await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    await target.control!.advance(1)
    expect(receiver.received.map((d) => d.json?.type)).toEqual(['turn.completed'])
  })

  it(`${req('WHN-021', 'WHN-022', 'WHN-023', 'WHN-028', 'WHN-012')} retries 1 min, 5 min, 30 min, 2 h, 8 h and 24 h after the first attempt, then FAILED`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    const endpoint = await register(owner)
    const bodyMarker = `receiver-body-${randomUUID()}`
    receiver.respond = answer(500, bodyMarker)
    const receipt = await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    const first = signatureTime(receiver.received[0]!.headers['service-signature'] as string)
    // Cumulative offsets after the first attempt: 60, 300, 1800, 7200, 28800, 86400 seconds.
    const offsets = [60, 300, 1800, 7200, 28800, 86400]
    for (const [i, offset] of offsets.entries()) {
      // Just before the retry is due nothing is sent...
      const due = first + offset
      await target.control!.advance(due - 1 - (await nowS()))
      expect(receiver.received, `before retry ${i + 1}`).toHaveLength(i + 1)
      // ...and at the due second it is.
      await target.control!.advance(1)
      await receiver.waitFor(i + 2)
    }
    await target.control!.advance(3 * 24 * 3600)
    expect(receiver.received).toHaveLength(7)
    const times = receiver.received.map((d) =>
      signatureTime(d.headers['service-signature'] as string),
    )
    expect(times.map((t) => t - first)).toEqual([0, ...offsets])
    // WHN-012: a fresh signature on every attempt, over the same bytes.
    expect(new Set(receiver.received.map((d) => d.headers['service-signature'])).size).toBe(7)
    for (const d of receiver.received) {
      expect(d.raw.equals(receiver.received[0]!.raw)).toBe(true)
      expect(
        await documentVerifies(
          d,
          endpoint.secret,
          signatureTime(d.headers['service-signature'] as string),
        ),
      ).toBe(true)
    }
    const all = await deliveries(owner)
    expect(all).toHaveLength(1)
    const failed = all[0]!
    expect(failed).toMatchObject({
      status: 'FAILED',
      event_type: 'turn.completed',
      last_http_status: 500,
    })
    expect(failed.last_error_code).toMatch(/^[A-Z][A-Z0-9_]*$/)
    expect(JSON.stringify(all)).not.toContain(bodyMarker)
    assumedRule(
      ctx,
      target,
      'attempts, next_attempt_at and the status filter of the delivery record',
    )
    expect(failed).toMatchObject({ attempts: 7, next_attempt_at: null })
    expect((await deliveries(owner, { status: 'FAILED' })).map((d) => d.id)).toEqual([failed.id])
    // WHN-023: the Turn's result status is unchanged.
    expect((await readTurn(receipt)).body).toMatchObject({ status: 'SUCCEEDED' })
  })

  it(`${req('WHN-025')} records a redirect as a failed attempt and does not follow it`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    await register(owner)
    receiver.respond = (req, res) => {
      if (req.url === '/hook') res.writeHead(307, { Location: `${receiver.baseUrl}/moved` }).end()
      else res.writeHead(200).end()
    }
    await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    await target.control!.advance(1)
    expect(receiver.received.map((d) => d.path)).toEqual(['/hook'])
    // The attempt's outcome is recorded when the receiver's answer arrives: poll for it (bounded).
    let [d] = await deliveries(owner)
    for (let i = 0; i < 100 && d?.last_http_status == null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      ;[d] = await deliveries(owner)
    }
    expect(d).toMatchObject({ last_http_status: 307 })
    expect(d!.status).not.toBe('SUCCEEDED')
    expect(d!.last_error_code).toMatch(/^[A-Z][A-Z0-9_]*$/)
  })

  it(`${req('WHM-011')} a changed address cancels waiting deliveries; past events never reach the new address`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    assumedRule(ctx, target, 'updateWebhookEndpoint is an assumed path')
    const endpoint = await register(owner)
    receiver.respond = answer(503)
    await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    const patched = await target.api.patch(
      `${base()}/webhooks/${endpoint.id}`,
      { url: `${receiver.baseUrl}/new-address` },
      { key: owner },
    )
    expect(patched.status, patched.text).toBe(200)
    receiver.respond = answer(200)
    await target.control!.advance(2 * 24 * 3600)
    expect(receiver.received.map((d) => d.path)).toEqual(['/hook'])
    const [d] = await deliveries(owner)
    expect(d!.status).not.toBe('PENDING')
    expect(d!.status).not.toBe('SUCCEEDED')
  })

  it(`${req('WHN-013', 'WHM-007')} signs with the new secret after a rotation; a receiver holding both verifies`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    const endpoint = await register(owner)
    const rotated = await target.api.post(
      `${base()}/webhooks/${endpoint.id}/rotate-secret`,
      undefined,
      {
        key: owner,
      },
    )
    expect(rotated.status, rotated.text).toBe(200)
    const secret = (rotated.body as Endpoint).secret
    await startTurn()
    await target.control!.advance(10)
    const [d] = await receiver.waitFor(1)
    const header = d!.headers['service-signature'] as string
    const now = await nowS()
    expect(await documentVerifies(d!, secret, now)).toBe(true)
    expect(
      verifySignature({ header, rawBody: d!.raw, secrets: [endpoint.secret, secret], nowS: now })
        .ok,
    ).toBe(true)
  })

  it(`${req('WHM-012', 'WHN-005', 'WHN-012', 'WHN-019')} a replay resends the same event_id and bytes with a fresh signature and reruns nothing`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    const endpoint = await register(owner)
    const receipt = await startTurn()
    await target.control!.advance(10)
    const [original] = await receiver.waitFor(1)
    const turnBefore = (await readTurn(receipt)).body
    const [record] = await deliveries(owner)
    await target.control!.advance(90)
    const replay = await target.api.post(
      `${base()}/webhook-deliveries/${record!.id}/replay`,
      undefined,
      {
        key: owner,
        idem: randomUUID(),
      },
    )
    expect(replay.status, replay.text).toBe(202)
    await target.control!.advance(1)
    const [, again] = await receiver.waitFor(2)
    expect(again!.json!.event_id).toBe(original!.json!.event_id)
    expect(again!.raw.equals(original!.raw)).toBe(true)
    const t1 = signatureTime(original!.headers['service-signature'] as string)
    const t2 = signatureTime(again!.headers['service-signature'] as string)
    expect(t2).toBeGreaterThan(t1)
    expect(await documentVerifies(again!, endpoint.secret, await nowS())).toBe(true)
    // A receiver's dedup sees a duplicate (2xx), never a conflict.
    const dedup = new Deduplicator()
    expect(dedup.seen(String(original!.json!.event_id), original!.raw)).toBe('new')
    expect(dedup.seen(String(again!.json!.event_id), again!.raw)).toBe('duplicate')
    // WHN-019: the execution is not rerun.
    expect((await readTurn(receipt)).body).toEqual(turnBefore)
    expect(receiver.received.filter(ofType('turn.completed'))).toHaveLength(2)
  })

  it(`${req('WHM-010')} accepts at most 10 replays per minute per Project, then 429 RATE_LIMITED`, async (ctx) => {
    const { owner } = needsLocalReceiver(ctx)
    await register(owner)
    await startTurn()
    await target.control!.advance(10)
    await receiver.waitFor(1)
    const [record] = await deliveries(owner)
    const replay = () =>
      target.api.post(`${base()}/webhook-deliveries/${record!.id}/replay`, undefined, {
        key: owner,
        idem: randomUUID(),
      })
    for (let i = 0; i < 10; i++) expect((await replay()).status).toBe(202)
    const limited = await replay()
    expectError(limited, 'RATE_LIMITED')
    const wait = Number(limited.headers['retry-after'])
    expect(wait).toBeGreaterThan(0)
    expect(wait).toBeLessThanOrEqual(60)
    await target.control!.advance(wait)
    expect((await replay()).status).toBe(202)
  })
})
