/**
 * Every error response is the envelope {error:{code,message,retryable,request_id,details}} and its status and
 * retryable agree with the error catalog (spec/errors.yaml); request_id equals the X-Request-Id header.
 *
 * A code outside the catalog: the mock (either kind) fails, its codes are the catalog. A real target may use
 * codes added after 1.3.0 ("Unknown codes must be handled by retryable and HTTP status; new codes may be
 * added", Errors; Versioning 2): such a code is a warning when the envelope is well formed, the status is 4xx or
 * 5xx and retryable a boolean; a client handles it by those two. A catalog code is held to the catalog's status
 * and retryable on every target, and a code the catalog marks '-' (execution details only) is never an HTTP
 * answer (ERR-011).
 */
import { ERROR_CATALOG } from '../../spec/index.js'
import { warn } from '../support/warnings.js'
import { ConformanceFailure } from './failure.js'
import { header, isJson, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

type HttpEntry = { status: readonly number[]; retryable: boolean; status_class?: string }

/** True when the code is a key of the error catalog (an HTTP or an execution-only code). */
export const inCatalog = (code: string): boolean => Object.hasOwn(ERROR_CATALOG, code)

/** The catalog's HTTP entry of a code, if the code is an HTTP error code. */
export function httpEntry(code: string): HttpEntry | undefined {
  if (!inCatalog(code)) return undefined
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
  run(ctx) {
    const { operation, response } = ctx
    if (response.status < 400) return
    const kind = targetKind(ctx)
    const fail = (message: string) => {
      throw new ConformanceFailure(
        this.name,
        message,
        operation?.operationId,
        header(response, 'x-request-id'),
      )
    }
    // A proxy may answer 502/503/504 without the envelope (retry rule 5); not_a_server_error reports it.
    if (isProxyAnswer(response, kind)) return
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
    if (!inCatalog(code) && kind === 'real' && response.status < 600) {
      warn(
        `unknown error code ${code} ${response.status}`,
        `${operation?.operationId ?? 'undocumented operation'} ${response.status}: error.code ${code} is not ` +
          `in the catalog of 1.3.0 (allowed: "new codes may be added"; a client handles it by retryable ` +
          `${String(error.retryable)} and status ${response.status})`,
      )
    } else {
      const entry = httpEntry(code)
      if (!entry) {
        return fail(
          inCatalog(code)
            ? `error.code ${code} appears only in execution details ('-' in the catalog), never as an HTTP error`
            : `error.code ${code} is not an HTTP error code of the catalog`,
        )
      }
      if (!statusAllowed(entry, response.status)) {
        fail(
          `${code} answered with status ${response.status}; the catalog allows ${entry.status_class ?? entry.status.join(', ')}`,
        )
      }
      if (error.retryable !== entry.retryable)
        fail(`${code} retryable is ${String(error.retryable)}; the catalog says ${entry.retryable}`)
    }
    if (error.request_id !== header(response, 'x-request-id'))
      fail('error.request_id differs from the X-Request-Id header')
  },
}
