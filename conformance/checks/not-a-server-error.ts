/**
 * No 5xx answer except the catalog's documented server-side codes at their statuses (the 503 family). A bare
 * 500, INTERNAL_ERROR, and a catalog code at a 5xx status the catalog does not give it fail on every target.
 *
 * Retry rule 5: "A proxy may answer 502, 503 or 504 without the envelope": such an answer (isProxyAnswer of
 * types.ts) is not the service's error and not a failure, on every target; on a real target it is reported as
 * a warning (the run met a proxy, a client retries it). On a real target a 503 with a code outside the catalog
 * is a warning too ("new codes may be added"; 503 is the document's "server-side problem; follow retryable
 * and Retry-After"); any other status with an unknown code fails.
 */
import { warn } from '../support/warnings.js'
import { ConformanceFailure } from './failure.js'
import { httpEntry, inCatalog, statusAllowed } from './error-envelope-conformance.js'
import { header, isProxyAnswer, targetKind, type ResponseCheck } from './types.js'

export const notAServerError: ResponseCheck = {
  name: 'not_a_server_error',
  requirements: [],
  run(ctx) {
    const { operation, response } = ctx
    if (response.status < 500) return
    const kind = targetKind(ctx)
    const where = `${operation?.operationId ?? 'undocumented operation'} ${response.status}`
    if (isProxyAnswer(response, kind)) {
      if (kind === 'real')
        warn(
          `proxy answer ${where}`,
          `${where}: answered without the error envelope: a proxy's answer (retry rule 5), retryable for a client`,
        )
      return
    }
    const code = (response.body as { error?: { code?: unknown } } | undefined)?.error?.code
    if (
      kind === 'real' &&
      typeof code === 'string' &&
      !inCatalog(code) &&
      response.status === 503
    ) {
      warn(
        `unknown server-side code ${code} ${response.status}`,
        `${where}: error.code ${code} is not in the catalog of 1.3.0 (allowed: new codes may be added)`,
      )
      return
    }
    const entry = typeof code === 'string' ? httpEntry(code) : undefined
    if (code === 'INTERNAL_ERROR' || !entry || !statusAllowed(entry, response.status)) {
      throw new ConformanceFailure(
        this.name,
        `server error ${response.status} ${typeof code === 'string' ? code : ''}`.trim(),
        operation?.operationId,
        header(response, 'x-request-id'),
      )
    }
  },
}
