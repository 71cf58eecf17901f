/**
 * What each status class means (Errors > HTTP statuses), SU amounts as numbers, output visibilities, the /v1
 * prefix and no management through an API key (What the service does; Versioning 1), checked on the target's
 * own answers: a missing key is 401 and nothing else is; a missing scope is 403; a call-rate or concurrency
 * refusal is 429.
 */
import { describe, expect, it } from 'vitest'
import { ERROR_CATALOG, type HttpErrorCode } from '../../../spec/index.js'
import { mockChoice } from '../../support/assertions.js'
import { expectError } from '../../support/expect-error.js'
import { documentedOperations } from '../../support/documented.js'
import { req } from '../../support/req.js'
import { waitUntilEnded } from '../../support/poll.js'
import { createSession } from '../../support/session-create.js'
import { mockOnly, role } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'

const target = useTarget()

const codesWithStatus = (status: number) =>
  (Object.keys(ERROR_CATALOG) as HttpErrorCode[]).filter((c) => {
    const http = (ERROR_CATALOG[c] as { http?: { status: readonly number[] } }).http
    return http?.status.includes(status) ?? false
  })

describe('status classes', () => {
  it(`${req('ERR-016')} uses 401 only for key problems: a missing, malformed or unknown key`, async () => {
    expect(codesWithStatus(401)).toEqual(['INVALID_API_KEY'])
    for (const key of [undefined, 'not a key', 'sk_test_unknown_key_0000000000']) {
      const res = await target.api.get('/v1/deployments', { key })
      expectError(res, 'INVALID_API_KEY', { status: 401 })
    }
    // A valid key on an absent resource is not a key problem.
    const absent = await target.api.get(`/v1/deployments/00000000-0000-4000-8000-00000000beef`, {
      key: target.world.keys.full,
    })
    expect(absent.status).toBe(404)
  })

  it(`${req('ERR-018')} uses 403 for a missing scope or permission`, async (ctx) => {
    const key = role(ctx, target.world.keys.worksOnly, 'works-only key')
    const codes = codesWithStatus(403)
    expect(codes).toContain('INSUFFICIENT_SCOPE')
    const res = await target.api.get('/v1/usage', { key: target.world.keys.full })
    expect(res.status).toBe(200)
    const refused = await target.api.get(`/v1/runs/00000000-0000-4000-8000-00000000beef`, { key })
    expect(refused.status).toBe(403)
    expect(codes).toContain((refused.body as { error: { code: string } }).error.code)
  })

  it(`${req('ERR-024')} uses 429 for a call rate or concurrency limit`, async (ctx) => {
    const control = mockOnly(ctx, target, 'reaches the concurrency limit on virtual time')
    expect(codesWithStatus(429).sort()).toEqual(['CONCURRENCY_LIMIT', 'RATE_LIMITED'])
    await control.queueScenario(target.world.deployments.active, 'slow', 20)
    let last = await createSession(target, { input: [{ type: 'TEXT', text: 'Go.' }] })
    for (let i = 0; i < 30 && last.status === 202; i++)
      last = await createSession(
        target,
        { input: [{ type: 'TEXT', text: 'Go.' }] },
        { pace: false },
      )
    expect(last.status).toBe(429)
    expect(['RATE_LIMITED', 'CONCURRENCY_LIMIT']).toContain(
      (last.body as { error: { code: string } }).error.code,
    )
  })
})

describe('values and paths', () => {
  it(`${req('RES-004')} gives SU amounts as JSON numbers (usage total_su, settled_su, reserved_su)`, async () => {
    const res = await target.api.get('/v1/usage', { key: target.world.keys.full })
    expect(res.status, res.text).toBe(200)
    const body = res.body as {
      total_su: unknown
      categories: Record<string, { total_su: unknown; settled_su: unknown; reserved_su: unknown }>
    }
    expect(['number', 'object']).toContain(typeof body.total_su) // null while PENDING
    if (body.total_su !== null) expect(typeof body.total_su).toBe('number')
    for (const c of Object.values(body.categories)) {
      expect(typeof c.settled_su).toBe('number')
      expect(typeof c.reserved_su).toBe('number')
      if (c.total_su !== null) expect(typeof c.total_su).toBe('number')
    }
  })

  it(`${req('OUT-002')} gives output items a visibility of INTERMEDIATE, PARTIAL or FINAL`, async () => {
    const res = await createSession(target, { input: [{ type: 'TEXT', text: 'Go.' }] })
    expect(res.status, res.text).toBe(202)
    const statusUrl = (res.body as { status_url: string }).status_url
    await waitUntilEnded(target, statusUrl, { mockAdvanceS: 10 })
    const turn = await target.api.get(statusUrl, { key: target.world.keys.full })
    expect(turn.status, turn.text.slice(0, 300)).toBe(200)
    const outputs = (turn.body as { outputs: { visibility: string }[] }).outputs
    // How many outputs an execution gives is the Deployment's (its result contract), not the document's.
    await mockChoice(
      target,
      "the default execution gives an output (the contract's required one)",
      () => {
        expect(outputs.length).toBeGreaterThan(0)
      },
    )
    // Outside an approval's review material (REVIEW), a Turn's outputs are INTERMEDIATE, PARTIAL or FINAL.
    for (const o of outputs) expect(['INTERMEDIATE', 'PARTIAL', 'FINAL']).toContain(o.visibility)
  })

  it(`${req('VER-001', 'SVC-007')} serves every API-key operation under /v1, none of them a management task`, async () => {
    const apiKeyOps = documentedOperations().filter((o) => o.auth === 'apiKey')
    expect(apiKeyOps.length).toBeGreaterThan(0)
    for (const op of apiKeyOps) expect(op.template, op.operationId).toMatch(/^\/v1\//)
    const management = /^\/v1\/(projects|api-keys|keys|webhooks)(\/|$)/
    for (const op of apiKeyOps) expect(op.template).not.toMatch(management)
    // Management paths with an API key: never a success.
    for (const [method, path] of [
      ['POST', '/v1/projects'],
      ['POST', '/v1/deployments'],
      ['POST', '/v1/webhooks'],
      ['POST', `/api/runtime/projects/${target.world.projectId}/webhooks`],
    ] as const) {
      const res = await target.api.send(
        method,
        path,
        { url: 'https://example.com/hook' },
        {
          key: target.world.keys.full,
        },
      )
      expect(res.status, `${method} ${path}`).toBeGreaterThanOrEqual(400)
      expect(res.status, `${method} ${path}`).toBeLessThan(500)
    }
  })
})
