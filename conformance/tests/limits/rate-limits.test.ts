/**
 * Limits > Call rates: Accept class 10 per minute (Session, Turn and Run creation, uploads), Read class 60 per
 * minute (everything else), applied separately per key, per Project and per Deployment, lower limits possible
 * on a key or Deployment; 429 RATE_LIMITED with Retry-After and details.reset_at. The exact counts need fresh
 * counters (target.fresh()), so they run on a mock target; on any target, a real one included, a burst
 * shows the limit: whatever the window's shape (fixed minutes or sliding) and whatever the run spent before,
 * 2n+1 calls of a class sent within one minute hold n+1 in one window, so one of them must be refused.
 */
import { describe, expect, it } from 'vitest'
import { idempotencyKeyOfBytes } from '../../arbitraries/headers.js'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import { createSession, newIdempotencyKey } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const READ_PER_MINUTE = 60
const ACCEPT_PER_MINUTE = 10

/** Sends `n` requests in a row; each must succeed with `status`. */
async function succeedTimes(n: number, send: () => Promise<ApiResponse>, status = 200) {
  for (let i = 1; i <= n; i++) {
    const res = await send()
    expect(res.status, `request ${i} of ${n}: ${res.text.slice(0, 200)}`).toBe(status)
  }
}

/** Sends until the first 429 (at most `max`); returns how many succeeded before it and the 429. */
async function untilLimited(send: () => Promise<ApiResponse>, max = READ_PER_MINUTE + 5) {
  for (let ok = 0; ok <= max; ok++) {
    const res = await send()
    if (res.status === 429) return { ok, res }
    expect(res.status, res.text.slice(0, 200)).toBeLessThan(300)
  }
  throw new Error(`no 429 within ${max + 1} requests`)
}

const upload = (key: string) =>
  target.api.upload(
    '/v1/files',
    { content: 'rate\n', filename: 'rate.txt', contentType: 'text/plain' },
    { key, idem: idempotencyKeyOfBytes(40) },
  )

/** The target's time in ms: the mock's virtual clock, or the wall clock of a real target. */
async function targetNow(): Promise<number> {
  return target.control ? Date.parse((await target.control.clock()).now) : Date.now()
}

/**
 * Sends calls of one class until the first 429, at most 2n+1 of them (n: the document's limit per minute);
 * returns the 429. Skips as inconclusive when the calls took a minute or more (a slow target: the burst
 * could have spread over windows without breaking the rule).
 */
async function burstUntilLimited(
  ctx: { skip(note: string): never },
  perMinute: number,
  send: () => Promise<ApiResponse>,
  ok: number,
): Promise<ApiResponse> {
  const started = await targetNow()
  for (let i = 1; i <= 2 * perMinute + 1; i++) {
    const res = await send()
    if (res.status === 429) return res
    expect(res.status, `call ${i}: ${res.text.slice(0, 200)}`).toBe(ok)
  }
  if ((await targetNow()) - started >= 60_000)
    ctx.skip('inconclusive: the burst took a minute or more on this target')
  throw new Error(`${2 * perMinute + 1} calls of one class within a minute and none was refused`)
}

describe('call rates on any target (a burst)', () => {
  it(`${req('RATE-002', 'RATE-005')} refuses one of 121 reads sent within a minute with RATE_LIMITED and Retry-After`, async (ctx) => {
    const key = target.world.keys.full
    const res = await burstUntilLimited(
      ctx,
      READ_PER_MINUTE,
      () => target.api.get('/v1/deployments', { key }),
      200,
    )
    expectError(res, 'RATE_LIMITED')
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  })

  it(`${req('RATE-001', 'RATE-005')} refuses one of 21 uploads sent within a minute with RATE_LIMITED and Retry-After`, async (ctx) => {
    const key = target.world.keys.full
    const res = await burstUntilLimited(ctx, ACCEPT_PER_MINUTE, () => upload(key), 201)
    expectError(res, 'RATE_LIMITED')
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0)
  })
})

describe('call rates', () => {
  it(`${req('RATE-002', 'RATE-005', 'ERR-083')} answers the 61st read within a minute with RATE_LIMITED, Retry-After and details.reset_at`, async (ctx) => {
    const control = mockOnly(ctx, target, 'needs a fresh call-rate window')
    const key = target.world.keys.full
    await succeedTimes(READ_PER_MINUTE, () => target.api.get('/v1/deployments', { key }))
    const res = await target.api.get('/v1/deployments', { key })
    const error = expectError(res, 'RATE_LIMITED')
    const now = Date.parse((await control.clock()).now)
    const resetAt = Date.parse(String(error.details.reset_at))
    const retryAfter = Number(res.headers['retry-after'])
    expect(resetAt).toBeGreaterThan(now)
    expect(resetAt - now).toBeLessThanOrEqual(60_000)
    expect(Math.abs(resetAt - now - retryAfter * 1000)).toBeLessThanOrEqual(1000)
  })

  it(`${req('RATE-006')} accepts reads again once reset_at has passed`, async (ctx) => {
    const control = mockOnly(ctx, target, 'needs virtual time')
    const key = target.world.keys.full
    await succeedTimes(READ_PER_MINUTE, () => target.api.get('/v1/deployments', { key }))
    const limited = expectError(await target.api.get('/v1/deployments', { key }), 'RATE_LIMITED')
    const now = Date.parse((await control.clock()).now)
    const resetAt = Date.parse(String(limited.details.reset_at))
    await control.advance((resetAt - now) / 1000 + 0.001)
    await succeedTimes(READ_PER_MINUTE, () => target.api.get('/v1/deployments', { key }))
  })

  it(`${req('RATE-004')} enforces the lower read limit set on a key`, async (ctx) => {
    const control = mockOnly(ctx, target, 'needs fixture keys and a fresh window')
    const fixtures = await control.fixtures()
    const throttled = role(
      ctx,
      fixtures.projects
        .flatMap((p) => p.api_keys as { key: string; name?: string }[])
        .find((k) => k.name === 'throttled')?.key,
      'key with lowered call rates',
    )
    const { ok, res } = await untilLimited(() =>
      target.api.get('/v1/deployments', { key: throttled }),
    )
    expectError(res, 'RATE_LIMITED')
    expect(ok).toBeGreaterThan(0)
    expect(ok).toBeLessThan(READ_PER_MINUTE)
    // Only that key is limited: the Project's other keys still read.
    const other = await target.api.get('/v1/deployments', { key: target.world.keys.full })
    expect(other.status).toBe(200)
  })

  it(`${req('RATE-003', 'RATE-004')} enforces a Deployment's lower read limit on requests about that Deployment`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh window; rate_limits field names are assumed')
    const key = target.world.keys.full
    const items = (await target.api.get('/v1/deployments', { key })).body as {
      items: { id: string; rate_limits: { read_per_minute?: number } }[]
    }
    const lowered = role(
      ctx,
      items.items.find((d) => (d.rate_limits.read_per_minute ?? READ_PER_MINUTE) < READ_PER_MINUTE),
      'Deployment with a lowered read limit',
    )
    const limit = lowered.rate_limits.read_per_minute!
    // One read (the list) is already counted for the key and the Project, none for the Deployment.
    await succeedTimes(limit, () => target.api.get(`/v1/deployments/${lowered.id}`, { key }))
    expectError(await target.api.get(`/v1/deployments/${lowered.id}`, { key }), 'RATE_LIMITED')
    const other = items.items.find((d) => d.id !== lowered.id)!
    expect((await target.api.get(`/v1/deployments/${other.id}`, { key })).status).toBe(200)
  })

  it(`${req('RATE-003')} counts reads per Project across its keys`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const readOnly = role(ctx, target.world.keys.readOnly, 'second key of the Project')
    const full = target.world.keys.full
    const half = READ_PER_MINUTE / 2
    await succeedTimes(half, () => target.api.get('/v1/deployments', { key: full }))
    await succeedTimes(half, () => target.api.get('/v1/deployments', { key: readOnly }))
    expectError(await target.api.get('/v1/deployments', { key: full }), 'RATE_LIMITED')
    expectError(await target.api.get('/v1/deployments', { key: readOnly }), 'RATE_LIMITED')
  })

  it(`${req('RATE-003')} counts reads of one Project apart from another Project's`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const other = role(ctx, target.world.keys.otherProject, "another Project's key")
    const full = target.world.keys.full
    await succeedTimes(READ_PER_MINUTE, () => target.api.get('/v1/deployments', { key: full }))
    expectError(await target.api.get('/v1/deployments', { key: full }), 'RATE_LIMITED')
    expect((await target.api.get('/v1/deployments', { key: other })).status).toBe(200)
  })

  it(`${req('RATE-001', 'ERR-083')} answers the 11th upload within a minute with RATE_LIMITED`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const key = target.world.keys.full
    await succeedTimes(ACCEPT_PER_MINUTE, () => upload(key), 201)
    expectError(await upload(key), 'RATE_LIMITED')
  })

  it(`${req('RATE-001', 'ERR-083')} answers the 11th Session creation within a minute with RATE_LIMITED`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const body = (i: number) => ({
      input: [{ type: 'TEXT', text: `rate ${i}` }],
      limits: { max_su: 1 },
    })
    const deployment = (
      await target.api.get(`/v1/deployments/${target.world.deployments.active}`, {
        key: target.world.keys.full,
      })
    ).body as { rate_limits: { accept_per_minute?: number } }
    // The Deployment may carry a lower Accept limit (RATE-004); the lowest reached first applies.
    const limit = Math.min(
      ACCEPT_PER_MINUTE,
      deployment.rate_limits.accept_per_minute ?? ACCEPT_PER_MINUTE,
    )
    for (let i = 0; i < limit; i++) {
      const res = await createSession(target, body(i), { pace: false })
      expect(res.status, res.text.slice(0, 200)).toBe(202)
    }
    expectError(
      await createSession(target, body(limit), { pace: false, idem: newIdempotencyKey() }),
      'RATE_LIMITED',
    )
  })

  it(`${req('RATE-002')} counts a Session-file upload in the Read class (Accept names only POST /v1/files among uploads)`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const key = target.world.keys.full
    const created = await createSession(target, { input: [{ type: 'TEXT', text: 'Notes.' }] })
    expect(created.status, created.text).toBe(202)
    const { session_id } = created.body as { session_id: string }
    await succeedTimes(
      ACCEPT_PER_MINUTE + 1,
      () =>
        target.api.upload(
          `/v1/sessions/${session_id}/files`,
          { content: 'rate\n', filename: 'rate.txt', contentType: 'text/plain' },
          { key, idem: idempotencyKeyOfBytes(40) },
        ),
      201,
    )
  })

  it(`${req('RATE-001', 'RATE-002')} counts the Accept and Read classes apart`, async (ctx) => {
    mockOnly(ctx, target, 'needs a fresh call-rate window')
    const key = target.world.keys.full
    await succeedTimes(ACCEPT_PER_MINUTE, () => upload(key), 201)
    expectError(await upload(key), 'RATE_LIMITED')
    expect((await target.api.get('/v1/deployments', { key })).status).toBe(200)
  })
})
