/**
 * Authentication 1 and 5: /v1 requests carry `Authorization: Bearer <API_KEY>`; a missing, malformed, unknown,
 * revoked or expired key is 401 INVALID_API_KEY (Errors > Codes).
 */
import fc from 'fast-check'
import { describe, it } from 'vitest'
import { invalidAuthorization } from '../../arbitraries/headers.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { probesClientRule } from '../../support/probes.js'
import { req } from '../../support/req.js'
import { role } from '../../support/skip.js'
import type { Target } from '../../support/target.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

/** Reads that exist today and a path with an id: both must refuse a bad key the same way. */
const paths = (t: Target) => ['/v1/deployments', `/v1/deployments/${t.world.deployments.active}`]

const knownKeys = (t: Target) =>
  Object.values(t.world.keys).filter((k): k is string => typeof k === 'string')

describe('API keys', () => {
  it(`${req('AUTH-001', 'ERR-028')} answers INVALID_API_KEY when the Authorization header is missing`, async () => {
    for (const path of paths(target)) {
      expectError(await target.api.get(path), 'INVALID_API_KEY')
    }
  })

  it(`${req('AUTH-006', 'ERR-028')} answers INVALID_API_KEY to a malformed Authorization header`, async () => {
    const key = target.world.keys.full
    const malformed = [
      '',
      'Bearer',
      'Bearer    ',
      key,
      `Bearer ${key.slice(0, 3)} ${key.slice(3)}`,
      `Bearer ${key} ${key}`,
      `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
      `Token ${key}`,
    ]
    for (const path of paths(target)) {
      for (const value of malformed) {
        const res = await target.api.get(path, { headers: { Authorization: value } })
        expectError(res, 'INVALID_API_KEY')
      }
    }
  })

  it(`${req('AUTH-006', 'ERR-028')} answers INVALID_API_KEY to an unknown bearer key`, async () => {
    for (const path of paths(target)) {
      expectError(
        await target.api.get(path, { key: `sk_unknown_${target.world.keys.full}_x` }),
        'INVALID_API_KEY',
      )
    }
  })

  it(`${req('AUTH-006', 'ERR-028')} answers INVALID_API_KEY to the owner's login token`, async (ctx) => {
    const token = role(ctx, target.world.ownerToken, 'owner token')
    for (const path of paths(target)) {
      expectError(await target.api.get(path, { key: token }), 'INVALID_API_KEY')
    }
  })

  it(`${req('AUTH-007', 'ERR-028')} answers INVALID_API_KEY to a revoked key`, async (ctx) => {
    const key = role(ctx, target.world.keys.revoked, 'revoked key')
    for (const path of paths(target)) {
      expectError(await target.api.get(path, { key }), 'INVALID_API_KEY')
    }
  })

  it(`${req('AUTH-007', 'ERR-028')} answers INVALID_API_KEY to an expired key`, async (ctx) => {
    const key = role(ctx, target.world.keys.expired, 'expired key')
    for (const path of paths(target)) {
      expectError(await target.api.get(path, { key }), 'INVALID_API_KEY')
    }
  })

  it(`${req('AUTH-001', 'AUTH-006', 'ERR-028')} answers INVALID_API_KEY to any Authorization value without a valid key`, async (ctx) => {
    // Two examples may send the same refused request: a resend after a non-retryable error, on purpose.
    probesClientRule(ctx, 'RETRY-001')
    await fc.assert(
      fc.asyncProperty(
        invalidAuthorization(knownKeys(target)),
        fc.constantFrom(...paths(target)),
        async (value, path) => {
          const res = await target.api.get(path, { headers: { Authorization: value } })
          expectError(res, 'INVALID_API_KEY')
        },
      ),
      fcParams(),
    )
  })
})
