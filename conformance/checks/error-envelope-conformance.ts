/**
 * Every error response is the envelope {error:{code,message,retryable,request_id,details}} and its status and
 * retryable agree with the error catalog (spec/errors.yaml); request_id equals the X-Request-Id header.
 */
import { ERROR_CATALOG } from '../../spec/index.js'
import { ConformanceFailure } from './failure.js'
import { header, isJson, type ResponseCheck } from './types.js'

type HttpEntry = { status: readonly number[]; retryable: boolean; status_class?: string }

/** The catalog's HTTP entry of a code, if the code is an HTTP error code. */
export function httpEntry(code: string): HttpEntry | undefined {
  const entry = (ERROR_CATALOG as Record<string, { http?: HttpEntry }>)[code]
  return entry?.http
}

/** True when the catalog allows this status for the code. */
export function statusAllowed(entry: HttpEntry, status: number): boolean {
  return entry.status_class === '4xx'
    ? status >= 400 && status < 500
    : entry.status.includes(status)
}

export const errorEnvelopeConformance: ResponseCheck = {
  name: 'error_envelope_conformance',
  requirements: [],
  run({ operation, response }) {
    if (response.status < 400) return
    const fail = (message: string) => {
      throw new ConformanceFailure(
        this.name,
        message,
        operation?.operationId,
        header(response, 'x-request-id'),
      )
    }
    // A proxy may answer 502/503/504 without the envelope (retry rule 5).
    if ([502, 503, 504].includes(response.status) && !isJson(response)) return
    if (!isJson(response)) fail(`error response with status ${response.status} is not JSON`)
    const body = response.body as { error?: Record<string, unknown> } | undefined
    const error = body?.error
    if (!error || typeof error !== 'object') return fail('body has no error object')
    for (const [field, type] of [
      ['code', 'string'],
      ['message', 'string'],
      ['retryable', 'boolean'],
      ['request_id', 'string'],
      ['details', 'object'],
    ] as const) {
      if (typeof error[field] !== type || error[field] === null)
        fail(`error.${field} is not a ${type}`)
    }
    const code = String(error.code)
    const entry = httpEntry(code)
    if (!entry) return fail(`error.code ${code} is not an HTTP error code of the catalog`)
    if (!statusAllowed(entry, response.status)) {
      fail(
        `${code} answered with status ${response.status}; the catalog allows ${entry.status_class ?? entry.status.join(', ')}`,
      )
    }
    if (error.retryable !== entry.retryable)
      fail(`${code} retryable is ${String(error.retryable)}; the catalog says ${entry.retryable}`)
    if (error.request_id !== header(response, 'x-request-id'))
      fail('error.request_id differs from the X-Request-Id header')
  },
}
