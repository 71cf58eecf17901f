/**
 * Errors > Codes and Retry rules through the mock's fault rules (MOCK-CONTRACT "Fault rules"): every code of
 * the document's HTTP error table, at every status the catalog lists, is produced by a rule with the
 * catalog's status, retryable flag and Retry-After; a proxy's 502/503/504 comes without the envelope. Mock
 * only: a real deployment has no fault rules.
 */
import { afterEach, describe, expect, it, type TestContext } from 'vitest'
import { ERROR_CATALOG, loadRequirements, type HttpErrorCode } from '../../../spec/index.js'
import type { ApiResponse } from '../../support/client.js'
import type { MockControl } from '../../support/control.js'
import { expectError } from '../../support/expect-error.js'
import { req } from '../../support/req.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import { mockOnly } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

// One world for the file; no call-rate limit: every code is one more read of the same key.
const target = useTarget({ freshEach: false, rateLimits: false })
afterEach(async () => {
  await target.control?.clearFaults()
})

type HttpEntry = { status: readonly number[]; retryable: boolean; retry_after?: boolean | 'maybe' }
const HTTP_CODES = Object.entries(ERROR_CATALOG).flatMap(([code, entry]) =>
  'http' in entry ? [[code as HttpErrorCode, entry.http as HttpEntry] as const] : [],
)

/** The requirement of the Codes section that states a code's status and retryable flag. */
const codeRequirement = (code: string): string => {
  const found = loadRequirements().requirements.find(
    (r) => r.section === 'Codes' && r.codes.includes(code) && r.rule.startsWith(`${code}:`),
  )
  if (!found) throw new Error(`no Codes requirement for ${code}`)
  return found.id
}

const control = (ctx: TestContext): MockControl =>
  mockOnly(ctx, target, 'fault rules are a mock control API')

/** A request no rule of the document would refuse: the rule alone decides the answer. */
const listDeployments = (): Promise<ApiResponse> =>
  target.api.send('GET', '/v1/deployments', undefined, {
    key: target.world.keys.full,
    // The fault answers a status the operation does not document: only the envelope is checked, below.
    check: false,
  })

describe('fault rules produce the catalog', () => {
  for (const [code, http] of HTTP_CODES) {
    it(`${req(codeRequirement(code))} ${code}: a fault rule answers ${http.status.join('/')} with retryable ${http.retryable} and the catalog's Retry-After`, async (ctx) => {
      probesClientRule(ctx, 'RETRY-001', 'RETRY-002')
      const c = control(ctx)
      for (const status of http.status) {
        await c.addFault({
          match: { operation: 'listDeployments' },
          action: { error: code, status },
          times: 1,
        })
        const res = await listDeployments()
        expect(res.status).toBe(status)
        expectError(res, code, { status: status as never })
        if (http.retry_after === true) expect(res.headers['retry-after']).toBe('1')
        else expect(res.headers['retry-after']).toBeUndefined()
        if (http.retry_after !== undefined) {
          await c.addFault({
            match: { operation: 'listDeployments' },
            action: { error: code, status, retry_after_s: 7 },
            times: 1,
          })
          expect((await listDeployments()).headers['retry-after']).toBe('7')
        }
      }
      // The rule is spent: the request is served again.
      expect((await listDeployments()).status).toBe(200)
    })
  }
})

describe('network faults', () => {
  it(`${req('RETRY-006')} a proxy rule answers 502, 503 and 504 without the envelope`, async (ctx) => {
    const c = control(ctx)
    for (const status of [502, 503, 504]) {
      await c.addFault({ match: { path: '/v1/deployments' }, action: { proxy: status }, times: 1 })
      const res = await listDeployments()
      expect(res.status).toBe(status)
      expect(res.headers['content-type']).toMatch(/^text\/plain/)
      expect((res.body as { error?: unknown } | undefined)?.error).toBeUndefined()
    }
  })

  it(`${req('IDEM-001', 'RETRY-004')} the unanswered request: processed and committed, so a resend with the same key gets the original receipt`, async (ctx) => {
    const c = control(ctx)
    const key = newIdempotencyKey('unanswered')
    const body = { input: [{ type: 'TEXT', text: 'rehearse an unanswered request' }] }
    await c.addFault({ match: { operation: 'createSession' }, action: { drop: 'after' }, times: 1 })
    await expect(createSession(target, body, { idem: key })).rejects.toThrow()
    const resent = await createSession(target, body, { idem: key })
    expect(resent.status, resent.text).toBe(202)
    const receipt = resent.body as SessionReceipt
    // The work was accepted by the unanswered request: the resend replays it.
    expect(resent.headers['idempotent-replayed']).toBe('true')
    expect((await target.api.get(receipt.status_url, { key: target.world.keys.full })).status).toBe(
      200,
    )
    expect((await c.faults()).items[0]).toMatchObject({ fired: 1, remaining: 0 })
  })

  it(`${req('RETRY-001')} a dropped connection before processing changes nothing: the resend creates the Session`, async (ctx) => {
    const c = control(ctx)
    const key = newIdempotencyKey('dropped')
    const body = { input: [{ type: 'TEXT', text: 'rehearse a dropped connection' }] }
    await c.addFault({
      match: { operation: 'createSession' },
      action: { drop: 'before' },
      times: 1,
    })
    await expect(createSession(target, body, { idem: key })).rejects.toThrow()
    const resent = await createSession(target, body, { idem: key })
    expect(resent.status, resent.text).toBe(202)
    expect(resent.headers['idempotent-replayed']).toBeUndefined()
  })
})
