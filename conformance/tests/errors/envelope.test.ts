/**
 * Errors > Envelope and Codes: every error is {error:{code,message,retryable,request_id,details}}; every
 * response has a new X-Request-Id (equal to request_id on errors) and Cache-Control: no-store; routing
 * rejections are HTTP_ERROR; 429 has Retry-After and details.reset_at.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { mockChoice } from '../../support/assertions.js'
import type { ApiResponse } from '../../support/client.js'
import { samplePath } from '../../support/documented.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

/** A few kinds of request: success, 401, 404 NOT_FOUND, HTTP_ERROR for a path and for a method (4xx). */
type Kind = 'success' | 'no-key' | 'absent' | 'no-path' | 'no-method'
const KINDS: Kind[] = ['success', 'no-key', 'absent', 'no-path', 'no-method']

function send(kind: Kind): Promise<ApiResponse> {
  const key = target.world.keys.full
  switch (kind) {
    case 'success':
      return target.api.get('/v1/deployments', { key })
    case 'no-key':
      return target.api.get('/v1/deployments')
    case 'absent':
      return target.api.get(`/v1/deployments/${samplePath('{id}')}`, { key })
    case 'no-path':
      return target.api.get('/v1/no-such-resource', { key })
    case 'no-method':
      return target.api.delete('/v1/deployments', undefined, { key })
  }
}

const errorOf = (res: ApiResponse) =>
  (res.body as { error: Record<string, unknown> } | undefined)?.error

describe('error envelope and headers', () => {
  it(`${req('ERR-001', 'ERR-003', 'ERR-004')} answers every error with the envelope {error:{code,message,retryable,request_id,details}}`, async () => {
    for (const kind of KINDS.filter((k) => k !== 'success')) {
      const res = await send(kind)
      expect(res.headers['content-type']).toMatch(/^application\/json/)
      const error = errorOf(res)!
      expect(Object.keys(error).sort()).toEqual(
        expect.arrayContaining(['code', 'details', 'message', 'request_id', 'retryable']),
      )
      expect(typeof error.code).toBe('string')
      expect(typeof error.message).toBe('string')
      expect(typeof error.retryable).toBe('boolean')
      expect(typeof error.request_id).toBe('string')
      expect(error.details).toBeTypeOf('object')
      expect(error.details).not.toBeNull()
      expect(Array.isArray(error.details)).toBe(false)
    }
  })

  it(`${req('ERR-005')} sends X-Request-Id equal to error.request_id on every error`, async () => {
    for (const kind of KINDS.filter((k) => k !== 'success')) {
      const res = await send(kind)
      expect(res.headers['x-request-id']).toBeTruthy()
      expect(errorOf(res)!.request_id).toBe(res.headers['x-request-id'])
    }
  })

  it(`${req('ERR-005')} sends X-Request-Id on a successful response`, async () => {
    const res = await send('success')
    expect(res.status).toBe(200)
    expect(res.headers['x-request-id']).toMatch(/\S/)
  })

  it(`${req('ERR-006')} issues a new X-Request-Id for every request`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...KINDS), { minLength: 1, maxLength: 6 }),
        async (kinds) => {
          for (const kind of kinds) {
            const id = (await send(kind)).headers['x-request-id']!
            expect(seen.has(id), `request id ${id} repeated`).toBe(false)
            seen.add(id)
          }
        },
      ),
      fcParams({ numRuns: 10 }),
    )
  })

  it(`${req('ERR-006', 'ERR-005')} gives two identical requests two different X-Request-Ids, each its envelope's request_id on an error`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    for (const kind of ['success', 'absent'] as const) {
      const [first, second] = [await send(kind), await send(kind)]
      const ids = [first.headers['x-request-id'], second.headers['x-request-id']]
      expect(ids[0], kind).toMatch(/\S/)
      expect(ids[1], kind).toMatch(/\S/)
      expect(ids[1], kind).not.toBe(ids[0])
      if (kind === 'absent')
        for (const res of [first, second]) {
          expect(res.status).toBe(404)
          expect(errorOf(res)!.request_id).toBe(res.headers['x-request-id'])
        }
    }
  })

  it(`${req('ERR-005')} issues the request id itself, ignoring one sent by the client`, async () => {
    const sent = 'req_chosen_by_the_client'
    const res = await target.api.get('/v1/no-such-resource', {
      key: target.world.keys.full,
      headers: { 'X-Request-Id': sent },
    })
    expect(res.headers['x-request-id']).not.toBe(sent)
    expect(errorOf(res)!.request_id).toBe(res.headers['x-request-id'])
  })

  it(`${req('ERR-007')} sends Cache-Control: no-store on success and error responses`, async () => {
    for (const kind of KINDS) {
      const res = await send(kind)
      expect(res.headers['cache-control'], kind).toMatch(/(^|,)\s*no-store\s*(,|$)/)
    }
  })

  // The catalog gives HTTP_ERROR the status 4xx: 404 for a path and 405 for a method are the mock's choices.
  it(`${req('ERR-027')} answers HTTP_ERROR (4xx) to an unknown path; 404 on the mock`, async () => {
    for (const path of [
      '/v1/no-such-resource',
      `/v1/deployments/${samplePath('{id}')}/no-such-thing`,
    ]) {
      const res = await target.api.get(path, { key: target.world.keys.full })
      expectError(res, 'HTTP_ERROR')
      await mockChoice(target, 'HTTP_ERROR for an unknown path is 404 (the catalog: 4xx)', () => {
        expect(res.status, path).toBe(404)
      })
    }
  })

  it(`${req('ERR-027')} answers HTTP_ERROR (4xx) to a method the path does not have; 405 on the mock`, async () => {
    const key = target.world.keys.full
    for (const res of [
      await target.api.delete('/v1/deployments', undefined, { key }),
      await target.api.patch(`/v1/deployments/${target.world.deployments.active}`, {}, { key }),
    ]) {
      expectError(res, 'HTTP_ERROR')
      await mockChoice(target, 'HTTP_ERROR for a method mismatch is 405 (the catalog: 4xx)', () => {
        expect(res.status).toBe(405)
      })
    }
  })

  it(`${req('ERR-008', 'ERR-083', 'RATE-005')} answers 429 RATE_LIMITED with Retry-After in seconds and details.reset_at`, async () => {
    // Reads until the Read class (60 per minute) runs out; a fresh or a running window both get there.
    let res: ApiResponse | undefined
    for (let i = 0; i < 130; i++) {
      res = await target.api.get('/v1/deployments', { key: target.world.keys.full })
      if (res.status === 429) break
      expect(res.status).toBe(200)
    }
    const error = expectError(res!, 'RATE_LIMITED')
    expect(res!.headers['retry-after']).toMatch(/^\d+$/)
    expect(typeof error.details.reset_at).toBe('string')
    expect(Number.isNaN(Date.parse(String(error.details.reset_at)))).toBe(false)
  })
})
