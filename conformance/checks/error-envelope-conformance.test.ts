/** The error-envelope check on synthetic responses: what a proxy may send, and what the service must. */
import { describe, expect, it } from 'vitest'
import { errorEnvelopeConformance } from './error-envelope-conformance.js'
import type { CheckedResponse } from './types.js'

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
})
