/**
 * The oracle of the robustness tests, for one answer: it passes the suite's response checks (checks/), it is no
 * 5xx, and unless it is 2xx it is the error envelope with error.request_id equal to X-Request-Id and
 * Cache-Control: no-store.
 */
import { expect } from 'vitest'
import { runChecks } from '../../checks/index.js'
import { findOperation } from '../../support/operations.js'
import type { RawResponse } from '../../support/raw-http.js'

export const is2xx = (res: { status: number }): boolean => res.status >= 200 && res.status < 300

export type ErrorBody = { code?: unknown; retryable?: unknown; request_id?: unknown }

export const errorOf = (res: { body: unknown }): ErrorBody | undefined =>
  (res.body as { error?: ErrorBody } | undefined)?.error

/** What a failure message quotes of an answer. */
export const show = (res: RawResponse): string =>
  `${res.status} ${String(res.headers['content-type'] ?? '')} x-request-id=${String(res.headers['x-request-id'] ?? '')}: ${res.text.slice(0, 300)}`

/** No 5xx, and unless 2xx the error envelope with request_id equal to X-Request-Id and no-store. */
export function checkEnvelope(res: RawResponse): void {
  expect(res.status, `server error: ${show(res)}`).toBeLessThan(500)
  if (is2xx(res)) return
  expect(res.headers['content-type'], `not JSON: ${show(res)}`).toMatch(/^application\/json/)
  const error = errorOf(res)
  expect(error, `no error envelope: ${show(res)}`).toBeTypeOf('object')
  expect(error!.request_id, `request_id differs from X-Request-Id: ${show(res)}`).toBe(
    res.headers['x-request-id'],
  )
  expect(res.headers['cache-control'], `no Cache-Control: no-store: ${show(res)}`).toMatch(
    /(^|,)\s*no-store\s*(,|$)/,
  )
}

/**
 * Checks one answer (see the module comment); throws on the first violation. Without `method` and `target`
 * (a request that cannot be read) no operation applies: the checks of status and body schema are skipped.
 */
export function checkAnswer(res: RawResponse, method?: string, target?: string): void {
  const path = target?.split('#')[0]
  const operation = method && path ? findOperation(method, path) : undefined
  runChecks({ method: method ?? '', path: path ?? '', operation, response: res })
  checkEnvelope(res)
}
