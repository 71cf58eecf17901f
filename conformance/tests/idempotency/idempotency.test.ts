/**
 * Idempotency of Session creation (Endpoints; Errors > Codes; Retry rules 3; Limits > Sizes and counts and
 * Retention): the Idempotency-Key header is required and 1 to 256 bytes; the same key and body return the same
 * receipt without a new execution; the same key with another body is IDEMPOTENCY_CONFLICT; the receipt is
 * kept at least 24 hours (idempotency_expires_at) and until the Turn ends.
 */
import { request as httpRequest } from 'node:http'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { smallSessionBody, sessionBody, type SessionBody } from '../../arbitraries/bodies.js'
import {
  IDEMPOTENCY_KEY_BYTES,
  idempotencyKey,
  idempotencyKeyOfBytes,
  invalidIdempotencyKey,
  utf8HeaderValue,
} from '../../arbitraries/headers.js'
import { mockChoice } from '../../support/assertions.js'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { retryRateLimited } from '../../support/pace.js'
import { req } from '../../support/req.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import { waitUntilEnded } from '../../support/poll.js'
import { mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

/**
 * Session creation with node:http and a Buffer body, so the key's bytes reach the wire as they are: supertest
 * serializes every body to a string, and Node writes headers that share a chunk with a string body in that
 * body's encoding (UTF-8), which would double the bytes of a non-ASCII key.
 */
function rawCreate(
  idem: string,
  body: unknown,
): Promise<{ status: number; text: string; retryAfter?: string }> {
  const url = new URL(
    `${target.baseUrl}/v1/deployments/${target.world.deployments.active}/sessions`,
  )
  const payload = Buffer.from(JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${target.world.keys.full}`,
          'Idempotency-Key': idem,
          'Content-Type': 'application/json',
          'Content-Length': payload.length,
        },
      },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => (text += chunk))
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text,
            retryAfter: res.headers['retry-after'],
          }),
        )
      },
    )
    r.on('error', reject)
    r.end(payload)
  })
}
const target = useTarget()

const DAY_MS = 24 * 60 * 60 * 1000
const TERMINAL = ['SUCCEEDED', 'FAILED', 'CANCELED', 'EXPIRED']

const receiptOf = (res: ApiResponse): SessionReceipt => {
  expect(res.status, res.text.slice(0, 300)).toBe(202)
  return res.body as SessionReceipt
}

/** One body per key, so a key that repeats across runs (short random keys) is a replay, never a conflict. */
const bodyForKey = (key: string): SessionBody => smallSessionBody(`key ${key}`)

/** Another valid body: the first TEXT item changed. */
const otherBody = (body: SessionBody): SessionBody => ({
  ...body,
  input: [{ type: 'TEXT', text: `${body.input[0]!.text} (changed)` }, ...body.input.slice(1)],
})

async function readTurn(receipt: SessionReceipt): Promise<{ status: string; created_at: string }> {
  const res = await retryRateLimited(target, () =>
    target.api.get(receipt.status_url, { key: target.world.keys.full }),
  )
  expect(res.status, res.text.slice(0, 300)).toBe(200)
  return res.body as { status: string; created_at: string }
}

describe('Idempotency-Key', () => {
  it(`${req('EP-006', 'ERR-040')} answers INVALID_IDEMPOTENCY_KEY to a Session creation without the header`, async () => {
    const res = await createSession(target, smallSessionBody('no key'), { idem: null })
    expectError(res, 'INVALID_IDEMPOTENCY_KEY')
  })

  it(`${req('SIZE-003', 'ERR-040')} answers INVALID_IDEMPOTENCY_KEY to a key of 0 bytes or of 257 bytes`, async () => {
    for (const idem of ['', idempotencyKeyOfBytes(IDEMPOTENCY_KEY_BYTES.max + 1)]) {
      const res = await createSession(target, smallSessionBody('bad key'), { idem })
      expectError(res, 'INVALID_IDEMPOTENCY_KEY')
    }
  })

  it(`${req('SIZE-003')} accepts keys of 1 byte and of 256 bytes`, async () => {
    for (const bytes of [IDEMPOTENCY_KEY_BYTES.min, IDEMPOTENCY_KEY_BYTES.max]) {
      const idem = idempotencyKeyOfBytes(bytes)
      receiptOf(await createSession(target, bodyForKey(idem), { idem }))
    }
  })

  it(`${req('SIZE-003')} accepts every key of 1 to 256 bytes`, async () => {
    await fc.assert(
      fc.asyncProperty(idempotencyKey(), async (idem) => {
        // Each run starts from a fresh world where the target allows it: budgets and call rates are other rules.
        await target.fresh()
        receiptOf(await createSession(target, bodyForKey(idem), { idem }))
      }),
      fcParams(),
    )
  })

  it(`${req('SIZE-003', 'ERR-040')} answers INVALID_IDEMPOTENCY_KEY to every key outside 1 to 256 bytes`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    await fc.assert(
      fc.asyncProperty(invalidIdempotencyKey(), async (idem) => {
        const res = await createSession(target, bodyForKey(idem), { idem })
        expectError(res, 'INVALID_IDEMPOTENCY_KEY')
      }),
      fcParams(),
    )
  })

  // The document gives the key's length in bytes (1 to 256) and does not say whether bytes outside ASCII are
  // accepted: a target may refuse them (INVALID_IDEMPOTENCY_KEY); the mock accepts them.
  it(`${req('SIZE-003')} counts the key in UTF-8 bytes: 128 two-byte characters (256 bytes) are within the length, accepted or refused as a key problem`, async (ctx) => {
    const idem = utf8HeaderValue('é'.repeat(128))
    expect(Buffer.byteLength(idem, 'latin1')).toBe(IDEMPOTENCY_KEY_BYTES.max)
    let res = await rawCreate(idem, smallSessionBody('utf-8 key'))
    // A busy target (429: call rate or concurrency, retryable) is waited for, as the retry rules say.
    for (let i = 0; i < 5 && res.status === 429; i++) {
      const seconds = Math.min(10, Math.max(1, Number(res.retryAfter ?? 1)))
      if (target.control) await target.control.advance(seconds)
      else await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
      res = await rawCreate(idem, smallSessionBody('utf-8 key'))
    }
    if (res.status === 429) ctx.skip('the target stayed busy (429) for the Session creation')
    if (res.status !== 202) {
      // Refused: as a problem of the key or the request, never as a server fault.
      const code = (JSON.parse(res.text) as { error?: { code?: string } }).error?.code
      expect(['INVALID_IDEMPOTENCY_KEY', 'INVALID_INPUT'], res.text).toContain(code)
    }
    await mockChoice(
      target,
      'not shown: an Idempotency-Key with bytes outside ASCII is accepted',
      () => {
        expect(res.status, res.text).toBe(202)
      },
    )
  })

  it(`${req('SIZE-003', 'ERR-040')} counts the key in UTF-8 bytes: 86 three-byte characters (258 bytes) are refused`, async () => {
    const idem = utf8HeaderValue('日'.repeat(86))
    expect(Buffer.byteLength(idem, 'latin1')).toBe(258)
    const res = await rawCreate(idem, smallSessionBody('utf-8 key'))
    expect(res.status).toBe(422)
    expect(JSON.parse(res.text).error.code).toBe('INVALID_IDEMPOTENCY_KEY')
  })

  it(`${req('IDEM-001')} returns the same receipt to the same key and body`, async () => {
    await fc.assert(
      fc.asyncProperty(sessionBody(), async (body) => {
        // Each run starts from a fresh world where the target allows it: budgets and call rates are other rules.
        await target.fresh()
        const idem = newIdempotencyKey('same')
        const first = receiptOf(await createSession(target, body, { idem }))
        const again = receiptOf(await createSession(target, body, { idem }))
        expect(again).toEqual(first)
      }),
      fcParams({ numRuns: 10 }),
    )
  })

  it(`${req('IDEM-001')} creates one Session for five concurrent requests with one key and body`, async () => {
    const idem = newIdempotencyKey('concurrent')
    const body = smallSessionBody(idem)
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => createSession(target, body, { idem })),
    )
    // A duplicate in flight may be told to resend (a retryable error); resending gives the same receipt.
    const settled = await Promise.all(
      answers.map(async (res) => {
        if (res.status === 202) return res
        const error = (res.body as { error: { retryable: boolean } }).error
        expect(error.retryable, res.text.slice(0, 300)).toBe(true)
        return createSession(target, body, { idem })
      }),
    )
    const receipts = settled.map(receiptOf)
    expect(new Set(receipts.map((r) => r.session_id)).size).toBe(1)
    expect(new Set(receipts.map((r) => r.turn_id)).size).toBe(1)
    for (const r of receipts) expect(r).toEqual(receipts[0])
  })

  it(`${req('IDEM-001')} starts no execution for a replay: the next new Session takes the scenario queued after the first`, async (ctx) => {
    const control = mockOnly(ctx, target, 'counts executions by the scenarios they take')
    const deployment = target.world.deployments.active
    const idem = newIdempotencyKey('no-new-work')
    const body = smallSessionBody(idem)
    await control.queueScenario(deployment, 'succeed')
    receiptOf(await createSession(target, body, { idem }))
    // The next execution of the Deployment takes `fail`: a replay that ran the work again would take it.
    await control.queueScenario(deployment, 'fail')
    for (let i = 0; i < 3; i++) receiptOf(await createSession(target, body, { idem }))
    const next = receiptOf(await createSession(target, smallSessionBody('next'), {}))
    await control.advance(5)
    const turn = await target.api.get(`/v1/sessions/${next.session_id}/turns/${next.turn_id}`, {
      key: target.world.keys.full,
    })
    expect((turn.body as { status: string }).status, turn.text).toBe('FAILED')
  })

  it(`${req('IDEM-002', 'ERR-041')} answers IDEMPOTENCY_CONFLICT to the same key with another body`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-004')
    await fc.assert(
      fc.asyncProperty(sessionBody(), async (body) => {
        // Each run starts from a fresh world where the target allows it: budgets and call rates are other rules.
        await target.fresh()
        const idem = newIdempotencyKey('conflict')
        receiptOf(await createSession(target, body, { idem }))
        expectError(await createSession(target, otherBody(body), { idem }), 'IDEMPOTENCY_CONFLICT')
      }),
      fcParams({ numRuns: 10 }),
    )
  })

  it(`${req('IDEM-001', 'IDEM-002')} still replays the original receipt after a conflicting request`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-004')
    const idem = newIdempotencyKey('after-conflict')
    const body = smallSessionBody(idem)
    const first = receiptOf(await createSession(target, body, { idem }))
    expectError(await createSession(target, otherBody(body), { idem }), 'IDEMPOTENCY_CONFLICT')
    expect(receiptOf(await createSession(target, body, { idem }))).toEqual(first)
  })

  it(`${req('RET-001')} sets idempotency_expires_at at least 24 hours after acceptance`, async () => {
    const receipt = receiptOf(await createSession(target, smallSessionBody('expiry')))
    const accepted = Date.parse((await readTurn(receipt)).created_at)
    const expires = Date.parse(receipt.idempotency_expires_at)
    expect(Number.isNaN(expires)).toBe(false)
    expect(expires - accepted).toBeGreaterThanOrEqual(DAY_MS)
  })

  it(`${req('IDEM-008', 'RET-002')} returns the receipt again after the Turn has ended`, async (ctx) => {
    const idem = newIdempotencyKey('ended')
    const body = smallSessionBody(idem)
    const first = receiptOf(await createSession(target, body, { idem }))
    // A mock ends the Turn on virtual time; a real one is polled until it ends.
    const status = await waitUntilEnded(target, first.status_url, { mockAdvanceS: 600 })
    if (status === 'REQUIRES_ACTION') ctx.skip('the Turn stopped at REQUIRES_ACTION')
    expect(TERMINAL).toContain(status)
    expect(receiptOf(await createSession(target, body, { idem }))).toEqual(first)
  })

  it(`${req('RET-002')} returns the receipt again just before idempotency_expires_at`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-004')
    const control = mockOnly(ctx, target, 'needs virtual time')
    const idem = newIdempotencyKey('before-expiry')
    const body = smallSessionBody(idem)
    const first = receiptOf(await createSession(target, body, { idem }))
    const now = Date.parse((await control.clock()).now)
    await control.advance((Date.parse(first.idempotency_expires_at) - now) / 1000 - 1)
    expect(receiptOf(await createSession(target, body, { idem }))).toEqual(first)
    expectError(await createSession(target, otherBody(body), { idem }), 'IDEMPOTENCY_CONFLICT')
  })

  it(`${req('RET-001', 'RET-002')} lets the key create a new Session once idempotency_expires_at has passed and the Turn has ended`, async (ctx) => {
    const control = mockOnly(ctx, target, 'needs virtual time')
    const idem = newIdempotencyKey('expired')
    const body = smallSessionBody(idem)
    const first = receiptOf(await createSession(target, body, { idem }))
    const now = Date.parse((await control.clock()).now)
    await control.advance((Date.parse(first.idempotency_expires_at) - now) / 1000 + 1)
    expect(TERMINAL).toContain((await readTurn(first)).status)
    const next = receiptOf(await createSession(target, otherBody(body), { idem }))
    expect(next.session_id).not.toBe(first.session_id)
    expect(next.turn_id).not.toBe(first.turn_id)
  })
})
