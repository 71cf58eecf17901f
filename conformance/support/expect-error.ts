/**
 * expectError(res, 'IDEMPOTENCY_CONFLICT'): the response is that code, with a status the catalog allows (or
 * the one given), the catalog's retryable flag, request_id equal to X-Request-Id, and Retry-After when the
 * catalog requires it. Statuses are never typed in tests: they come from spec/errors.yaml.
 */
import { expect } from 'vitest'
import type { HttpErrorCode, StatusFor } from '../../spec/index.js'
import { httpEntry, statusAllowed } from '../checks/error-envelope-conformance.js'
import type { ApiResponse } from './client.js'

export function expectError<C extends HttpErrorCode>(
  res: ApiResponse,
  code: C,
  opts: { status?: StatusFor<C>; details?: Record<string, unknown> } = {},
): {
  code: string
  message: string
  retryable: boolean
  request_id: string
  details: Record<string, unknown>
} {
  const error = (res.body as { error?: Record<string, unknown> } | undefined)?.error
  expect(
    error?.code,
    `expected ${code}, got ${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`,
  ).toBe(code)
  const entry = httpEntry(code)!
  expect(statusAllowed(entry, res.status), `${code} with status ${res.status}`).toBe(true)
  if (opts.status !== undefined) expect(res.status).toBe(opts.status)
  expect(error!.retryable).toBe(entry.retryable)
  expect(error!.request_id).toBe(res.headers['x-request-id'])
  if (opts.details) expect(error!.details).toMatchObject(opts.details)
  return error as ReturnType<typeof expectError>
}
