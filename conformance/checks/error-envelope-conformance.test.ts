/**
 * The error-envelope check on synthetic responses: what a proxy may send, and what the service must. On a real
 * target a code outside the catalog is a warning (Errors: "new codes may be added"), a catalog code is held to
 * the catalog as on the mock.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { req } from '../support/req.js'
import type { Target } from '../support/target.js'
import { clearWarnings, warnings } from '../support/warnings.js'
import { errorEnvelopeConformance } from './error-envelope-conformance.js'
import type { CheckedResponse } from './types.js'

const MOCKS: readonly Target['kind'][] = ['in-process', 'mock-http']

/** The check on an envelope answered with `status`, by a target of `kind`. */
const judge = (status: number, error: Record<string, unknown>, kind: Target['kind']) => () =>
  errorEnvelopeConformance.run({
    method: 'GET',
    path: '/v1/runs/x',
    operation: undefined,
    kind,
    response: {
      status,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-1' },
      body: {
        error: {
          code: 'NOT_FOUND',
          message: 'x',
          retryable: false,
          request_id: 'req-1',
          details: {},
          ...error,
        },
      },
      text: '',
    },
  })

afterEach(() => {
  clearWarnings()
})

const run = (response: CheckedResponse) => () =>
  errorEnvelopeConformance.run({
    method: 'GET',
    path: '/v1/runs/x',
    operation: undefined,
    response,
  })

const plain = (status: number): CheckedResponse => ({
  status,
  headers: { 'content-type': 'text/html' },
  body: undefined,
  text: '<html>Bad Gateway</html>',
})

describe('error envelope check', () => {
  it('[RETRY-006] lets a proxy answer 502, 503 or 504 without the envelope', () => {
    for (const status of [502, 503, 504]) expect(run(plain(status))).not.toThrow()
  })

  it('[ERR-001] refuses any other error status without the JSON envelope', () => {
    for (const status of [400, 404, 429, 500]) expect(run(plain(status))).toThrow(/not JSON/)
  })

  it('[ERR-005] refuses an envelope whose request_id is not X-Request-Id', () => {
    const response: CheckedResponse = {
      status: 404,
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-1' },
      body: {
        error: {
          code: 'NOT_FOUND',
          message: 'x',
          retryable: false,
          request_id: 'req-2',
          details: {},
        },
      },
      text: '',
    }
    expect(run(response)).toThrow(/request_id/)
    ;(response.body as { error: { request_id: string } }).error.request_id = 'req-1'
    expect(run(response)).not.toThrow()
  })

  it(`${req('ERR-012', 'VER-003')} accepts on a real target a code outside the catalog with a well-formed envelope, with a warning; the mock fails it`, () => {
    for (const kind of MOCKS)
      expect(judge(429, { code: 'REQUEST_BUDGET_PAUSED', retryable: true }, kind)).toThrow(
        /REQUEST_BUDGET_PAUSED is not an HTTP error code of the catalog/,
      )
    expect(warnings()).toEqual([])
    expect(judge(429, { code: 'REQUEST_BUDGET_PAUSED', retryable: true }, 'real')).not.toThrow()
    expect(judge(409, { code: 'NEW_CONFLICT', retryable: false }, 'real')).not.toThrow()
    expect(warnings().map((w) => w.key)).toEqual([
      'unknown error code REQUEST_BUDGET_PAUSED 429',
      'unknown error code NEW_CONFLICT 409',
    ])
    expect(warnings()[0]!.message).toMatch(/retryable true and status 429/)
  })

  it(`${req('ERR-001', 'ERR-005', 'ERR-012')} still refuses on a real target an unknown code whose envelope is malformed or whose request_id differs`, () => {
    const unknown = { code: 'NEW_CONFLICT' }
    expect(judge(409, { ...unknown, retryable: 'false' }, 'real')).toThrow(
      /error.retryable is not a boolean/,
    )
    expect(judge(409, { ...unknown, details: null }, 'real')).toThrow(/error.details/)
    expect(judge(409, { ...unknown, message: undefined }, 'real')).toThrow(/error.message/)
    expect(judge(409, { ...unknown, request_id: 'req-2' }, 'real')).toThrow(/request_id/)
  })

  it(`${req('ERR-026', 'ERR-003')} holds a catalog code to the catalog's status and retryable on a real target too`, () => {
    for (const kind of [...MOCKS, 'real'] as const) {
      expect(judge(404, {}, kind)).not.toThrow()
      expect(judge(400, {}, kind)).toThrow(
        /NOT_FOUND answered with status 400; the catalog allows 404/,
      )
      expect(judge(404, { retryable: true }, kind)).toThrow(
        /retryable is true; the catalog says false/,
      )
      expect(judge(503, { code: 'BILLING_UNAVAILABLE', retryable: false }, kind)).toThrow(
        /retryable is false; the catalog says true/,
      )
    }
    expect(warnings()).toEqual([])
  })

  it(`${req('ERR-011', 'ERR-093')} refuses a code the catalog gives only to execution details as an HTTP error, on every target`, () => {
    for (const kind of [...MOCKS, 'real'] as const)
      expect(judge(422, { code: 'EXECUTION_TIMEOUT' }, kind)).toThrow(
        /EXECUTION_TIMEOUT appears only in execution details/,
      )
  })
})
