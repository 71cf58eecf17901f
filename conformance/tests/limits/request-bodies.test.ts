/**
 * Request bodies of Session creation (Endpoints intro; Turn input and request options; Sizes and counts):
 * valid bodies are accepted, each one-violation body gets exactly the code the document gives it, JSON is
 * uncompressed application/json of at most 64 KiB, and a refused request changes nothing.
 */
import { deflateSync, gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SESSION_BOUNDS, smallSessionBody, sessionBody } from '../../arbitraries/bodies.js'
import {
  boundaryViolations,
  sessionBodyViolation,
  type BodyViolation,
} from '../../arbitraries/invalid.js'
import type { ApiResponse } from '../../support/client.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { req } from '../../support/req.js'
import {
  createSession,
  newIdempotencyKey,
  type SessionReceipt,
} from '../../support/session-create.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

/** Violations the target can be held to: those resting on an x-assumed choice only on a mock. */
const violations = () => sessionBodyViolation().filter((v) => !v.assumed || !!target.control)

const expectAccepted = (res: ApiResponse): SessionReceipt => {
  expect(res.status, res.text.slice(0, 300)).toBe(202)
  const receipt = res.body as SessionReceipt
  expect(receipt.status).toBe('QUEUED')
  return receipt
}

const expectViolation = (res: ApiResponse, v: BodyViolation) => {
  expect(res.status, `${v.label}: ${res.text.slice(0, 300)}`).toBeLessThan(500)
  expectError(res, v.code)
}

/** A valid body serialized to exactly `bytes` bytes of JSON (ASCII padding in one TEXT item). */
function bodyOfBytes(bytes: number): string {
  const empty = JSON.stringify({ input: [{ type: 'TEXT', text: '' }] })
  const json = JSON.stringify({ input: [{ type: 'TEXT', text: 'x'.repeat(bytes - empty.length) }] })
  expect(Buffer.byteLength(json)).toBe(bytes)
  return json
}

describe('Session creation bodies', () => {
  it(`${req('SES-001', 'STATE-005', 'SES-004')} accepts every valid body with a 202 receipt in status QUEUED`, async () => {
    await fc.assert(
      fc.asyncProperty(sessionBody(), async (body) => {
        // Each run starts from a fresh world where the target allows it: budgets and call rates are other rules.
        await target.fresh()
        expectAccepted(await createSession(target, body))
      }),
      fcParams(),
    )
  })

  it(`${req('EP-002', 'ERR-036', 'ERR-037', 'SES-004', 'SES-005', 'SES-007', 'SES-008', 'SES-009', 'SES-010', 'SES-011', 'SES-013', 'SES-014', 'SES-015')} answers each one-violation body with exactly its code, never a 5xx`, async () => {
    await fc.assert(
      fc.asyncProperty(violations(), async (v) => {
        expectViolation(await createSession(target, JSON.stringify(v.body)), v)
      }),
      fcParams({ numRuns: 50 }),
    )
  })

  it(`${req('SES-008', 'SES-009', 'SES-010', 'SES-011', 'SES-013', 'SES-014', 'SES-015')} refuses every bound just over it (17 metadata keys, 65-character key, 513-character value, each limit above its maximum and at 0)`, async () => {
    for (const v of boundaryViolations(smallSessionBody('bound')))
      expectViolation(await createSession(target, JSON.stringify(v.body)), v)
  })

  it(`${req('RETRY-005')} answers an unchanged resend of a refused body with the same code`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    await fc.assert(
      fc.asyncProperty(violations(), async (v) => {
        const idem = newIdempotencyKey('resend')
        const first = await createSession(target, JSON.stringify(v.body), { idem })
        const again = await createSession(target, JSON.stringify(v.body), { idem })
        expectViolation(first, v)
        expectViolation(again, v)
      }),
      fcParams({ numRuns: 10 }),
    )
  })

  it(`${req('IDEM-001', 'IDEM-002')} leaves the Idempotency-Key of a refused body unused: that key then creates one Session`, async () => {
    await fc.assert(
      fc.asyncProperty(violations(), sessionBody(), async (v, valid) => {
        // Each run starts from a fresh world where the target allows it: budgets and call rates are other rules.
        await target.fresh()
        const idem = newIdempotencyKey('refused')
        expectViolation(await createSession(target, JSON.stringify(v.body), { idem }), v)
        const created = expectAccepted(await createSession(target, valid, { idem }))
        const replayed = expectAccepted(await createSession(target, valid, { idem }))
        expect(replayed).toEqual(created)
      }),
      fcParams({ numRuns: 10 }),
    )
  })

  it(`${req('SIZE-002')} accepts metadata at its bounds: 16 keys of 64 characters with values of 512 characters`, async () => {
    const { maxKeys, keyMax, valueMax } = SESSION_BOUNDS.metadata
    const metadata = Object.fromEntries(
      Array.from({ length: maxKeys }, (_, i) => [
        `${String(i).padStart(2, '0')}${'k'.repeat(keyMax - 2)}`,
        'v'.repeat(valueMax),
      ]),
    )
    expectAccepted(await createSession(target, { ...smallSessionBody('metadata'), metadata }))
    const wide = { [`${'é'.repeat(keyMax)}`]: '日'.repeat(valueMax) }
    expectAccepted(await createSession(target, { ...smallSessionBody('wide'), metadata: wide }))
  })

  it(`${req('SES-008', 'SES-009', 'SES-010', 'SIZE-015')} accepts limits at their maxima`, async () => {
    const limits = Object.fromEntries(
      Object.entries(SESSION_BOUNDS.limits).map(([name, { max }]) => [name, max]),
    )
    expectAccepted(await createSession(target, { ...smallSessionBody('max'), limits }))
  })

  it(`${req('SIZE-001')} accepts a JSON body of exactly 64 KiB`, async () => {
    expectAccepted(await createSession(target, bodyOfBytes(SESSION_BOUNDS.jsonBodyBytes)))
  })

  it(`${req('EP-003', 'ERR-042')} answers INPUT_TOO_LARGE to a JSON body over 64 KiB`, async () => {
    for (const bytes of [SESSION_BOUNDS.jsonBodyBytes + 1, 1024 * 1024]) {
      expectError(await createSession(target, bodyOfBytes(bytes)), 'INPUT_TOO_LARGE')
    }
  })

  it(`${req('EP-005', 'ERR-044')} answers UNSUPPORTED_MEDIA_TYPE to a body that is not JSON`, async () => {
    const json = JSON.stringify(smallSessionBody('media'))
    for (const [type, body] of [
      ['text/plain', json],
      ['application/x-www-form-urlencoded', 'input=hello'],
      ['application/xml', '<input><text>hello</text></input>'],
      [
        'multipart/form-data; boundary=x',
        `--x\r\nContent-Disposition: form-data; name="input"\r\n\r\nhello\r\n--x--\r\n`,
      ],
    ] as const) {
      const res = await createSession(target, body, { headers: { 'Content-Type': type } })
      expectError(res, 'UNSUPPORTED_MEDIA_TYPE')
    }
  })

  it(`${req('EP-004', 'ERR-044')} answers UNSUPPORTED_MEDIA_TYPE to a compressed JSON body`, async () => {
    const json = Buffer.from(JSON.stringify(smallSessionBody('compressed')))
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['deflate', deflateSync(json)],
    ] as const) {
      const res = await createSession(target, body, { headers: { 'Content-Encoding': encoding } })
      expectError(res, 'UNSUPPORTED_MEDIA_TYPE')
    }
  })

  it(`${req('ERR-036')} answers INVALID_INPUT to a body that is not valid JSON`, async () => {
    const broken = fc
      .oneof(
        fc.constantFrom(
          '{',
          '{"input": [}',
          "{'input': []}",
          '{"input":[]} trailing',
          'input',
          '{"input":[{"type":"TEXT","text":"x"}],}',
        ),
        fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }),
      )
      .filter((text) => {
        try {
          JSON.parse(text)
          return false
        } catch {
          return true
        }
      })
    await fc.assert(
      fc.asyncProperty(broken, async (text) => {
        expectError(await createSession(target, text), 'INVALID_INPUT')
      }),
      fcParams(),
    )
  })
})
