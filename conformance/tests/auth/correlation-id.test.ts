/**
 * Authentication 10: the optional X-Correlation-Id header is for the caller's tracing; a malformed one is
 * 400 INVALID_CORRELATION_ID. The document does not show the format: spec/openapi.yaml assumes
 * ^[A-Za-z0-9._:-]{1,128}$ (x-assumed), so the format tests run only on a mock target. The refusal of a
 * malformed one is the document's rule and runs on every target, with a value no format of a tracing id
 * accepts (MALFORMED below).
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { correlationId, invalidCorrelationId, utf8HeaderValue } from '../../arbitraries/headers.js'
import { expectError } from '../../support/expect-error.js'
import { fcParams } from '../../support/fc.js'
import { retryRateLimited } from '../../support/pace.js'
import { req } from '../../support/req.js'
import { assumedRule } from '../../support/skip.js'
import { useTarget } from '../../support/use-target.js'
import { probesClientRule } from '../../support/probes.js'

const target = useTarget()

const read = (value: string) =>
  retryRateLimited(target, () =>
    target.api.get('/v1/deployments', {
      key: target.world.keys.full,
      headers: { 'X-Correlation-Id': value },
    }),
  )

/**
 * Malformed under any format a correlation id could have: whatever format a deployment chose (a UUID, hex, a
 * W3C trace id, a token of letters, digits and a few separators, visible ASCII up to some length), this value
 * breaks it several times over: 300 characters (beyond the 128 assumed and the 256 of common id limits),
 * spaces, HTTP delimiters (quote, comma, semicolon, backslash, braces, angle brackets) and non-ASCII bytes (UTF-8
 * of "é"). Only "any bytes at all" would accept it, and that format has nothing malformed. Control characters
 * and line breaks, though malformed too, cannot be tested: HTTP itself forbids them in a header (clients
 * refuse to send them, servers refuse them before the application). It starts and ends with a visible
 * character, so no HTTP parser trims it.
 */
const MALFORMED = utf8HeaderValue(`<"trace id", é; not\\an {id}> `.repeat(20).slice(0, 299) + '>')

describe('X-Correlation-Id', () => {
  it(`${req('AUTH-014')} accepts a simple correlation id`, async () => {
    // Letters, digits and a hyphen: well-formed under any reasonable format.
    expect((await read('checkout-7f3a9c')).status).toBe(200)
  })

  it(`${req('AUTH-014')} accepts every correlation id of the assumed format`, async (ctx) => {
    assumedRule(ctx, target, 'X-Correlation-Id format ^[A-Za-z0-9._:-]{1,128}$')
    await fc.assert(
      fc.asyncProperty(correlationId(), async (value) => {
        expect((await read(value)).status).toBe(200)
      }),
      fcParams(),
    )
  })

  it(`${req('AUTH-015', 'ERR-039', 'ERR-015')} answers 400 INVALID_CORRELATION_ID to a correlation id no format accepts`, async () => {
    expect(Buffer.byteLength(MALFORMED, 'latin1')).toBeGreaterThan(300)
    expectError(await read(MALFORMED), 'INVALID_CORRELATION_ID', { status: 400 })
  })

  it(`${req('AUTH-015', 'ERR-039', 'ERR-015')} answers INVALID_CORRELATION_ID to a correlation id outside the assumed format`, async (ctx) => {
    probesClientRule(ctx, 'RETRY-001')
    assumedRule(ctx, target, 'X-Correlation-Id format ^[A-Za-z0-9._:-]{1,128}$')
    await fc.assert(
      fc.asyncProperty(invalidCorrelationId(), async (value) => {
        expectError(await read(value), 'INVALID_CORRELATION_ID')
      }),
      fcParams(),
    )
  })
})
